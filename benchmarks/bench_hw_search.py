"""The guided hardware search against the full grid it searches: hypervolume and evaluations.

Usage:  python benchmarks/bench_hw_search.py [--workload inputs/workload/alexnet.onnx] [--lpf-limit 4]
                                             [--population 8] [--generations 4] [--seeds 0 1 2 3 4] [--workers 2]

The grid: 5 array shapes (D1 x D2 in step) x 8 unified-buffer sizes x 5 buffer bandwidths = 200
variants of the TPU-like example accelerator on one small workload. It is evaluated whole (in
``--workers`` processes), then searched with NSGA-II (energy, latency, area) once per seed with a
budget of ``population x (generations + 1)`` evaluations at most (8 x 5 = 40 = 20 % of the grid by
default). The searches run on a cache of their own first (their time is that of a cold search),
then reuse it. Printed per seed: evaluations used (and their share of the grid), the front size,
and the hypervolume of the search's front as a share of the grid front's. Objectives are scaled
to [0, 1] between the grid's best and worst variant, the reference point is 1.1 in each.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHAPES = [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)]
BUFFERS = ["128KiB", "256KiB", "512KiB", "1MiB", "1536KiB", "2MiB", "3MiB", "4MiB"]
BANDWIDTHS = [64, 128, 256, 512, 1024]


def sweep_section(workload: str, lpf_limit: int) -> dict:
    return {
        "name": "search_bench", "base": str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"), "lpf_limit": lpf_limit,
        "params": {"D1": "operational_array.sizes[0]", "D2": "operational_array.sizes[1]",
                   "ub": "memories.unified_buffer.size", "bw": "memories.unified_buffer.ports[0].bandwidth_max"},
        "zip": [{"D1": [s[0] for s in SHAPES], "D2": [s[1] for s in SHAPES]}],
        "vary": {"ub": BUFFERS, "bw": BANDWIDTHS},
        "derive": {"memories.unified_buffer.ports[1].bandwidth_max": "bw",
                   "memories.unified_buffer.r_cost": "10 * (ub / 8KiB) ** 0.5 * bw / 64",
                   "memories.unified_buffer.w_cost": "10 * (ub / 8KiB) ** 0.5 * bw / 64",
                   "memories.unified_buffer.area": "0.7 * ub + 2000 * bw",
                   "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
                   "memories.accumulators.ports[1].bandwidth_max": "D1 * 16"},
        "workloads": [workload], "mapping": str(REPO / "inputs/mapping/flow_tpu_array.yaml"),
    }


_SWEEP = None


def _init(section: dict) -> None:
    global _SWEEP
    from zigzag.sweep import read_sweep

    _SWEEP = read_sweep(section)


def _evaluate(job: tuple) -> tuple:
    from zigzag.sweep.search import evaluate_position, objectives

    position, cache = job
    return objectives(evaluate_position(_SWEEP, position, cache, {}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default=str(REPO / "inputs/workload/alexnet.onnx"))
    parser.add_argument("--lpf-limit", type=int, default=4)
    parser.add_argument("--population", type=int, default=8)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from zigzag.sweep import read_sweep, search_sweep
    from zigzag.sweep.hypervolume import hypervolume, normalised
    from zigzag.sweep.search import WORST
    from zigzag.variants import axis_sizes

    section = sweep_section(args.workload, args.lpf_limit)
    sweep = read_sweep(section)
    positions = list(itertools.product(*(range(n) for n in axis_sizes(sweep.spec))))
    budget = {"population": args.population, "generations": args.generations, "workers": args.workers}
    print(f"grid: {len(positions)} variants on {Path(args.workload).name} (lpf_limit {args.lpf_limit}); "
          f"search budget: population {args.population}, {args.generations} generations, {args.workers} workers")
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        started = time.perf_counter()
        first = search_sweep(sweep, tmp / "search", cache=tmp / "search_cache", budget={**budget, "seed": args.seeds[0]})
        cold_search = time.perf_counter() - started
        started = time.perf_counter()
        with ProcessPoolExecutor(args.workers, initializer=_init, initargs=(section,)) as pool:
            grid = list(pool.map(_evaluate, [(p, str(tmp / "grid_cache")) for p in positions], chunksize=1))
        grid_seconds = time.perf_counter() - started
        ok = [p for p in grid if p[0] < WORST]
        lower = [min(p[i] for p in ok) for i in range(3)]
        upper = [max(p[i] for p in ok) for i in range(3)]
        reference = (1.1, 1.1, 1.1)
        grid_hv = hypervolume(normalised(ok, lower, upper), reference)
        print(f"grid:   {len(positions)} evaluations ({len(ok)} ran) in {grid_seconds:.1f} s; "
              f"hypervolume {grid_hv:.4f}")
        print(f"search, seed {args.seeds[0]}, cold cache: {cold_search:.1f} s")
        print(f"{'seed':>4} {'evaluations':>11} {'of grid':>8} {'front':>6} {'hypervolume':>11} {'of grid':>8}")
        shares = []
        for seed in args.seeds:
            result = first if seed == args.seeds[0] else search_sweep(
                sweep, tmp / f"search{seed}", cache=tmp / "search_cache", budget={**budget, "seed": seed})
            points = [(r["energy_pJ"], r["latency_cycles"], r["area_mm2"]) for r in result.front]
            share = hypervolume(normalised(points, lower, upper), reference) / grid_hv
            shares.append(share)
            print(f"{seed:>4} {result.evaluations:>11} {100 * result.evaluations / len(positions):>7.1f}% "
                  f"{len(result.front):>6} {share * grid_hv:>11.4f} {100 * share:>7.1f}%")
        print(f"hypervolume share over {len(shares)} seeds: min {100 * min(shares):.1f} %, "
              f"mean {100 * sum(shares) / len(shares):.1f} %; machine load now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
