"""``zigzag multicore ...`` (alias ``zigzag stream ...``): the multi-core commands.

``zigzag multicore nodes`` builds the computation-node graph of a workload on a multi-core
accelerator and writes it as ``cn_graph.npz`` (for the next steps), ``cn_graph.csv`` (one row
per CN) and ``cn_graph.png`` (small graphs). ``zigzag multicore run`` also costs and schedules the
CNs and writes ``summary.json`` and ``schedule.csv``. ``zigzag multicore search`` searches the
allocation of flexible layers to cores and writes the Pareto front (``front.csv``), the chosen
allocation as a fixed mapping (``allocation.yaml``) and its ``summary.json``/``schedule.csv``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.destinations import check_output_folder
from zigzag.multicore.pipeline.spec import (
    CHOICES,
    LATENCY_MODELS,
    MODES,
    STREAM_GENETIC_SEARCH,
    ConstraintOptimisation,
)
from zigzag.multicore.plots.cli import add_plot_command, plot_after_run


def add_multicore_commands(sub: argparse._SubParsersAction) -> None:
    """Register the ``multicore`` command group (alias ``stream``) on the top-level parser."""
    from zigzag.command_options import add_quiet

    group = sub.add_parser(
        "multicore",
        aliases=["stream"],
        help="multi-core accelerators (Stream): computation nodes, scheduling, allocation "
        "(alias: zigzag stream)",
        description="Multi-core commands (Stream's model); `zigzag stream ...` is the same.",
    )
    commands = group.add_subparsers(dest="multicore_command", required=True)
    nodes = commands.add_parser(
        "nodes",
        help="split a workload into computation nodes (CNs) and their dependencies",
        description="Parse ACCELERATOR (Stream multi-core YAML), WORKLOAD (ONNX) and MAPPING (Stream mapping YAML), "
        "cut every layer into computation nodes and connect them; write cn_graph.npz, cn_graph.csv and "
        "cn_graph.png to OUTPUT.",
    )
    nodes.add_argument(
        "--accelerator", required=True, help="multi-core accelerator YAML (Stream format)"
    )
    nodes.add_argument(
        "--workload",
        required=True,
        help="ONNX model (weights may be missing: only shapes are read)",
    )
    nodes.add_argument(
        "--mapping", required=True, help="Stream mapping YAML (needs a 'default' entry)"
    )
    nodes.add_argument(
        "--mode",
        required=True,
        choices=MODES,
        help="lbl: layer by layer; fused: layers of a stack are cut into rows and interleaved",
    )
    nodes.add_argument(
        "--layer-stacks",
        default=None,
        help="fused mode: stacks of layer ids, e.g. '0-10;11-21' (other layers alone); "
        "default: fuse until the weights fill the cores",
    )
    nodes.add_argument("--output", required=True, help="output folder")
    nodes.add_argument(
        "--cwd",
        default=None,
        help="folder core files are looked up from, as Stream does (default: working directory)",
    )
    nodes.add_argument(
        "--seed-options",
        default=None,
        help='JSON of the seed\'s CN options, e.g. \'{"cn_define_mode": 1, "hint_loops": '
        '[["OY", "all"]]}\' (also layer_cutoffs, split_W_percentage)',
    )
    nodes.add_argument(
        "--split-layers",
        default=None,
        help="split Conv/Gemm layers along output channels first: 'NODE_NAME=N,...'",
    )
    nodes.add_argument(
        "--split-W-fraction",
        type=float,
        default=None,
        help="split every Conv/Gemm whose weights exceed this fraction of its cores' weight memory "
        "(0.5 = double-buffered)",
    )
    nodes.add_argument("--no-picture", action="store_true", help="skip cn_graph.png")
    add_quiet(nodes)
    _add_max_cns(nodes)
    nodes.set_defaults(func=_limited(cmd_nodes))

    run = commands.add_parser(
        "run",
        help="schedule a workload on a multi-core accelerator (latency, energy, per-CN schedule)",
        description="Cut the workload into computation nodes, cost each on its core (cost table, cached) and "
        "schedule them as Stream does; write summary.json and schedule.csv to OUTPUT.",
    )
    _add_inputs(run, "Stream mapping YAML (one fixed core per layer)")
    _add_cost_options(run)
    run.add_argument(
        "--plots", action="store_true", help="also draw the run's pictures into OUTPUT/plots"
    )
    add_quiet(run)
    _add_max_cns(run)
    run.set_defaults(func=_limited(cmd_run))
    add_plot_command(commands)

    search = commands.add_parser(
        "search",
        help="search the layer-to-core allocation (NSGA-II on energy and latency, or constraint optimisation)",
        description="Allocate every flexible (layer, group) of the workload to one of its mapping's candidate cores "
        "with a seeded multi-objective genetic algorithm (NSGA-II, --method ga); write OUTPUT/front.csv (the Pareto "
        "front's distinct points), OUTPUT/allocation.yaml (the chosen point as a fixed mapping) and its summary.json "
        "and schedule.csv. With --method co, Stream's constraint-optimisation allocation instead (steady state of "
        "each layer stack solved exactly with OR-Tools CP-SAT; layers may be split along their inter-core tiling "
        "over several cores): OUTPUT/allocation.yaml, co_slots.csv, summary.json and schedule.csv.",
    )
    _add_inputs(search, "Stream mapping YAML (layers listing several cores are searched)")
    search.add_argument(
        "--method",
        default="ga",
        choices=("ga", "co"),
        help="ga: genetic search of the Pareto front (default); co: constraint optimisation",
    )
    co, ga = ConstraintOptimisation(), STREAM_GENETIC_SEARCH
    search.add_argument(
        "--time-limit",
        type=float,
        default=float(co.time_limit),
        help=f"co: seconds per layer stack's solve (default {co.time_limit:g}, as Stream)",
    )
    search.add_argument(
        "--gap",
        type=float,
        default=co.gap,
        help=f"co: relative optimality gap at which a solve stops (default {co.gap:g})",
    )
    search.add_argument(
        "--individuals",
        type=int,
        default=ga.individuals,
        help=f"population size (default {ga.individuals}, as Stream)",
    )
    search.add_argument(
        "--generations",
        type=int,
        default=ga.generations,
        help=f"generations (default {ga.generations}, as Stream)",
    )
    search.add_argument(
        "--seed",
        type=int,
        default=ga.seed,
        help=f"random seed (same seed, same front; default {ga.seed})",
    )
    search.add_argument(
        "--workers", type=int, default=1, help="processes evaluating schedules (default 1)"
    )
    search.add_argument(
        "--choose",
        default=ga.choose,
        choices=CHOICES,
        help="which front point to save as allocation.yaml (default: lowest latency, as Stream)",
    )
    _add_cost_options(search)
    add_quiet(search)
    _add_max_cns(search)
    search.set_defaults(func=_limited(cmd_search))


def _add_max_cns(parser: argparse.ArgumentParser) -> None:
    """``--max-cns``: the CN-count limit (docs/reference/multicore-mapping.md#how-many-computation-nodes)."""
    from zigzag.multicore.cn_limit import CN_WARNING, DEFAULT_MAX_CNS

    parser.add_argument(
        "--max-cns",
        type=int,
        default=DEFAULT_MAX_CNS,
        help=f"refuse a tiling that makes more computation nodes than this, before building them "
        f"(default {DEFAULT_MAX_CNS}; above {CN_WARNING} a warning says how to coarsen it)",
    )


def _limited(command):
    """``command`` run under its ``--max-cns`` limit."""

    def run(args: argparse.Namespace) -> int:
        from zigzag.multicore.cn_limit import cn_limit

        with cn_limit(args.max_cns):
            return command(args)

    return run


def _run(args: argparse.Namespace, allocation, command: str):
    """The run the command's arguments describe."""
    from zigzag.multicore.pipeline import MulticoreRun
    from zigzag.multicore.tiling import parse_layer_stacks

    if args.clock_ghz is not None and not args.clock_ghz > 0:
        raise InputError(
            command,
            "--clock-ghz",
            f"{args.clock_ghz} is not a clock frequency in GHz; give a number > 0, e.g. 1",
        )
    stacks = None if args.layer_stacks is None else parse_layer_stacks(args.layer_stacks)
    if args.mode is None:
        from zigzag.multicore.automap import default_mode

        args.mode = default_mode(args.mapping, args.accelerator)
    return MulticoreRun(args.accelerator, args.workload, args.mapping, args.mode, allocation,
                        layer_stacks=stacks, latency_model=args.latency_model, clock_ghz=args.clock_ghz,
                        lpf_limit=args.lpf_limit,
                        prefetch=tuple(op.strip() for op in args.prefetch.split(",") if op.strip()),
                        cwd=args.cwd)  # fmt: skip


def _execute(args: argparse.Namespace, run, **options):
    """The run through the pipeline, its folder written to ``--output`` with its notes."""
    from zigzag.multicore.pipeline import run_multicore

    return run_multicore(run, cache=_cache(args), cost_lut_path=args.cost_lut_path,
                         output=args.output, notes=[], **options)  # fmt: skip


def cmd_run(args: argparse.Namespace) -> int:
    check_output_folder(args.output)  # before any work
    from zigzag.multicore.pipeline import FixedAllocation

    if args.mapping is None:  # the automatic mapping: the constraint optimisation allocates it
        from zigzag.multicore.pipeline import ConstraintOptimisation

        return _search_co(args, _run(args, ConstraintOptimisation(), "zigzag multicore run"))
    run = _run(args, FixedAllocation(), "zigzag multicore run")
    begin = time.perf_counter()
    summary = _execute(args, run).schedule.summary()
    print(
        f"{summary['nb_cns']} CNs, {summary['nb_edges']} edges: latency {summary['latency']} cycles, "
        f"energy {summary['energy']:.6g} pJ{_demand(summary)} ({time.perf_counter() - begin:.1f} s)"
    )
    _print_tokens(args.output)
    print(f"written: {Path(args.output) / 'summary.json'}, {Path(args.output) / 'schedule.csv'}")
    if args.plots:
        plot_after_run(args.output)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    check_output_folder(args.output)  # before any work
    from zigzag.multicore.pipeline import ConstraintOptimisation, GeneticSearch

    if args.method == "co":
        run = _run(
            args, ConstraintOptimisation(args.time_limit, args.gap), "zigzag multicore search"
        )
        return _search_co(args, run)
    if args.individuals < 2 or args.generations < 0 or args.workers < 1:
        raise InputError(
            None,
            "--individuals/--generations/--workers",
            "need at least 2 individuals, 0 or more generations and 1 or more workers",
        )
    method = GeneticSearch(args.individuals, args.generations, args.seed, args.choose)
    run = _run(args, method, "zigzag multicore search")
    from zigzag.multicore.allocation.nsga import print_generation

    bar = None
    if (
        not args.quiet and sys.stderr.isatty()
    ):  # no progress bar in a redirected output (a log file)
        from tqdm import tqdm

        bar = tqdm(total=args.generations, file=sys.stderr, desc="allocation search", unit="gen")

    def progress(generation: int, front) -> None:
        if args.quiet:
            return
        print_generation(generation, front, stream=_TqdmStream() if bar is not None else sys.stderr)
        if bar is not None and generation:
            bar.update(1)

    begin = time.perf_counter()
    try:
        done = _execute(args, run, workers=args.workers, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    found, fixed = done.allocated, done.schedule
    chosen = found.chosen
    print(
        f"{len(found.genes)} genes, {found.stats.evaluations} schedules in {found.stats.seconds:.1f} s; "
        f"front of {found.front_size} distinct points from {len(found.front)} allocations "
        f"({time.perf_counter() - begin:.1f} s in all)"
    )
    print(
        f"chosen ({args.choose}): latency {fixed.latency:.10g} cycles, energy {fixed.energy:.6g} pJ"
        f"{_demand(fixed.summary())} (what `zigzag multicore run` of allocation.yaml gives; the search's fitness with Stream's genetic-"
        f"allocation runtimes: latency {chosen.latency:.10g}, energy {chosen.energy:.6g} pJ)"
    )
    _print_tokens(args.output)
    out = Path(args.output)
    print(
        f"written: {out / 'front.csv'}, {out / 'allocation.yaml'}, {out / 'summary.json'}, {out / 'schedule.csv'}"
    )
    return 0


def _search_co(args: argparse.Namespace, run) -> int:
    begin = time.perf_counter()
    done = _execute(args, run)
    found, result = done.allocated, done.schedule
    if not args.quiet:
        for index, stack in enumerate(found.allocation.stacks):
            print(
                f"stack {index} (layers {stack.state.stack[0]}..{stack.state.stack[-1]}): "
                f"{len(stack.state.cns)} steady-state CNs x {stack.state.iterations}, objective "
                f"{stack.answer.objective} cycles ({stack.answer.status.lower()}, {stack.answer.seconds:.2f} s)"
            )
    print(
        f"constraint optimisation: latency {result.latency:.10g} cycles, energy "
        f"{result.energy:.6g} pJ{_demand(result.summary())} "
        f"({time.perf_counter() - begin:.1f} s in all)"
    )
    _print_tokens(args.output)
    out = Path(args.output)
    print(
        f"written: {out / 'allocation.yaml'}, {out / 'co_slots.csv'}, {out / 'summary.json'}, {out / 'schedule.csv'}"
    )
    return 0


def _demand(summary: dict) -> str:
    """The run line's DRAM link figure: bits moved over what the busiest DRAM link can carry."""
    demand = summary.get("dram_link_demand")
    if demand is None or demand != demand or not demand:  # no DRAM link, or streamed bits unknown
        return ""
    flag = (
        " (above 1: not reachable, see the warning)"
        if summary.get("dram_link_overcommitted")
        else ""
    )
    return f", DRAM link demand {demand:.3f}{flag} [{summary.get('latency_model', 'zigzag')}]"


def _print_tokens(output: str) -> None:
    """The per-token line of a transformer step's run (from its summary.json)."""
    tokens = json.loads((Path(output) / "summary.json").read_text()).get("per_token")
    if not tokens:
        return
    step = "time to first token" if tokens["phase"] == "prefill" else "time per output token"
    seconds = (
        ""
        if tokens.get("step_s") is None
        else f" = {tokens['step_s'] * 1e3:.6g} ms at {tokens['clock_ghz']:g} GHz ({tokens['tokens_per_s']:.6g} tokens/s)"
    )
    print(
        f"{tokens['phase']} step ({tokens['batch']} x {tokens['tokens']} tokens, context {tokens['context']}): "
        f"{step} {tokens['step_cycles']:.10g} cycles{seconds}, {tokens['energy_per_token_pJ']:.6g} pJ per token; "
        f"DRAM link busy {tokens['dram_link_busy_share']:.0%} of the step, moving "
        f"{tokens['dram_link_demand']:.0%} of what it can carry"
        + (f"; {tokens['bound_note']}" if tokens.get("bound_note") else "")
    )


class _TqdmStream:
    """A file-like object printing through tqdm (lines above the progress bar, on stderr)."""

    def write(self, text: str) -> None:
        from tqdm import tqdm

        if text.strip():
            tqdm.write(text.rstrip("\n"), file=sys.stderr)

    def flush(self) -> None:
        pass


def _seed(text: str | None):
    from zigzag.multicore.tiling import SeedTiling

    if text is None:
        return None
    try:
        options = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            None, "--seed-options", f"not valid JSON ({exc.msg}); e.g. '{{\"cn_define_mode\": 1}}'"
        ) from None
    allowed = {"cn_define_mode", "hint_loops", "layer_cutoffs", "split_W_percentage"}
    if not isinstance(options, dict) or set(options) - allowed:
        raise InputError(
            None,
            "--seed-options",
            f"must be a JSON object with keys among {', '.join(sorted(allowed))}",
        )
    return SeedTiling(**options)


def _splits(text: str | None) -> dict[str, int] | None:
    if not text:
        return None
    splits = {}
    for item in text.split(","):
        name, _, factor = item.rpartition("=")
        if not name or not factor.strip().isdigit() or int(factor) < 1:
            raise InputError(
                None, "--split-layers", f"'{item}' is not NODE_NAME=N (N a positive integer)"
            )
        splits[name.strip()] = int(factor)
    return splits


def _cache(args: argparse.Namespace) -> Path:
    """The cost-entry cache folder: ``--cache``, or ``.cache`` inside the output folder."""
    return Path(args.output) / ".cache" if args.cache is None else Path(args.cache)


def _add_inputs(parser: argparse.ArgumentParser, mapping_help: str) -> None:
    """The inputs of ``run`` and ``search``: accelerator, workload, mapping, mode, stacks, output folder."""
    parser.add_argument(
        "--accelerator", required=True, help="multi-core accelerator YAML (Stream format)"
    )
    parser.add_argument("--workload", required=True, help="ONNX model (only shapes are read)")
    parser.add_argument(
        "--mapping",
        default=None,
        help=f"{mapping_help}, either format (Stream 2.x's too); omitted: the automatic mapping "
        "(written to OUTPUT/automatic_mapping.yaml), allocated by constraint optimisation in run",
    )
    parser.add_argument(
        "--mode",
        default=None,
        choices=MODES,
        help="layer by layer, or fused stacks (default: fused for a Stream 2.x mapping with "
        "fused_groups, else lbl)",
    )
    parser.add_argument(
        "--layer-stacks", default=None, help="fused mode: e.g. '0-10;11-21' (other layers alone)"
    )
    parser.add_argument("--output", required=True, help="output folder")
    parser.add_argument(
        "--cwd", default=None, help="folder core files are looked up from, as Stream does"
    )


def _add_cost_options(parser: argparse.ArgumentParser) -> None:
    """The cost-table options of ``run`` and ``search``."""
    parser.add_argument(
        "--lpf-limit", type=int, default=6, help="LOMA loop prime factor limit (default 6)"
    )
    parser.add_argument(
        "--prefetch", default="", help="layer operands sent to their cores first, e.g. 'W'"
    )
    parser.add_argument(
        "--cache",
        default=None,
        help="folder of cached cost-table entries (default: OUTPUT/.cache); give one shared folder "
        "to reuse the costs across runs",
    )
    parser.add_argument(
        "--cost-lut-path", default=None, help="also read/write the whole cost table as this file"
    )
    parser.add_argument(
        "--clock-ghz",
        type=float,
        default=None,
        help="clock frequency, for a transformer step's per-token figures in seconds "
        "(default: the accelerator file's clock_ghz, else cycles only)",
    )
    parser.add_argument(
        "--latency-model",
        default="auto",
        choices=LATENCY_MODELS,
        help="auto (default): bandwidth_bound for an LLM step, zigzag otherwise; zigzag: Stream's "
        "link model; bandwidth_bound: a CN streaming operands from DRAM lasts at least its DRAM "
        "bits over the link bandwidth it gets",
    )


def cmd_nodes(args: argparse.Namespace) -> int:
    check_output_folder(args.output)  # before any work
    from zigzag.io.atomic import atomic_target
    from zigzag.multicore.cn_graph import save_cn_graph
    from zigzag.multicore.export import MAX_DRAWN_CNS, cn_table, draw_cn_graph
    from zigzag.multicore.pipeline import MulticoreRun
    from zigzag.multicore.pipeline.prepared import build_graph
    from zigzag.multicore.tiling import parse_layer_stacks

    stacks = None if args.layer_stacks is None else parse_layer_stacks(args.layer_stacks)
    begin = time.perf_counter()
    run = MulticoreRun(args.accelerator, args.workload, args.mapping, args.mode, layer_stacks=stacks,
                       cwd=args.cwd, seed_tiling=_seed(args.seed_options),
                       layer_splits=_splits(args.split_layers) or (),
                       split_W_fraction=args.split_W_fraction)  # fmt: skip
    graph = build_graph(run)
    seconds = time.perf_counter() - begin
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    save_cn_graph(graph, out / "cn_graph.npz")
    with atomic_target(out / "cn_graph.csv") as tmp:
        cn_table(graph).to_csv(tmp, index=False)
    drawn = not args.no_picture and len(graph) <= MAX_DRAWN_CNS
    if drawn:
        with atomic_target(out / "cn_graph.png") as tmp:
            draw_cn_graph(graph, tmp)
    print(
        f"{len(graph)} CNs in {len(graph.layers)} layers, {graph.nb_edges} edges "
        f"({graph.nb_intra_layer_edges} intra-layer), {len(graph.stacks)} stacks; built in {seconds:.2f} s"
    )
    print(
        f"written: {out / 'cn_graph.npz'}, {out / 'cn_graph.csv'}"
        + (f", {out / 'cn_graph.png'}" if drawn else "")
    )
    return 0
