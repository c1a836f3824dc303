"""The workflow's multi-core steps: split into CNs, plan the cost table, run, pictures.

A multi-core experiment (config ``multicore_experiments``, or its alias ``stream_experiments``)
runs as:
``multicore-split`` (hardware + workload + mapping → ``cn_graph.npz``) → ``multicore-plan`` (the
distinct (CN shape, core) cost-table keys; the jobs of those not cached yet) → ``multicore-costs``
jobs, each computing a chunk of them into the cache (:mod:`zigzag.steps.chunks`) → ``multicore-run`` (allocation,
schedule, trace) → ``multicore-plot`` (pictures); ``multicore-results`` gathers every run into the multi-core
results table, its Pareto fronts and figures (see docs/reference/multicore-results.md).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.io.tables import csv_text, html_table
from zigzag.notes import collected_warnings, run_logged
from zigzag.steps.chunks import planned_chunks
from zigzag.steps.experiments import check_experiment_name
from zigzag.steps.specs import MulticoreSpec, read_multicore
from zigzag.multicore.pipeline.spec import MulticoreRun, allocation_of, search_defaults
from zigzag.multicore.plots import plot_front, plot_run
from zigzag.multicore.plots.summary_figures import metrics_png, pareto_png
from zigzag.multicore.summaries import mark_pareto, multicore_rows, summarize_run, table_columns

if TYPE_CHECKING:
    from zigzag.config import WorkflowConfig
    from zigzag.config.models import MulticoreExperiment

logger = logging.getLogger(__name__)


def resolve_multicore_experiments(config: dict | WorkflowConfig) -> dict[str, dict]:
    """The config's multi-core experiments (read once by :func:`zigzag.config.load_config` when
    a dict) with every default filled in, by name: each as its jobs read it from its spec file."""
    # read here, not at import: the jobs import this module and never read a config
    from zigzag.config import load_config

    config = load_config(config)
    out: dict[str, dict] = {}
    for i, entry in enumerate(config.multicore_experiments):
        where = f"{config.multicore_section}[{i}]"
        check_experiment_name(entry.name, where)
        if entry.name in out:
            raise InputError(
                "config", f"{where}.name", f"'{entry.name}' used twice; names must be unique"
            )
        for field in ("accelerator", "workload", "mapping"):
            path = getattr(entry, field)
            if path is not None and not Path(path).exists():
                raise InputError(
                    "config", f"{where}.{field}", f"file {path} does not exist; fix the path"
                )
        search = None if entry.search is None else entry.search.model_dump()
        if entry.mapping is None and search is None:  # the automatic mapping is allocated
            search = {**search_defaults(), "method": "co"}  # by CO, as Stream 2.x does
        mode = entry.mode
        if mode is None:
            from zigzag.multicore.automap import default_mode

            mode = default_mode(entry.mapping, entry.accelerator)
        out[entry.name] = {
            **entry.model_dump(exclude={"clock_ns"}),
            "search": search,
            "clock_ghz": _clock_ghz(entry, where),
            "mode": mode,
        }
    return out


def _clock_ghz(entry: MulticoreExperiment, where: str) -> float | None:
    """The experiment's clock: ``clock_ghz`` (the name hardware sweeps use too), or the older
    ``clock_ns`` (a period) read as 1 / ``clock_ns`` with a warning."""
    period, clock = entry.clock_ns, entry.clock_ghz
    if clock is not None:
        if period is not None:
            raise InputError(
                "config",
                f"{where}.clock_ns",
                "give clock_ghz only (clock_ns is its older spelling)",
            )
        return clock
    if period is None:
        return None
    logger.warning(
        "config: %s.clock_ns is read as clock_ghz = %g; write clock_ghz, as hardware_sweeps do",
        where,
        1.0 / period,
    )
    return 1.0 / period


def core_files(accelerator: str | Path) -> list[str]:
    """The accelerator file and every core file it uses (the files a change in reruns the costs)."""
    from zigzag.multicore.topology import load_multicore_accelerator

    hardware = load_multicore_accelerator(accelerator)
    return [str(accelerator)] + sorted({c.file for c in hardware.cores if c.file})


def _stacks(layer_stacks: str | None):
    from zigzag.multicore.tiling import parse_layer_stacks

    return None if layer_stacks is None else parse_layer_stacks(layer_stacks)


def experiment_run(exp: MulticoreSpec | dict):
    """The :class:`~zigzag.multicore.pipeline.MulticoreRun` a checked experiment describes."""
    exp = MulticoreSpec.of(exp)
    search = None if exp.search is None else dict(exp.search)
    return MulticoreRun(exp.accelerator, exp.workload, exp.mapping, exp.mode,
                        allocation_of(search), layer_stacks=_stacks(exp.layer_stacks),
                        latency_model=exp.latency_model, clock_ghz=exp.clock_ghz,
                        lpf_limit=exp.lpf_limit, prefetch=exp.prefetch,
                        name=exp.name)  # fmt: skip


def split(exp: MulticoreSpec | dict, output: str | Path) -> str:
    from zigzag.multicore.cn_graph import save_cn_graph
    from zigzag.multicore.pipeline.prepared import build_graph, has_open_cores

    exp = MulticoreSpec.of(exp)
    with collected_warnings() as notes:
        graph = build_graph(experiment_run(exp))
    if has_open_cores(graph) and not exp.search:
        raise InputError(
            exp.mapping,
            "core_allocation",
            "some layers may go to several cores; add 'search:' "
            "to the experiment to search their allocation, or fix one core per layer",
        )
    save_cn_graph(graph, output, notes)
    return f"{exp.name}: {len(graph)} CNs, {graph.nb_edges} edges"


def plan(
    exp: MulticoreSpec | dict, graph_file: str | Path, cache: str | Path, output: str | Path
) -> str:
    """Write ``output``: every cost-table key the experiment needs, and the jobs of those not
    cached yet with the chunks that compute them (``multicore-costs``)."""
    from zigzag.multicore.allocation.genes import allocation_genes
    from zigzag.multicore.cn_graph import load_cn_graph
    from zigzag.multicore.pipeline.prepared import cost_table, load_accelerator
    from zigzag.multicore.schedule.costs import node_key

    exp = MulticoreSpec.of(exp)
    graph = load_cn_graph(graph_file)
    hardware = load_accelerator(experiment_run(exp))
    table = cost_table(hardware, exp.lpf_limit, cache)
    rep = graph.cost_node()
    pairs = {(int(rep[cn]), int(graph.core[cn])) for cn in np.flatnonzero(graph.core >= 0).tolist()}
    for gene in allocation_genes(
        graph, [c.id for c in hardware.compute_cores]
    ):  # flexible layers: every candidate
        cns = np.flatnonzero((graph.layer == gene.layer) & (graph.group == gene.group)).tolist()
        pairs |= {(int(rep[cn]), core) for cn in cns for core in gene.cores}
    pairs = sorted(pairs)
    keyed = [(node_key(graph, r), core) for r, core in pairs]
    core_of = {
        table.key(node, core): core for node, core in reversed(keyed)
    }  # first core using each key
    keys = list(dict.fromkeys(table.key(node, core) for node, core in keyed))
    jobs = table.planned_jobs(keyed)
    new = list(jobs)
    write_json_atomic(
        output,
        {
            "experiment": exp.name,
            "keys": keys,
            "cores": [core_of[k] for k in keys],
            "to_compute": new,
            "chunks": planned_chunks(len(new)),
            "jobs": jobs,
        },
    )
    return f"{exp.name}: {len(keys)} distinct (CN, core) cost entries, {len(new)} not cached yet"


def cost_plan_keys(path: str | Path) -> list[str]:
    return json.loads(Path(path).read_text())["keys"]


def run(
    exp: MulticoreSpec | dict,
    graph_file: str | Path,
    cache: str | Path,
    output: str | Path,
    workers: int = 1,
) -> str:
    """Run the experiment (its CN graph saved by :func:`split`, its costs cached) through the
    multi-core pipeline, whatever its allocation; write the run folder (its summary.json with the
    notes saved with the graph and those of the run)."""
    from zigzag.multicore.cn_graph import cn_graph_notes, load_cn_graph
    from zigzag.multicore.pipeline import run_multicore

    exp = MulticoreSpec.of(exp)
    done = run_multicore(experiment_run(exp), cache=cache, graph=load_cn_graph(graph_file),
                         workers=workers, output=output,
                         notes=cn_graph_notes(graph_file))  # fmt: skip
    found, result = done.allocated, done.schedule
    figures = f"latency {result.latency:.10g} cycles, energy {result.energy:.6g} pJ"
    if found is None:
        return f"{exp.name}: {figures}"
    if done.run.allocation.method == "ga":
        return (
            f"{exp.name}: front of {found.front_size} distinct points ({len(found.front)} "
            f"allocations); chosen ({found.choose}) {figures}"
        )
    stacks = found.allocation.stacks
    return (
        f"{exp.name}: constraint optimisation of {len(stacks)} steady states "
        f"({sum(s.answer.optimal for s in stacks)} optimal); {figures}"
    )


def results(
    items: list[str], table: str | Path, html: str | Path, pareto: str | Path, metrics: str | Path
) -> str:
    """The multi-core results of several runs (``EXPERIMENT_SPEC=RUN_FOLDER`` items): the table
    (CSV and HTML, Pareto flags per workload over latency, energy and area) and its two figures."""
    summaries = []
    for item in items:
        spec, _, folder = item.partition("=")
        if not folder:
            raise InputError(None, "runs", f"'{item}' is not EXPERIMENT_SPEC=RUN_FOLDER")
        exp = read_multicore(spec)
        summaries.append(
            summarize_run(
                folder,
                exp.accelerator,
                experiment=exp.name,
                workload=exp.workload,
                mapping=exp.mapping or "automatic",
                mode=exp.mode,
                clock_ghz=exp.clock_ghz,
            )
        )
    rows = mark_pareto(multicore_rows(summaries))
    columns = table_columns(rows)
    write_text_atomic(table, csv_text(rows, columns=columns))
    write_text_atomic(html, html_table(rows, "Multi-core experiments", columns=columns))
    pareto_png(rows, pareto)
    metrics_png(rows, metrics)
    front = sum(bool(row["pareto"]) for row in rows)
    return f"{len(rows)} multi-core runs, {front} on their workload's front (latency, energy, area)"


# ----- commands (``zigzag step multicore-...``) -----------------------------------------------------


def _experiment(args) -> MulticoreSpec:
    return read_multicore(args.experiment)


def register(command) -> None:
    """Add the multi-core steps through ``command(name, func, help)`` of ``zigzag step``."""

    def cmd_split(args):
        return run_logged(args.log, lambda: split(_experiment(args), args.output))

    def cmd_plan(args):
        return run_logged(
            args.log, lambda: plan(_experiment(args), args.graph, args.cache, args.output)
        )

    def cmd_run(args):
        return run_logged(
            args.log,
            lambda: run(_experiment(args), args.graph, args.cache, args.output, args.workers),
        )

    def cmd_plot(args):
        return run_logged(
            args.log,
            lambda: (
                "written: "
                + ", ".join(
                    p.name
                    for p in plot_run(
                        args.run,
                        args.output,
                        args.format,
                        args.name,
                        pareto=not args.no_pareto,
                        plotly_js=args.plotly_js,
                    )
                )
            ),
        )

    def cmd_pareto(args):
        return run_logged(
            args.log, lambda: f"written: {plot_front(args.run, args.output, args.name)}"
        )

    def cmd_results(args):
        return run_logged(
            args.log, lambda: results(args.runs, args.table, args.html, args.pareto, args.metrics)
        )

    sub = command(
        "multicore-split", cmd_split, "multi-core: hardware + workload + mapping -> CN graph (.npz)"
    )
    sub.add_argument("--experiment", required=True, help="the multi-core experiment (JSON file)")
    sub.add_argument("--output", required=True, help="cn_graph.npz to write")
    sub = command(
        "multicore-plan",
        cmd_plan,
        "multi-core: the cost-table keys of an experiment, jobs of the uncached",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--graph", required=True, help="cn_graph.npz")
    sub.add_argument("--cache", required=True, help="content-addressed cache folder")
    sub.add_argument("--output", required=True, help="cost_plan.json to write")
    sub = command(
        "multicore-run",
        cmd_run,
        "multi-core: allocate (fixed, genetic search or constraint optimisation) and schedule "
        "the CN graph with the cached cost entries",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--graph", required=True, help="cn_graph.npz")
    sub.add_argument("--cache", required=True)
    sub.add_argument(
        "--workers", type=int, default=1, help="worker processes for a genetic search's fitness"
    )
    sub.add_argument(
        "--output",
        required=True,
        help="run folder (summary.json, schedule.csv, schedule_trace.json; a search's front.csv "
        "and allocation.yaml, a constraint optimisation's allocation.yaml and co_slots.csv)",
    )
    sub = command("multicore-plot", cmd_plot, "multi-core: the pictures of a run folder")
    sub.add_argument("run", help="run folder")
    sub.add_argument("--output", required=True, help="folder for the pictures")
    sub.add_argument("--format", default="png", choices=("png", "svg", "pdf"))
    sub.add_argument("--name", default=None, help="experiment name for titles")
    sub.add_argument(
        "--no-pareto", action="store_true", help="leave the front of a search folder out"
    )
    sub.add_argument(
        "--plotly-js", help="the shared plotly.min.js the Gantt page loads (default: beside it)"
    )
    sub = command("multicore-pareto", cmd_pareto, "multi-core: the Pareto front of a search folder")
    sub.add_argument("run", help="search folder (front.csv, summary.json)")
    sub.add_argument("--output", required=True, help="figure to write")
    sub.add_argument("--name", default=None, help="experiment name for the title")
    sub = command(
        "multicore-results",
        cmd_results,
        "multi-core: the results table, Pareto fronts and figures of runs",
    )
    sub.add_argument("runs", nargs="+", help="EXPERIMENT_SPEC=RUN_FOLDER items")
    sub.add_argument("--table", required=True, help="CSV table to write")
    sub.add_argument("--html", required=True, help="HTML view of the table to write")
    sub.add_argument(
        "--pareto", required=True, help="figure: energy against latency per workload, fronts marked"
    )
    sub.add_argument("--metrics", required=True, help="figure: every metric of every run")


__all__ = [
    "core_files",
    "cost_plan_keys",
    "plan",
    "register",
    "resolve_multicore_experiments",
    "results",
    "run",
    "split",
]
