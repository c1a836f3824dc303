"""The workflow's multi-core (Stream) steps: split into CNs, plan the cost table, schedule, pictures.

A multi-core experiment (config ``stream_experiments``) runs as:
``stream-split`` (hardware + workload + mapping → ``cn_graph.npz``) → ``stream-plan`` (the
distinct (CN shape, core) cost-table keys; the jobs of those not cached yet) → ``stream-costs``
jobs, each computing a chunk of them into the cache (:mod:`zigzag.steps.chunks`) →
``stream-schedule`` (summary, schedule, trace) → ``stream-plot`` (pictures); ``stream-results``
gathers every run into the multi-core results table, its Pareto fronts and figures (see
docs/reference/multicore-results.md).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.io.tables import csv_text, html_table
from zigzag.notes import add_notes, collected_warnings, run_logged
from zigzag.search.options import SearchOptions
from zigzag.steps.chunks import planned_chunks
from zigzag.steps.experiments import check_experiment_name, read_experiment_spec
from zigzag.multicore.plots import plot_front, plot_run
from zigzag.multicore.plots.results import metrics_png, pareto_png
from zigzag.multicore.results import mark_pareto, multicore_rows, summarize_run, table_columns
from zigzag.multicore.schedule.scheduler import schedule as run_schedule

logger = logging.getLogger(__name__)

DEFAULTS = {
    "layer_stacks": None,
    "lpf_limit": 6,
    "prefetch": [],
    "search": None,
    "clock_ns": None,
    "latency_model": "auto",  # bandwidth_bound for an LLM step, zigzag otherwise
}
LATENCY_MODELS = ("auto", "zigzag", "bandwidth_bound")
SEARCH_DEFAULTS = {
    "method": "ga",
    "individuals": 16,
    "generations": 8,
    "seed": 0,
    "choose": "latency",
    "time_limit": 600,
    "gap": 1e-4,
}
SEARCH_METHODS = ("ga", "co")


def resolve_stream_experiments(config: dict) -> dict[str, dict]:
    """The config's ``stream_experiments`` checked, with defaults filled in, by name."""
    out: dict[str, dict] = {}
    fields = {"name", "accelerator", "workload", "mapping", "mode", "clock_ghz", *DEFAULTS}
    for i, spec in enumerate(config.get("stream_experiments") or []):
        where = f"stream_experiments[{i}]"
        if not isinstance(spec, dict):
            raise InputError(
                "config", where, "must be a mapping with name, accelerator, workload, mapping, mode"
            )
        for field in ("name", "accelerator", "workload", "mapping", "mode"):
            if not isinstance(spec.get(field), str):
                raise InputError("config", f"{where}.{field}", "missing (or not a string); add it")
        unknown = sorted(set(spec) - fields)
        if unknown:
            raise InputError(
                "config",
                f"{where}.{unknown[0]}",
                f"unknown field; use one of {', '.join(sorted(fields))}",
            )
        if spec["mode"] not in ("lbl", "fused"):
            raise InputError(
                "config", f"{where}.mode", f"'{spec['mode']}' is not one of lbl, fused"
            )
        check_experiment_name(spec["name"], where)
        exp = {**DEFAULTS, **spec}
        if exp["search"] is not None:
            if not isinstance(exp["search"], dict) or set(exp["search"]) - set(SEARCH_DEFAULTS):
                raise InputError(
                    "config",
                    f"{where}.search",
                    f"a mapping with keys among {', '.join(SEARCH_DEFAULTS)}",
                )
            exp["search"] = {**SEARCH_DEFAULTS, **exp["search"]}
            if exp["search"]["method"] not in SEARCH_METHODS:
                raise InputError(
                    "config",
                    f"{where}.search.method",
                    f"'{exp['search']['method']}' is not ga (genetic search) or co (constraint optimisation)",
                )
        if exp["latency_model"] not in LATENCY_MODELS:
            raise InputError(
                "config",
                f"{where}.latency_model",
                f"{exp['latency_model']!r} is not one of {', '.join(LATENCY_MODELS)}",
            )
        clock = exp["clock_ns"]
        if clock is not None and (
            isinstance(clock, bool) or not isinstance(clock, (int, float)) or clock <= 0
        ):
            raise InputError(
                "config",
                f"{where}.clock_ns",
                f"{clock!r} is not a clock period in ns; give a number > 0",
            )
        exp["clock_ghz"] = _clock_ghz(exp, where)
        if exp["name"] in out:
            raise InputError(
                "config", f"{where}.name", f"'{exp['name']}' used twice; names must be unique"
            )
        for field in ("accelerator", "workload", "mapping"):
            if not Path(exp[field]).exists():
                raise InputError(
                    "config", f"{where}.{field}", f"file {exp[field]} does not exist; fix the path"
                )
        out[exp["name"]] = exp
    return out


