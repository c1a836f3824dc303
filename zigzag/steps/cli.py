"""``zigzag step ...``: the workflow's file-level steps as commands (one per Snakemake rule).

Each step writes its outputs atomically. A bad input or an unmappable layer ends the step with
one line on standard error and in ``--log``, and exit status 1, so Snakemake (``--keep-going``)
finishes the other jobs.
"""

from __future__ import annotations

import argparse

from zigzag.command_options import ArgumentParser, run_command
from zigzag.notes import run_logged


def _recorder(args: argparse.Namespace, step: str, **context):
    """With ``--record-failure``: a function writing the step's failure record to its output."""
    if not getattr(args, "record_failure", False):
        return None
    from zigzag.steps.failures import write_failure

    return lambda reason: write_failure(args.output, step, reason, **context)


def cmd_parse_workload(args: argparse.Namespace) -> int:
    from zigzag.steps.parse import parse_workload

    def action():
        document = parse_workload(
            args.workload,
            args.mapping,
            args.output,
            evaluate_all_operators=args.evaluate_all_operators,
            operators=args.operators,
            causal_blocks=args.causal_blocks,
        )
        return f"{args.workload} with {args.mapping}: {len(document['processing_order'])} layers"

    return run_logged(args.log, action, _recorder(args, "parse_workload"))


def cmd_parse_accelerator(args: argparse.Namespace) -> int:
    from zigzag.steps.parse import parse_accelerator

    def action():
        document = parse_accelerator(args.accelerator, args.output)
        return f"{args.accelerator}: accelerator {document['data']['name']}"

    return run_logged(args.log, action, _recorder(args, "parse_accelerator"))


