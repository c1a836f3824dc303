"""The guided hardware search against the full grids it searches: hypervolume share per seed.

Usage:  python benchmarks/bench_hw_search.py [--spaces infeasible168 alexnet200 ...] [--seeds 0 1 2 3 4]
                                             [--methods guided nsga2] [--workers 2] [--cache DIR]

The spaces (benchmarks/hw_search_spaces.py) are sweeps of the TPU-like example of different shapes:
the AlexNet space the first search was tuned on, one with a large infeasible region (buffers too small
for MobileNetV2), one with a structural parameter (a memory level present or absent), and one over two
workloads at once. Each grid is evaluated whole (in ``--workers`` processes, through the per-layer
cache), then searched once per seed and method with the space's budget, ``population x (generations +
1)`` evaluations (at most 20 % of the grid), reading the same cache. Printed per space, method and
seed: evaluations (share of the grid), infeasible ones among them, the front size, and the
hypervolume of the search's front as a share of the grid front's (the searches read the grid's
evaluated rows, so their seconds are the search's own work). Objectives are scaled to [0, 1]
between the grid's best and worst variant that runs; the reference point is 1.1 in each.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hw_search_spaces import SPACES  # noqa: E402

_SWEEP = None


def _init(section: dict) -> None:
    global _SWEEP
    logging.disable(logging.WARNING)
    from zigzag.sweep import read_sweep

    _SWEEP = read_sweep(section)


def _evaluate(job: tuple) -> list[dict]:
    from zigzag.sweep.search import evaluate_position

    position, cache = job
    return evaluate_position(_SWEEP, position, cache, {})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spaces", nargs="+", default=list(SPACES), choices=list(SPACES))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--methods", nargs="+", default=["guided", "nsga2"], choices=["guided", "nsga2"]
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache", default=None, help="per-layer cache folder to keep between runs")
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    import zigzag.sweep.search as searching
    from zigzag.sweep import read_sweep, search_sweep
    from zigzag.sweep.hypervolume import hypervolume, normalised
    from zigzag.sweep.search import WORST, objectives
    from zigzag.variants import axis_sizes

    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    evaluate_position = searching.evaluate_position
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(args.cache or Path(tmp) / "cache")
        for name in args.spaces:
            section, budget = SPACES[name]
            sweep = read_sweep(section)
            positions = list(itertools.product(*(range(n) for n in axis_sizes(sweep.spec))))
            started = time.perf_counter()
            searching.evaluate_position = evaluate_position  # the grid itself is evaluated for real
            with ProcessPoolExecutor(args.workers, initializer=_init, initargs=(section,)) as pool:
                rows = dict(
                    zip(
                        positions,
                        pool.map(_evaluate, [(p, str(cache)) for p in positions], chunksize=1),
                    )
                )
            grid = [objectives(r) for r in rows.values()]
            ok = [p for p in grid if p[0] < WORST]
            # the searches read the grid's rows: what is compared is the choice of variants, not their evaluation
            searching.evaluate_position = lambda sweep, position, cache, parsed, rows=rows: rows[
                tuple(position)
            ]
            lower = [min(p[i] for p in ok) for i in range(3)]
            upper = [max(p[i] for p in ok) for i in range(3)]
            reference = (1.1, 1.1, 1.1)
            grid_hv = hypervolume(normalised(ok, lower, upper), reference)
            evaluations = budget["population"] * (budget["generations"] + 1)
            print(
                f"\n{name}: {len(positions)} variants ({len(positions) - len(ok)} infeasible), grid evaluated in "
                f"{time.perf_counter() - started:.1f} s; budget {evaluations} evaluations "
                f"({100 * evaluations / len(positions):.1f} %), population {budget['population']}"
            )
            print(
                f"{'method':>7} {'seed':>4} {'evals':>5} {'infeasible':>10} {'front':>5} {'hv share':>8} {'seconds':>7}"
            )
            for method in args.methods:
                shares = []
                for seed in args.seeds:
                    started = time.perf_counter()
                    result = search_sweep(
                        sweep,
                        Path(tmp) / f"{name}-{method}-{seed}",
                        cache=cache,
                        budget={**budget, "seed": seed, "method": method, "workers": 1},
                    )
                    seconds = time.perf_counter() - started
                    points = [
                        (r["energy_pJ"], r["latency_cycles"], r["area_mm2"]) for r in result.front
                    ]
                    share = hypervolume(normalised(points, lower, upper), reference) / grid_hv
                    shares.append(share)
                    failed = len({r["variant"] for r in result.rows if r["status"] != "ok"})
                    print(
                        f"{method:>7} {seed:>4} {result.evaluations:>5} {failed:>10} {len(result.front):>5} "
                        f"{100 * share:>7.1f}% {seconds:>7.1f}"
                    )
                summary.append((name, method, min(shares), sum(shares) / len(shares)))
    print("\nspace, method: hypervolume share over the seeds (min, mean)")
    for name, method, low, mean in summary:
        print(f"  {name:>16} {method:>7}: min {100 * low:.1f} %, mean {100 * mean:.1f} %")
    print(f"machine load now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