def _clock_ghz(exp: dict, where: str) -> float | None:
    """The experiment's clock: ``clock_ghz`` (the name hardware sweeps use too), or the older
    ``clock_ns`` (a period) read as 1 / ``clock_ns`` with a warning; ``clock_ns`` is dropped."""
    period, clock = exp.pop("clock_ns"), exp.get("clock_ghz")
    if clock is not None:
        if isinstance(clock, bool) or not isinstance(clock, (int, float)) or clock <= 0:
            raise InputError(
                "config",
                f"{where}.clock_ghz",
                f"{clock!r} is not a clock frequency in GHz; give a number > 0",
            )
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


def _stacks(exp: dict):
    from zigzag.multicore.tiling import parse_layer_stacks

    return None if exp.get("layer_stacks") is None else parse_layer_stacks(exp["layer_stacks"])


def split(exp: dict, output: str | Path) -> str:
    from zigzag.multicore.cn_graph import save_cn_graph
    from zigzag.multicore.inputs import cn_graph_from_files

    with collected_warnings() as notes:
        graph = cn_graph_from_files(
            exp["accelerator"], exp["workload"], exp["mapping"], exp["mode"], _stacks(exp)
        )
    if len(graph) and graph.core.min() < 0 and not exp.get("search"):
        raise InputError(
            exp["mapping"],
            "core_allocation",
            "some layers may go to several cores; add 'search:' "
            "to the experiment to search their allocation, or fix one core per layer",
        )
    save_cn_graph(graph, output, notes)
    return f"{exp['name']}: {len(graph)} CNs, {graph.nb_edges} edges"


def _table(exp: dict, cache: str | Path):
    from zigzag.multicore.cost_table import CostTable
    from zigzag.multicore.topology import load_multicore_accelerator

    hardware = load_multicore_accelerator(exp["accelerator"])
    table = CostTable.for_accelerator(
        hardware, options=SearchOptions(opt="latency", lpf_limit=exp["lpf_limit"]), cache=cache
    )
    return hardware, table


def plan(exp: dict, graph_file: str | Path, cache: str | Path, output: str | Path) -> str:
    """Write ``output``: every cost-table key the experiment needs, and the jobs of those not
    cached yet with the chunks that compute them (``stream-costs``)."""
    from zigzag.multicore.allocation.genes import allocation_genes
    from zigzag.multicore.cn_graph import load_cn_graph
    from zigzag.multicore.schedule.costs import node_key

    graph = load_cn_graph(graph_file)
    hardware, table = _table(exp, cache)
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
            "experiment": exp["name"],
            "keys": keys,
            "cores": [core_of[k] for k in keys],
            "to_compute": new,
            "chunks": planned_chunks(len(new)),
            "jobs": jobs,
        },
    )
    return f"{exp['name']}: {len(keys)} distinct (CN, core) cost entries, {len(new)} not cached yet"


def cost_plan_keys(path: str | Path) -> list[str]:
    return json.loads(Path(path).read_text())["keys"]


