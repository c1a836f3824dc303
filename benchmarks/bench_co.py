#!/usr/bin/env python3
"""The constraint-optimisation allocation against exhaustive search, and on ResNet-18 beside the
genetic search and the fixed allocation.

Part 1 (``--part exhaustive``): small cases (the 3-conv network and the toy residual network of
``tests/data/co``, on the dual testing cores and on the TPU-like quad core, lbl and fused). Every
allocation of the flexible layers is scheduled with our scheduler: on two cores every non-empty
set of a layer's cores (split along the inter-core tiling dim over them), on the quad core one
core or all four. Printed: how many allocations, the best latency and energy found, and the
constraint-optimisation allocation's scheduled latency and energy with their gaps to the best and
rank among all allocations.

Part 2 (``--part resnet18``): ResNet-18 on the TPU-like quad core with the flexible mapping, lbl
and fused (the stacks of Stream's ``main_stream_co.py``): the constraint optimisation (solver and
scheduling seconds, latency, energy), our genetic search's front at Stream's example budget
(16 x 8, seed 0) and the fixed allocation of ``tpu_like_quad_core_resnet18_fixed_split.yaml``.

Run from the repository root: ``python benchmarks/bench_co.py [--part exhaustive|resnet18|all]``.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
RESNET_STACKS = [tuple(range(0, 11)), tuple(range(11, 22))] + [(i,) for i in range(22, 49)]

SMALL_CASES = [
    # name, hardware, workload, mapping, mode, stacks, per-layer choice ("subsets" or "one-or-all")
    (
        "3conv dual fused",
        "small/dual_testing_core_offchip_v2.yaml",
        "small/small_3conv.onnx",
        "co/mapping_flexible.yaml",
        "fused",
        [(0, 1, 2)],
        "subsets",
    ),
    (
        "3conv dual lbl",
        "small/dual_testing_core_offchip_v2.yaml",
        "small/small_3conv.onnx",
        "co/mapping_flexible.yaml",
        "lbl",
        None,
        "subsets",
    ),
    (
        "toy dual fused",
        "small/dual_testing_core_offchip_v2.yaml",
        "co/toy_residual.onnx",
        "co/mapping_flexible.yaml",
        "fused",
        [(0, 1, 2, 3), (4,)],
        "subsets",
    ),
    (
        "toy dual lbl",
        "small/dual_testing_core_offchip_v2.yaml",
        "co/toy_residual.onnx",
        "co/mapping_flexible.yaml",
        "lbl",
        None,
        "subsets",
    ),
    (
        "toy quad fused",
        "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
        "co/toy_residual.onnx",
        "stream/inputs/examples/mapping/tpu_like_quad_core.yaml",
        "fused",
        [(0, 1, 2, 3), (4,)],
        "one-or-all",
    ),
    (
        "toy quad lbl",
        "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
        "co/toy_residual.onnx",
        "stream/inputs/examples/mapping/tpu_like_quad_core.yaml",
        "lbl",
        None,
        "one-or-all",
    ),
]


def case_folder() -> Path:
    """A folder laid out as the reference cases (core files are found from the working directory)."""
    folder = Path(tempfile.mkdtemp(prefix="bench_co_"))
    shutil.copytree(DATA / "reference" / "stream" / "small", folder / "small")
    shutil.copytree(DATA / "reference" / "stream" / "stream", folder / "stream")
    shutil.copytree(DATA / "co" / "inputs", folder / "co")
    shutil.copytree(
        DATA / "co" / "inputs" / "hardware",
        folder / "stream" / "inputs" / "examples" / "hardware",
        dirs_exist_ok=True,
    )
    shutil.copytree(DATA / "stream_compat" / "stream", folder / "stream", dirs_exist_ok=True)
    return folder


def choices(cores: tuple[int, ...], rule: str) -> list[tuple[int, ...]]:
    if rule == "subsets":
        return [c for k in range(1, len(cores) + 1) for c in itertools.combinations(cores, k)]
    return [(c,) for c in cores] + ([cores] if len(cores) > 1 else [])


def exhaustive(cache: Path) -> None:
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.multicore.allocation.constraint import co_mapping
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files
    from zigzag.multicore.mapping import load_stream_mapping, parse_stream_mapping
    from zigzag.multicore.pipeline import optimize_co, run_stream

    del SearchOptions
    print(
        "| case | allocations | best latency (cycles) | best energy (pJ) | CO latency | CO energy | "
        "latency gap | energy gap | CO rank by latency | CO solve + schedule (s) | all schedules (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, hw_file, workload, mapping_file, mode, stacks, rule in SMALL_CASES:
        hardware = load_multicore_accelerator(hw_file)
        mapping = load_stream_mapping(mapping_file)
        graph = cn_graph_from_files(hardware, workload, mapping, mode, stacks)
        begin = time.perf_counter()
        co = optimize_co(hardware, workload, mapping, mode, stacks, cache=cache, time_limit=120)
        co_seconds = time.perf_counter() - begin
        compute = {c.id for c in hardware.cores if c.id != hardware.offchip_core_id}
        flexible = {
            lay: tuple(c for c in info.core_allocation if c in compute)
            for lay, info in graph.layers.items()
            if not info.core_allocation_is_fixed
        }
        layers = sorted(flexible)
        results = []
        begin = time.perf_counter()
        for pick in itertools.product(*(choices(flexible[lay], rule) for lay in layers)):
            cores = dict(zip(layers, pick))
            fixed = parse_stream_mapping(co_mapping(mapping, graph, cores), mapping_file)
            try:
                result = run_stream(hardware, workload, fixed, mode, stacks, cache=cache)
            except (
                Exception
            ) as exc:  # an allocation our scheduler cannot run (reported, not hidden)
                results.append((float("inf"), float("inf"), cores, type(exc).__name__))
                continue
            results.append((float(result.latency), float(result.energy), cores, ""))
        every = time.perf_counter() - begin
        ok = [r for r in results if r[3] == ""]
        best_latency = min(r[0] for r in ok)
        best_energy = min(r[1] for r in ok)
        lat, energy = float(co.schedule.latency), float(co.schedule.energy)
        rank = 1 + sum(r[0] < lat for r in ok)
        failed = len(results) - len(ok)
        print(
            f"| {name} | {len(results)}{f' ({failed} failed)' if failed else ''} | {best_latency:.0f} | "
            f"{best_energy:.6g} | {lat:.0f} | {energy:.6g} | {100 * (lat / best_latency - 1):+.1f} % | "
            f"{100 * (energy / best_energy - 1):+.1f} % | {rank} of {len(ok)} | {co_seconds:.1f} | {every:.1f} |",
            flush=True,
        )


def resnet18(cache: Path) -> None:
    from zigzag.multicore.pipeline import optimize_co, run_stream, search_allocation

    hw = "stream/inputs/examples/hardware/tpu_like_quad_core.yaml"
    workload = "stream/inputs/examples/workload/resnet18.onnx"
    flexible = "stream/inputs/examples/mapping/tpu_like_quad_core.yaml"
    fixed = "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml"
    for mode in ("lbl", "fused"):
        stacks = RESNET_STACKS if mode == "fused" else None
        begin = time.perf_counter()
        co = optimize_co(hw, workload, flexible, mode, stacks, cache=cache)
        total = time.perf_counter() - begin
        solver = co.allocated.allocation.solver_seconds
        statuses = sorted({s.answer.status for s in co.allocated.allocation.stacks})
        print(
            f"\n{mode}: constraint optimisation: latency {co.schedule.latency:.10g} cycles, energy "
            f"{co.schedule.energy:.6g} pJ; solver {solver:.1f} s over {len(co.allocated.allocation.stacks)} stacks "
            f"({', '.join(statuses)}), {total:.1f} s in all (cost table, solve, schedule)"
        )
        begin = time.perf_counter()
        ga = search_allocation(
            hw, workload, flexible, mode, stacks, individuals=16, generations=8, seed=0, cache=cache
        )
        seconds = time.perf_counter() - begin
        front = sorted({(float(p.latency), float(p.energy)) for p in ga.front})
        print(
            f"{mode}: genetic search 16 x 8 (seed 0, {ga.stats.evaluations} schedules, {seconds:.1f} s): front "
            + "; ".join(f"({lat:.10g}, {en:.6g})" for lat, en in front)
        )
        chosen = ga.fixed_schedule()
        print(
            f"{mode}: genetic search's chosen point as a fixed mapping: latency {chosen.latency:.10g}, "
            f"energy {chosen.energy:.6g}"
        )
        begin = time.perf_counter()
        base = run_stream(hw, workload, fixed, mode, stacks, cache=cache)
        print(
            f"{mode}: fixed allocation (fixed_split mapping): latency {base.latency:.10g}, energy "
            f"{base.energy:.6g} ({time.perf_counter() - begin:.1f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("exhaustive", "resnet18", "all"), default="all")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print(f"load before: {open('/proc/loadavg').read().split()[:3]}, cores: {os.cpu_count()}")
    folder = case_folder()
    os.chdir(folder)
    cache = folder / "cache"
    if args.part in ("exhaustive", "all"):
        exhaustive(cache)
    if args.part in ("resnet18", "all"):
        resnet18(cache)
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
