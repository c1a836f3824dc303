"""``zigzag step ...``: the workflow's file-level steps as commands (one per Snakemake rule).

Each step writes its outputs atomically. A bad input or an unmappable layer ends the step with
one line on standard error and in ``--log``, and exit status 1, so Snakemake (``--keep-going``)
finishes the other jobs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from zigzag.errors import InputError, MappingError


def _run_logged(log: str | None, action) -> int:
    """Run a step; its outcome (or its one-line error) is the last line of ``log``."""
    started = time.perf_counter()
    try:
        message = action()
        status = 0
    except (InputError, MappingError) as exc:
        message = f"error: {exc}"
        print(message, file=sys.stderr)
        status = 1
    if log:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        Path(log).write_text(f"[{time.perf_counter() - started:.2f} s]\n{message}\n")
    return status


def cmd_plan(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import plan_experiment

    def action():
        experiment = _experiment(args.experiment)
        plan = plan_experiment(experiment, args.cache, args.output)
        keys = {layer["key"] for layer in plan["layers"]}
        return f"{experiment['name']}: {len(plan['layers'])} layers, {len(keys)} distinct layer jobs"

    return _run_logged(args.log, action)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import evaluate_job

    def action():
        label = json.loads(Path(args.job).read_text()).get("label", args.job)
        try:
            best = evaluate_job(args.job, args.output, show_progress=False)
        except (InputError, MappingError) as exc:
            raise type(exc)(*_relabelled(exc, label)) from None
        return f"{label}: energy {best.energy_total:.10g} pJ, latency {best.latency_total2:.10g} cycles"

    return _run_logged(args.log, action)


def _experiment(given: str) -> dict:
    """The resolved experiment, given as JSON text or as the path of a JSON file."""
    if given.lstrip().startswith("{"):
        return json.loads(given)
    path = Path(given)
    if not path.is_file():
        raise InputError(given, None, "experiment file not found; give the resolved experiment as JSON or a JSON file")
    return json.loads(path.read_text())


def cmd_stream_cost(args: argparse.Namespace) -> int:
    from zigzag.stream.cost_table import evaluate_job_file

    def action():
        entry = evaluate_job_file(args.job, args.output)
        label = json.loads(Path(args.job).read_text()).get("label", args.job)
        return (f"{label}: latency {entry.latency:.10g} cycles, on-chip {entry.onchip_energy:.10g} pJ, "
                f"off-chip {entry.offchip_energy:.10g} pJ, streamed {list(entry.too_large_operands)}")

    return _run_logged(args.log, action)


def _relabelled(exc: Exception, label: str) -> tuple:
    if isinstance(exc, InputError):
        return exc.file, exc.where or label, exc.message
    return (f"{label}: {exc}",)


def cmd_collect(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import collect_experiment

    def action():
        summary = collect_experiment(args.plan, args.cache, args.output, float_format=args.float_format)
        return f"{summary['experiment']}: energy {summary['energy']:.10g} pJ, latency {summary['latency']:.10g} cycles"

    return _run_logged(args.log, action)


def cmd_compare(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import compare_experiments

    return _run_logged(args.log, lambda: compare_experiments(args.summaries, args.output))


def add_step_commands(subparsers) -> None:
    step = subparsers.add_parser("step", help="one step of the Snakemake workflow (used by its rules)")
    steps = step.add_subparsers(dest="step", required=True)

    plan = steps.add_parser("plan", help="parse an experiment's inputs and write its layer jobs and plan")
    plan.add_argument("--experiment", required=True, help="the resolved experiment: JSON, or a JSON file")
    plan.add_argument("--cache", required=True, help="content-addressed cache folder")
    plan.add_argument("--output", required=True, help="plan.json to write")
    plan.set_defaults(func=cmd_plan)

    evaluate = steps.add_parser("evaluate", help="search one layer job and write its best result")
    evaluate.add_argument("job", help="job file (<cache>/jobs/<key>.json)")
    evaluate.add_argument("--output", required=True, help="result file (<cache>/results/<key>.json)")
    evaluate.set_defaults(func=cmd_evaluate)

    stream_cost = steps.add_parser(
        "stream-cost", help="Stream cost table: search one (CN, core) job and write its cost entry"
    )
    stream_cost.add_argument("job", help="job file (<cache>/stream-cost/jobs/<key>.json)")
    stream_cost.add_argument("--output", required=True, help="entry file (<cache>/stream-cost/entries/<key>.json)")
    stream_cost.set_defaults(func=cmd_stream_cost)

    collect = steps.add_parser("collect", help="write an experiment's summary, layer table and per-layer JSON")
    collect.add_argument("plan", help="the experiment's plan.json")
    collect.add_argument("--cache", required=True)
    collect.add_argument("--output", required=True, help="the experiment's results folder")
    collect.add_argument("--float-format", default="%.10g", help="format of floats in layers.csv")
    collect.set_defaults(func=cmd_collect)

    compare = steps.add_parser("compare", help="one table of all experiments' totals")
    compare.add_argument("summaries", nargs="+", help="summary.json files")
    compare.add_argument("--output", required=True, help="CSV to write")
    compare.set_defaults(func=cmd_compare)

    for sub in (plan, evaluate, stream_cost, collect, compare):
        sub.add_argument("--log", help="also write the outcome (or the error) to this file")
    add_report_commands(steps)


def cmd_plot_experiment(args: argparse.Namespace) -> int:
    from zigzag.steps.report import plot_experiment

    def action():
        written = plot_experiment(args.experiment_dir, args.output, args.format, cache=args.cache)
        return f"{args.experiment_dir}: wrote {', '.join(str(p) for p in written.values())}"

    return _run_logged(args.log, action)


def cmd_plot_comparison(args: argparse.Namespace) -> int:
    from zigzag.steps.report import plot_comparison

    return _run_logged(args.log, lambda: plot_comparison(args.experiments, args.output, args.pareto))


def add_report_commands(steps) -> None:
    """Add the report steps to the sub-parsers of ``zigzag step``."""
    from zigzag.steps.report import PLOT_FORMATS

    experiment = steps.add_parser(
        "plot-experiment",
        help="draw an experiment's energy and latency breakdowns, loop nests and memory hierarchy",
    )
    experiment.add_argument("experiment_dir", help="the experiment's results folder (as written by collect)")
    experiment.add_argument("--output", required=True, help="folder for the figures and loop_nests.txt")
    experiment.add_argument("--format", choices=PLOT_FORMATS, default="png", help="figure format (default png)")
    experiment.add_argument("--cache", help="layer-job cache: the exact accelerator is read from it when possible")
    experiment.set_defaults(func=cmd_plot_experiment)

    comparison = steps.add_parser(
        "plot-comparison", help="energy vs latency of all experiments with their Pareto front"
    )
    comparison.add_argument("experiments", help="experiments.csv (one row per experiment)")
    comparison.add_argument("--output", required=True, help="figure to write (format from its extension)")
    comparison.add_argument("--pareto", help="CSV of the Pareto-optimal experiments "
                                             "(default: pareto.csv beside the experiments table)")
    comparison.set_defaults(func=cmd_plot_comparison)

    for sub in (experiment, comparison):
        sub.add_argument("--log", help="also write the outcome (or the error) to this file")