def schedule(exp: dict, graph_file: str | Path, cache: str | Path, output: str | Path) -> str:
    """Schedule the experiment's CN graph with the cached cost entries; write the run folder
    (its summary.json with the notes saved with the graph)."""
    from zigzag.multicore.cn_graph import cn_graph_notes, load_cn_graph
    from zigzag.multicore.schedule.adapter import problem_from_cn_graph
    from zigzag.multicore.schedule.costs import cn_costs
    from zigzag.multicore.schedule.tokens import resolve_latency_model

    graph = load_cn_graph(graph_file)
    hardware, table = _table(exp, cache)
    costs = cn_costs(graph, table)
    result = run_schedule(
        problem_from_cn_graph(
            graph,
            hardware,
            costs,
            prefetch=tuple(exp["prefetch"]),
            name=exp["name"],
            latency_model=resolve_latency_model(exp["latency_model"], exp["workload"]),
        )
    )
    with (
        collected_warnings() as notes
    ):  # the DRAM link's warning, if it moves more than it can carry
        result.write(output)
    _token_figures(result, exp, hardware, output)
    add_notes(Path(output) / "summary.json", cn_graph_notes(graph_file) + notes)
    return f"{exp['name']}: latency {result.latency:.10g} cycles, energy {result.energy:.6g} pJ ({table.computed} entries computed here)"


def _token_figures(result, exp: dict, hardware, output: str | Path) -> None:
    """``per_token`` in the run's summary.json when the workload is a transformer step (seconds
    with the experiment's ``clock_ghz``, else the accelerator file's)."""
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.schedule.run import write_token_figures
    from zigzag.multicore.schedule.tokens import accelerator_clock

    if exp.get("clock_ghz") is not None:
        clock = exp["clock_ghz"]
    else:
        clock = accelerator_clock(hardware or load_multicore_accelerator(exp["accelerator"]))
    write_token_figures(result, exp["workload"], output, clock)


def search(exp: dict, cache: str | Path, output: str | Path, workers: int = 1) -> str:
    """Search the experiment's allocation (NSGA-II) with the cached cost entries; write the run folder
    (``front.csv``, ``allocation.yaml`` and the chosen point's summary, schedule and trace)."""
    from zigzag.multicore.allocation.search import search_allocation

    opts = exp["search"]
    with collected_warnings() as notes:
        found = search_allocation(
            exp["accelerator"],
            exp["workload"],
            exp["mapping"],
            exp["mode"],
            _stacks(exp),
            individuals=opts["individuals"],
            generations=opts["generations"],
            seed=opts["seed"],
            workers=workers,
            choose=opts["choose"],
            lpf_limit=exp["lpf_limit"],
            cache=cache,
            operands_to_prefetch=exp["prefetch"],
            latency_model=exp["latency_model"],
        )
        found.write(output)
    _token_figures(found.fixed_schedule(), exp, found.accelerator, output)
    add_notes(Path(output) / "summary.json", notes)
    chosen = found.as_run()
    return (
        f"{exp['name']}: front of {found.front_size} distinct points ({len(found.front)} allocations); "
        f"chosen ({opts['choose']}) latency {chosen.latency:.10g} cycles, energy {chosen.energy:.6g} pJ"
    )


