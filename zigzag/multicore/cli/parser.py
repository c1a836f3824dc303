"""The ``multicore`` command group's parser: its commands (``nodes``, ``run``, ``search``, ``plot``)
and their options."""

from __future__ import annotations

import argparse

from zigzag.multicore.cli.commands import cmd_nodes, cmd_run, cmd_search
from zigzag.multicore.pipeline.spec import (
    CHOICES,
    LATENCY_MODELS,
    MODES,
    STREAM_GENETIC_SEARCH,
    ConstraintOptimisation,
)
from zigzag.multicore.plots.cli import add_plot_command


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
