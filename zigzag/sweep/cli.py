"""``zigzag sweep``: a hardware sweep from the command line.

    zigzag sweep --base inputs/hardware/flow_tpu_32x32.yaml \\
        --vary 'memories.unified_buffer.size=[1MiB,3MiB]' --workload inputs/workload/resnet18.onnx \\
        --mapping inputs/mapping/flow_tpu_32x32.yaml --output results/ub_sweep

    zigzag sweep --multicore --base inputs/stream/hardware/tpu_like_mesh_pooling.yaml \\
        --vary 'mesh.cols=[1,2,4]' --workload inputs/stream/workload/resnet18.onnx \\
        --mapping inputs/stream/mapping/mesh_all_cores.yaml --mode lbl --output results/mesh_sweep

Flags build the same sweep as a ``hardware_sweeps`` entry of the workflow config (see
docs/reference/sweeps.md); ``--config FILE --name NAME`` runs one entry of such a config instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zigzag.errors import InputError
from zigzag.sweep.flags import as_flag, sweep_from_args, with_search_flags
from zigzag.sweep.steps import nothing_ok_line


def cmd_sweep(args: argparse.Namespace) -> int:
    from zigzag.command_options import options_from_args
    from zigzag.mapping_search.options import OPTIONS
    from zigzag.sweep.config import read_sweep
    from zigzag.io.destinations import check_output_folder
    from zigzag.sweep.api import run_sweep
    from zigzag.sweep.runner import check_varied_values, variants_of

    section = with_search_flags(sweep_from_args(args), args)
    options = {o.name: getattr(args, o.name) for o in OPTIONS if getattr(args, o.name) is not None}
    options_from_args(args)  # checks the flags' values
    if section.get("kind") == "multicore" and options:
        raise InputError(
            "zigzag sweep",
            f"--{next(iter(options)).replace('_', '-')}",
            "is a single-core search option, not used by multi-core sweeps; remove it",
        )
    try:
        sweep = read_sweep({**section, **options}, args.config or "zigzag sweep")
    except InputError as exc:
        raise exc if args.config else as_flag(exc) from None
    check_output_folder(args.output)  # before any variant is evaluated
    if sweep.search is None:
        check_varied_values(sweep, variants_of(sweep), args.config or "zigzag sweep")
    rows = run_sweep(sweep, args.output, cache=args.cache, plot_format=args.plot_format)
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    for row in () if args.quiet else rows:
        figures = (
            f"energy {row['energy_pJ']:.4g} pJ, latency {row['latency_cycles']:.4g} cycles"
            if row.get("energy_pJ") is not None
            else row["reason"]
        )
        if row.get("tpot_s") is not None or row.get("ttft_s") is not None:
            first = row.get("ttft_s")
            figures += (
                f", time to first token {first * 1e3:.4g} ms"
                if first is not None
                else f", time per output token {row['tpot_s'] * 1e3:.4g} ms"
            ) + f", {row['energy_per_token_J']:.4g} J per token"
        if row.get("bound_ratio") is not None:
            figures += f", {row['bound_ratio']:.3f} x the {row['bound_term']} bound"
            if row.get("bound_note"):
                figures += f" ({row['bound_note']})"
        from zigzag.sweep.tables import group_of

        print(f"{row['variant']:<40} {group_of(row):<20} {row['status']:<10} {figures}")
    print(
        f"\n{len(rows)} rows ({', '.join(f'{n} {s}' for s, n in counts.items())}); "
        f"tables and figures written to {args.output}"
    )
    if sweep.search is not None:
        stats = json.loads((Path(args.output) / "search.json").read_text())
        print(
            f"search: {stats['evaluations']} of {stats['grid_size']} variants evaluated in "
            f"{stats['generations']} generations; front of {stats['front_size']} in "
            f"{Path(args.output) / 'search_front.csv'}"
        )
    nothing_ok = nothing_ok_line(rows, sweep.constraints)
    if nothing_ok is not None:
        print(f"error: {sweep.name}: {nothing_ok}", file=sys.stderr)
        return 1
    failed = [f"{r['variant']} on {r['workload']}" for r in rows if r["status"] == "failed"]
    if failed:
        print(f"error: {len(failed)} points failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def add_sweep_command(sub) -> None:
    """The ``zigzag sweep`` sub-command."""
    from zigzag.command_options import add_quiet, add_search_options

    sweep = sub.add_parser(
        "sweep",
        help="evaluate variants of an accelerator (a hardware sweep) on workloads",
        description="Make every variant of BASE given by --vary/--zip/--derive, evaluate each on every "
        "workload and write variants.csv, pareto.csv, best.csv and figures into OUTPUT; with --multicore, BASE "
        "is a multi-core accelerator and each variant is scheduled in every --mode "
        "(see docs/reference/sweeps.md).",
    )
    sweep.add_argument("--base", help="accelerator YAML the variants start from")
    sweep.add_argument(
        "--multicore",
        action="store_true",
        help="BASE is a multi-core accelerator and --mapping a multi-core mapping: schedule each variant",
    )
    sweep.add_argument(
        "--mode",
        action="append",
        choices=("lbl", "fused"),
        help="multi-core: scheduling mode; repeat for both (default lbl)",
    )
    sweep.add_argument(
        "--layer-stacks", help="multi-core, fused mode: stacks of layer ids, e.g. '0-10;11-21'"
    )
    sweep.add_argument(
        "--allocation-method",
        choices=("ga", "co"),
        help="multi-core: allocation by genetic search (ga, default) or constraint optimisation (co)",
    )
    sweep.add_argument(
        "--allocation-individuals",
        type=int,
        help="multi-core: population of the allocation search (when the mapping leaves choices)",
    )
    sweep.add_argument(
        "--allocation-generations",
        type=int,
        help="multi-core: generations of the allocation search",
    )
    sweep.add_argument(
        "--allocation-seed", type=int, help="multi-core: seed of the allocation search"
    )
    sweep.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="PATH=[V1,V2,...]",
        help="a field (path or --param name) and its values; every combination is a variant",
    )
    sweep.add_argument(
        "--zip",
        action="append",
        default=[],
        metavar="P1=[..];P2=[..]",
        help="fields varied in step (lists of the same length), separated by ';'",
    )
    sweep.add_argument(
        "--derive",
        action="append",
        default=[],
        metavar="PATH=EXPR",
        help="a field computed from others, e.g. 'memories.sb.ports[0].bandwidth_max=D1*8'",
    )
    sweep.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a short name for a path, e.g. 'D1=operational_array.sizes[0]'",
    )
    sweep.add_argument(
        "--workload", action="append", help="workload (ONNX or YAML); repeat for several"
    )
    sweep.add_argument(
        "--workload-vary",
        action="append",
        default=[],
        metavar="FIELD=[V1,V2,...]",
        help="an LLM workload field (context, batch, tokens, phase, layers, precision, "
        "precision.weights, ...) and its values; every combination is evaluated on every variant",
    )
    sweep.add_argument(
        "--mapping", help="mapping YAML; unrolling sizes may be expressions such as 'K, D1'"
    )
    sweep.add_argument(
        "--spatial-mapping",
        choices=("given", "generate"),
        help="'generate': ignore the mapping's spatial unrollings and search them per variant",
    )
    sweep.add_argument(
        "--constraint",
        action="append",
        metavar="TEXT",
        help="a limit that marks variants as out, e.g. 'area <= 5 mm2'",
    )
    sweep.add_argument(
        "--clock-ghz", help="clock frequency (a number or an expression over parameters)"
    )
    sweep.add_argument("--name-format", help="variant names, e.g. 'tpu{D1}x{D2}-ub{ub}'")
    sweep.add_argument(
        "--search",
        action="store_true",
        help="guided search over energy, latency, area instead of every variant",
    )
    sweep.add_argument(
        "--search-method",
        dest="search_method",
        choices=("guided", "nsga2"),
        help="search: guided (models of feasibility and objectives, default) or nsga2 (genetic)",
    )
    sweep.add_argument(
        "--population", dest="search_population", type=int, help="search: population (default 16)"
    )
    sweep.add_argument(
        "--generations", dest="search_generations", type=int, help="search: generations (default 8)"
    )
    sweep.add_argument(
        "--seed",
        "--search-seed",
        dest="search_seed",
        type=int,
        help="random seed: of the guided search (default 0; --search-seed is the same), with "
        "--multicore of the allocation search (as --allocation-seed)",
    )
    sweep.add_argument(
        "--workers", dest="search_workers", type=int, help="search: worker processes (default 2)"
    )
    sweep.add_argument(
        "--no-search-screen",
        dest="search_screen",
        action="store_const",
        const=False,
        help="guided search: evaluate variants the feasibility screen shows cannot run as well",
    )
    sweep.add_argument(
        "--config", help="a workflow config: run its hardware sweep --name instead of the flags"
    )
    sweep.add_argument("--name", help="the sweep's name (with --config: which sweep to run)")
    sweep.add_argument(
        "--output", default="results/sweep", help="output folder (default %(default)s)"
    )
    sweep.add_argument(
        "--cache",
        help="per-layer result cache (default OUTPUT/.cache; share the workflow's "
        "results/.cache to reuse its results)",
    )
    sweep.add_argument("--plot-format", default="png", help="figure format (default %(default)s)")
    add_quiet(sweep)
    add_search_options(sweep)
    sweep.set_defaults(func=cmd_sweep)