def cmd_split(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import jobs_file, split_layers
    from zigzag.steps.specs import read_experiment

    experiment = read_experiment(args.experiment)
    name = experiment.name

    def action():
        plan = split_layers(experiment, args.workload, args.accelerator, args.cache, args.output)
        if "failed" in plan:
            return f"{name}: not run, {plan['failed']['step']} failed: {plan['failed']['reason']}"
        keys = {layer["key"] for layer in plan["layers"]}
        return (
            f"{name}: {len(plan['layers'])} layers, {len(keys)} distinct layer jobs, "
            f"{len(plan.get('to_compute', []))} to search in {plan.get('chunks', 0)} chunks"
        )

    record = _recorder(args, "split_layers", experiment=experiment.to_dict())
    if record is not None and args.cache:  # a failed split plans no jobs: its jobs file is empty

        def record_failure(reason: str, first=record) -> None:
            from zigzag.io.sealed import write_sealed

            first(reason)
            write_sealed(jobs_file(args.cache, name), {"jobs": {}})

        record = record_failure
    return run_logged(args.log, action, record)


def cmd_evaluate_layers(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import evaluate_chunk

    def action():
        done = evaluate_chunk(args.plan, args.cache, args.chunk, args.output)
        failed = f", {len(done['failed'])} fit no mapping" if done["failed"] else ""
        return (
            f"{args.plan} chunk {args.chunk}: {len(done['keys'])} layers, "
            f"{len(done['searched'])} searched here{failed}"
        )

    return run_logged(args.log, action)


def cmd_multicore_costs(args: argparse.Namespace) -> int:
    from zigzag.steps.chunks import evaluate_cost_chunk

    return run_logged(
        args.log, lambda: evaluate_cost_chunk(args.plan, args.cache, args.chunk, args.output)
    )


def cmd_sum(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import sum_experiment

    def action():
        total = sum_experiment(args.plan, args.cache, args.output)
        if "failed" in total:
            return f"{total['experiment']}: not run, {total['failed']['step']} failed: {total['failed']['reason']}"
        return f"{total['experiment']}: energy {total['energy']:.10g} pJ, latency {total['latency']:.10g} cycles"

    return run_logged(args.log, action)


def cmd_save(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import save_experiment

    def action():
        summary = save_experiment(
            args.results, args.cache, args.output, float_format=args.float_format
        )
        return f"{summary['experiment']}: tables and per-layer files written to {args.output}"

    return run_logged(args.log, action)


def cmd_compare(args: argparse.Namespace) -> int:
    from zigzag.steps.pipeline import compare_experiments

    return run_logged(args.log, lambda: compare_experiments(args.experiment_dirs, args.output))


def cmd_plot_experiment(args: argparse.Namespace) -> int:
    from zigzag.steps.plots import plot_experiment

    def action():
        written = plot_experiment(args.results, args.output, args.format)
        return f"{args.results}: wrote {', '.join(str(p) for p in written.values())}"

    return run_logged(args.log, action)


def cmd_plot_accelerator(args: argparse.Namespace) -> int:
    from zigzag.steps.plots import plot_accelerator

    return run_logged(args.log, lambda: f"wrote {plot_accelerator(args.accelerator, args.output)}")


def cmd_check_experiments(args: argparse.Namespace) -> int:
    from zigzag.steps.failures import check_experiments

    def action():
        message = check_experiments(args.experiments)
        if args.output:
            from zigzag.io.atomic import write_text_atomic

            write_text_atomic(args.output, message + "\n")
        return message

    return run_logged(args.log, action)


def cmd_plot_comparison(args: argparse.Namespace) -> int:
    from zigzag.steps.plots import plot_comparison

    return run_logged(args.log, lambda: plot_comparison(args.experiments, args.output, args.pareto))


RECORD_HELP = (
    "on bad input or an unmappable layer, write a failure record to --output and succeed "
    "(the error line is printed all the same; see zigzag/steps/failures.py)"
)


def main(argv: list[str]) -> int:
    """``zigzag step ARGV...`` with the step commands' parser only (the job client runs steps so)."""
    parser = ArgumentParser(prog="zigzag")
    add_step_commands(parser.add_subparsers(dest="command", required=True))
    return run_command(parser, ["step", *argv])


def add_step_commands(subparsers) -> None:
    step = subparsers.add_parser(
        "step", help="one step of the Snakemake workflow (used by its rules)"
    )
    steps = step.add_subparsers(dest="step", required=True)
    commands = []

    def command(name: str, func, help: str):
        sub = steps.add_parser(name, help=help)
        sub.set_defaults(func=func)
        commands.append(sub)
        return sub

    sub = command(
        "parse-workload", cmd_parse_workload, "workload + mapping file -> normalised workload JSON"
    )
    sub.add_argument("workload", help="ONNX model or workload YAML")
    sub.add_argument("--mapping", required=True, help="mapping YAML")
    sub.add_argument("--evaluate-all-operators", action="store_true")
    sub.add_argument("--operators", choices=("zigzag", "all"), default="zigzag")
    sub.add_argument("--causal-blocks", type=int, default=8)
    sub.add_argument("--output", required=True, help="parsed workload JSON to write")
    sub.add_argument("--record-failure", action="store_true", help=RECORD_HELP)

    sub = command(
        "parse-accelerator",
        cmd_parse_accelerator,
        "accelerator file -> normalised accelerator JSON",
    )
    sub.add_argument("accelerator", help="accelerator YAML")
    sub.add_argument("--output", required=True, help="parsed accelerator JSON to write")
    sub.add_argument("--record-failure", action="store_true", help=RECORD_HELP)

    sub = command(
        "split", cmd_split, "write an experiment's plan: its layer jobs (one per distinct layer)"
    )
    sub.add_argument("--experiment", required=True, help="the resolved experiment (JSON file)")
    sub.add_argument("--workload", required=True, help="parsed workload JSON")
    sub.add_argument("--accelerator", required=True, help="parsed accelerator JSON")
    sub.add_argument(
        "--cache",
        help="the cache: its result store tells which layers are still to search, and the "
        "experiment's jobs go to <cache>/layer-jobs/<name>.json",
    )
    sub.add_argument("--output", required=True, help="plan.json to write")
    sub.add_argument("--record-failure", action="store_true", help=RECORD_HELP)

    sub = command(
        "evaluate-layers",
        cmd_evaluate_layers,
        "search one chunk of a plan's layers into the cache's result store",
    )
    sub.add_argument("plan", help="the experiment's plan.json")
    sub.add_argument("--chunk", required=True, help="the chunk, <i>of<n> (the plan's chunks)")
    sub.add_argument("--cache", required=True)
    sub.add_argument("--output", required=True, help="the chunk's record (JSON) to write")

    sub = command(
        "multicore-costs",
        cmd_multicore_costs,
        "multi-core cost table: compute one chunk of a cost plan's entries into the cache",
    )
    sub.add_argument("plan", help="the experiment's cost_plan.json")
    sub.add_argument("--chunk", required=True, help="the chunk, <i>of<n> (the plan's chunks)")
    sub.add_argument("--cache", required=True)
    sub.add_argument("--output", required=True, help="the chunk's record (JSON) to write")

    sub = command(
        "sum", cmd_sum, "gather an experiment's layer results and network totals (results.json)"
    )
    sub.add_argument("plan", help="the experiment's plan.json")
    sub.add_argument("--cache", required=True)
    sub.add_argument("--output", required=True, help="results.json to write")

    sub = command("save", cmd_save, "write an experiment's summary, tables and per-layer JSON")
    sub.add_argument("results", help="the experiment's results.json")
    sub.add_argument("--cache", required=True)
    sub.add_argument("--output", required=True, help="the experiment's results folder")
    sub.add_argument("--float-format", default="%.10g", help="format of floats in the tables")

    sub = command(
        "compare", cmd_compare, "tables of all experiments (experiments, layers, memory levels)"
    )
    sub.add_argument("experiment_dirs", nargs="+", help="experiment folders (as written by save)")
    sub.add_argument("--output", required=True, help="folder for the cross-experiment tables")

    from zigzag.steps.plots import PLOT_FORMATS

    sub = command(
        "check-experiments",
        cmd_check_experiments,
        "fail, naming them, when experiments of experiments.csv did not run",
    )
    sub.add_argument("experiments", help="experiments.csv (with its status and reason columns)")
    sub.add_argument("--output", help="file to write when every experiment ran")

    sub = command(
        "plot-experiment",
        cmd_plot_experiment,
        "draw an experiment's per-layer energy and latency, and write its loop nests",
    )
    sub.add_argument("results", help="the experiment's results.json (as written by sum)")
    sub.add_argument("--output", required=True, help="folder for the figure and loop_nests.txt")
    sub.add_argument(
        "--format", choices=PLOT_FORMATS, default="png", help="figure format (default png)"
    )

    sub = command(
        "plot-accelerator", cmd_plot_accelerator, "draw an accelerator's memory hierarchy"
    )
    sub.add_argument("accelerator", help="parsed accelerator JSON or accelerator YAML")
    sub.add_argument("--output", required=True, help="figure to write (format from its extension)")

    sub = command(
        "plot-comparison",
        cmd_plot_comparison,
        "energy vs latency of all experiments, Pareto front per workload",
    )
    sub.add_argument("experiments", help="experiments.csv (one row per experiment)")
    sub.add_argument("--output", required=True, help="figure to write (format from its extension)")
    sub.add_argument(
        "--pareto",
        help="CSV of the Pareto-optimal experiments of each workload "
        "(default: pareto.csv beside the experiments table)",
    )

    from zigzag.steps.multicore import register as register_multicore_steps

    register_multicore_steps(command)

    from zigzag.sweep.steps import register_steps as register_sweep_steps

    register_sweep_steps(command)

    from zigzag.report.cli import register_step as register_report_step

    register_report_step(command)

    for sub in commands:
        sub.add_argument("--log", help="also write the outcome (or the error) to this file")