def constraint_optimisation(exp: dict, cache: str | Path, output: str | Path) -> str:
    """Allocate the experiment's layers by constraint optimisation (cached cost entries) and schedule
    the allocation; write the run folder (``allocation.yaml``, ``co_slots.csv``, summary, schedule, trace)."""
    from zigzag.multicore.allocation.optimize import optimize_co

    opts = exp["search"]
    with collected_warnings() as notes:
        found = optimize_co(
            exp["accelerator"],
            exp["workload"],
            exp["mapping"],
            exp["mode"],
            _stacks(exp),
            time_limit=opts["time_limit"],
            gap=opts["gap"],
            lpf_limit=exp["lpf_limit"],
            cache=cache,
            operands_to_prefetch=exp["prefetch"],
            output=output,
            latency_model=exp["latency_model"],
        )
    _token_figures(found.schedule, exp, None, output)
    add_notes(Path(output) / "summary.json", notes)
    stacks = found.allocation.stacks
    return (
        f"{exp['name']}: constraint optimisation of {len(stacks)} steady states "
        f"({sum(s.answer.optimal for s in stacks)} optimal); latency {found.schedule.latency:.10g} cycles, "
        f"energy {found.schedule.energy:.6g} pJ"
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
        exp = read_experiment_spec(spec)
        summaries.append(
            summarize_run(
                folder,
                exp["accelerator"],
                experiment=exp["name"],
                workload=exp["workload"],
                mapping=exp["mapping"],
                mode=exp["mode"],
                clock_ghz=exp.get("clock_ghz"),
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


# ----- commands (``zigzag step stream-...``) -----------------------------------------------------


def _experiment(args) -> dict:
    return read_experiment_spec(args.experiment)


def register(command) -> None:
    """Add the stream steps through ``command(name, func, help)`` of ``zigzag step``."""

    def cmd_split(args):
        return run_logged(args.log, lambda: split(_experiment(args), args.output))

    def cmd_plan(args):
        return run_logged(
            args.log, lambda: plan(_experiment(args), args.graph, args.cache, args.output)
        )

    def cmd_schedule(args):
        return run_logged(
            args.log, lambda: schedule(_experiment(args), args.graph, args.cache, args.output)
        )

    def cmd_search(args):
        return run_logged(
            args.log, lambda: search(_experiment(args), args.cache, args.output, args.workers)
        )

    def cmd_co(args):
        return run_logged(
            args.log, lambda: constraint_optimisation(_experiment(args), args.cache, args.output)
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
        "stream-split", cmd_split, "multi-core: hardware + workload + mapping -> CN graph (.npz)"
    )
    sub.add_argument("--experiment", required=True, help="the stream experiment (JSON file)")
    sub.add_argument("--output", required=True, help="cn_graph.npz to write")
    sub = command(
        "stream-plan",
        cmd_plan,
        "multi-core: the cost-table keys of an experiment, jobs of the uncached",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--graph", required=True, help="cn_graph.npz")
    sub.add_argument("--cache", required=True, help="content-addressed cache folder")
    sub.add_argument("--output", required=True, help="cost_plan.json to write")
    sub = command(
        "stream-schedule",
        cmd_schedule,
        "multi-core: schedule the CN graph with the cached cost entries",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--graph", required=True, help="cn_graph.npz")
    sub.add_argument("--cache", required=True)
    sub.add_argument(
        "--output",
        required=True,
        help="run folder (summary.json, schedule.csv, schedule_trace.json)",
    )
    sub = command(
        "stream-search",
        cmd_search,
        "multi-core: search the allocation (NSGA-II) with the cached entries",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--cache", required=True)
    sub.add_argument(
        "--workers", type=int, default=1, help="worker processes for the fitness evaluations"
    )
    sub.add_argument(
        "--output", required=True, help="run folder (front.csv, allocation.yaml, summary.json, ...)"
    )
    sub = command(
        "stream-co",
        cmd_co,
        "multi-core: allocate by constraint optimisation with the cached entries",
    )
    sub.add_argument("--experiment", required=True)
    sub.add_argument("--cache", required=True)
    sub.add_argument(
        "--output",
        required=True,
        help="run folder (allocation.yaml, co_slots.csv, summary.json, ...)",
    )
    sub = command("stream-plot", cmd_plot, "multi-core: the pictures of a run folder")
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
    sub = command("stream-pareto", cmd_pareto, "multi-core: the Pareto front of a search folder")
    sub.add_argument("run", help="search folder (front.csv, summary.json)")
    sub.add_argument("--output", required=True, help="figure to write")
    sub.add_argument("--name", default=None, help="experiment name for the title")
    sub = command(
        "stream-results",
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
    "resolve_stream_experiments",
    "results",
    "schedule",
    "search",
    "split",
]
