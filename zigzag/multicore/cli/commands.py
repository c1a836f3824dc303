"""What the ``multicore`` commands do: the run their arguments describe, through the pipeline, its
folder written and its lines printed."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.destinations import check_output_folder
from zigzag.multicore.cli.console import TqdmStream, demand_note, print_tokens
from zigzag.multicore.plots.cli import plot_after_run


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
        f"energy {summary['energy']:.6g} pJ{demand_note(summary)} ({time.perf_counter() - begin:.1f} s)"
    )
    print_tokens(args.output)
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
        print_generation(generation, front, stream=TqdmStream() if bar is not None else sys.stderr)
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
        f"{demand_note(fixed.summary())} (what `zigzag multicore run` of allocation.yaml gives; the search's fitness with Stream's genetic-"
        f"allocation runtimes: latency {chosen.latency:.10g}, energy {chosen.energy:.6g} pJ)"
    )
    print_tokens(args.output)
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
        f"{result.energy:.6g} pJ{demand_note(result.summary())} "
        f"({time.perf_counter() - begin:.1f} s in all)"
    )
    print_tokens(args.output)
    out = Path(args.output)
    print(
        f"written: {out / 'allocation.yaml'}, {out / 'co_slots.csv'}, {out / 'summary.json'}, {out / 'schedule.csv'}"
    )
    return 0


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
