#!/usr/bin/env python3
"""Benchmark the allocation search: schedules per second and search time.

Case: ResNet-18 on the TPU-like quad core with the reference's flexible mapping
(``tpu_like_quad_core.yaml``: every Conv/Gemm/Relu may go to cores 0-3), ``lbl`` and ``fused``
(stacks ``0-10;11-21``, other layers alone), from ``tests/data/reference/stream``. For each mode:

* the time to build the allocation problem (cost table from ``--cache``; the first run fills it);
* one schedule of a random allocation, ``--repeat`` times: seconds per schedule and schedules/s;
* a whole search (``--individuals`` × ``--generations``, ``--workers`` processes, seed 0).

With ``--reference-venv`` the reference Stream's ``optimize_allocation_ga`` runs on the same case
(seeded 0, ``PYTHONHASHSEED=0``) with ``--reference-individuals`` × ``--reference-generations``
(its cost table kept in ``--reference-cache`` between runs), and ours with the same budget; the
script prints both search times, seconds per schedule and their ratios, and how much of each
front the other dominates. Timings on a busy machine are noisy: the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from zigzag.multicore.allocation import dominated_share, nsga2
from zigzag.multicore.pipeline import search_allocation

REPO = Path(__file__).resolve().parents[1]
REF = REPO / "tests" / "data" / "reference" / "stream"
HARDWARE = "stream/inputs/examples/hardware/tpu_like_quad_core.yaml"
WORKLOAD = "stream/inputs/examples/workload/resnet18.onnx"
MAPPING = "stream/inputs/examples/mapping/tpu_like_quad_core.yaml"
STACKS = {"lbl": None, "fused": [list(range(0, 11)), list(range(11, 22))]}


def build(mode: str, cache: str):
    """The allocation search object after 0 generations (problem built, cost table filled)."""
    return search_allocation(
        REF / HARDWARE,
        REF / WORKLOAD,
        REF / MAPPING,
        mode,
        STACKS[mode],
        individuals=2,
        generations=0,
        cache=cache,
        cwd=str(REF),
    )


def time_schedules(problem, repeat: int) -> tuple[float, float]:
    """Wall and CPU seconds per schedule of random allocations (after one warm-up)."""
    rng = random.Random(1)
    allocations = [[rng.choice(g.cores) for g in problem.genes] for _ in range(repeat + 1)]
    problem.fitness(allocations[0])
    begin, cpu = time.perf_counter(), time.process_time()
    for allocation in allocations[1:]:
        problem.fitness(allocation)
    return (time.perf_counter() - begin) / repeat, (time.process_time() - cpu) / repeat


def run_reference(args, mode: str) -> dict:
    """The reference GA on ``mode`` in a child process; its JSON report."""
    cache = Path(args.reference_cache) / mode
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(REF / "stream", Path(work) / "stream")
        out = Path(work) / "front.json"
        case = {
            "hardware": HARDWARE,
            "workload": WORKLOAD,
            "mapping": MAPPING,
            "mode": mode,
            "layer_stacks": STACKS[mode],
            "individuals": args.reference_individuals,
            "generations": args.reference_generations,
            "seed": 0,
            "output_path": str(cache),
        }
        env = dict(os.environ, PYTHONPATH=args.reference_src, PYTHONHASHSEED="0")
        subprocess.run(
            [
                str(Path(args.reference_venv) / "bin" / "python"),
                str(REPO / "benchmarks" / "stream_reference_ga.py"),
                json.dumps(case),
                str(out),
            ],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
        )
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="lbl,fused")
    parser.add_argument("--repeat", type=int, default=20, help="schedules timed per mode")
    parser.add_argument("--individuals", type=int, default=32)
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--cache", default=str(REPO / "results" / ".cache"), help="cost-table cache"
    )
    parser.add_argument(
        "--reference-venv", help="also run the reference Stream's GA (a venv with zigzag-dse 3.8.0)"
    )
    parser.add_argument("--reference-src", default="/work/ref/stream")
    parser.add_argument("--reference-cache", default=str(REPO / "results" / "reference-stream-ga"))
    parser.add_argument("--reference-individuals", type=int, default=16)
    parser.add_argument("--reference-generations", type=int, default=8)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores); timings on a busy machine are noisy")
    for mode in args.modes.split(","):
        begin = time.perf_counter()
        found = build(mode, args.cache)
        problem = found.problem
        print(
            f"\n[{mode}] {problem.base.nb_cns} CNs, {problem.base.nb_edges} edges, {len(problem.genes)} genes; "
            f"problem built in {time.perf_counter() - begin:.1f} s (cost table from {args.cache})"
        )
        per, cpu = time_schedules(problem, args.repeat)
        print(
            f"[{mode}] one schedule: wall {per * 1000:.1f} ms ({1 / per:.1f} schedules/s), CPU {cpu * 1000:.1f} ms "
            f"({1 / cpu:.1f} schedules/s per core), {args.repeat} random allocations"
        )
        cpu0 = os.times()
        front, stats = nsga2(
            problem, args.individuals, args.generations, seed=0, workers=args.workers
        )
        cpu1 = os.times()
        used = (cpu1.user - cpu0.user) + (cpu1.children_user - cpu0.children_user)
        print(
            f"[{mode}] search {args.individuals} x {args.generations}, {args.workers} workers: wall {stats.seconds:.1f} s, "
            f"{stats.evaluations} distinct schedules ({stats.evaluations / stats.seconds:.1f}/s), front of {len(front)}; "
            f"CPU {used:.1f} s (this process and its workers)"
        )
        if not args.reference_venv:
            continue
        ref = run_reference(args, mode)
        ours, ours_stats = nsga2(
            problem,
            args.reference_individuals,
            args.reference_generations,
            seed=0,
            workers=args.workers,
        )
        budget = f"{args.reference_individuals} x {args.reference_generations}"
        ref_per = ref["ga_seconds"] / max(1, ref["evaluations"] - 1)
        our_per = ours_stats.seconds / max(1, ours_stats.evaluations)
        print(
            f"[{mode}] reference GA {budget}: {ref['ga_seconds']:.1f} s for {ref['evaluations'] - 1} schedules "
            f"({ref_per:.2f} s each); whole call {ref['seconds']:.1f} s"
        )
        print(
            f"[{mode}] ours {budget}: {ours_stats.seconds:.1f} s for {ours_stats.evaluations} schedules "
            f"({our_per * 1000:.1f} ms each); ratio search time {ref['ga_seconds'] / ours_stats.seconds:.0f}x, "
            f"per schedule {ref_per / our_per:.0f}x"
        )
        theirs = [(p["energy"], p["latency"]) for p in ref["front"]]
        mine = [(p.energy, p.latency) for p in ours]
        print(
            f"[{mode}] fronts: ours {len(mine)} points, {dominated_share(mine, theirs):.0%} dominated by the "
            f"reference's; reference {len(theirs)} points, {dominated_share(theirs, mine):.0%} dominated by ours"
        )


if __name__ == "__main__":
    main()
