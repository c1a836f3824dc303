"""Fingerprints of full multi-core schedules, to check that a scheduler change leaves them unchanged.

Usage:  python benchmarks/schedule_fingerprints.py OUT.json [--against BEFORE.json] [--big]

Schedules ResNet-18 on mesh variants of inputs/stream/hardware/tpu_like_mesh_pooling.yaml (both
multi-core mappings of benchmarks/bench_mc_sweep.py, TPU-like and Simba-chiplet cores, links of 16,
32 and 64 bits/cycle, lbl and fused) and writes, per schedule, a hash of each part of its result:
CN starts, CN ends, latency, energy terms, transfers, link events and memory timelines. Run it on
the code before a change, then after it with ``--against`` the first file: it names every part
that differs. ``--big`` adds the slowest case (16 Simba cores, every layer split over all cores,
fused: about 20k CNs and 280k transfer calls). Prints each case's wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time

import zigzag.multicore.schedule.scheduler as scheduler
import zigzag.sweep.multicore as multicore_sweep
from zigzag.sweep import run_sweep

CASES = [  # rows, cols, mapping, modes, link bandwidth, core file
    (2, 2, "mesh_all_cores", ["lbl", "fused"], 16, "simba_chiplet.yaml"),
    (3, 3, "mesh_all_cores", ["fused"], 32, "tpu_like.yaml"),
    (4, 4, "mesh_resnet18_round_robin", ["lbl", "fused"], 16, "simba_chiplet.yaml"),
    (2, 3, "mesh_resnet18_round_robin", ["lbl", "fused"], 64, "tpu_like.yaml"),
    (1, 2, "mesh_all_cores", ["fused"], 16, "simba_chiplet.yaml"),
]
BIG = (4, 4, "mesh_all_cores", ["fused"], 16, "simba_chiplet.yaml")
PARTS = ("start", "end", "latency", "totals", "transfers", "link_events", "timelines")


def fingerprints(cases: list, cache: str) -> dict[str, list[dict[str, str]]]:
    """Per case, per schedule (in mode order): part name -> hash of that part of the result."""
    captured: list[dict[str, str]] = []
    original = scheduler.schedule

    def capturing(problem):
        result = original(problem)
        parts = [
            result.start.tolist(),
            result.end.tolist(),
            result.latency,
            repr(result.totals),
            [tuple(t) for t in result.transfers],
            result.link_events,
            result.timelines,
        ]
        captured.append(
            {
                name: hashlib.sha256(repr(part).encode()).hexdigest()[:16]
                for name, part in zip(PARTS, parts)
            }
        )
        return result

    multicore_sweep.schedule = scheduler.schedule = capturing  # the function the sweep calls
    out = {}
    try:
        for rows, cols, mapping, modes, bandwidth, core in cases:
            captured.clear()
            started = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                run_sweep(
                    {
                        "kind": "multicore",
                        "base": "inputs/stream/hardware/tpu_like_mesh_pooling.yaml",
                        "vary": {
                            "mesh.rows": [rows],
                            "mesh.cols": [cols],
                            "bandwidth": [bandwidth],
                            "mesh.core": [core],
                        },
                        "workloads": ["inputs/stream/workload/resnet18.onnx"],
                        "mapping": f"inputs/stream/mapping/{mapping}.yaml",
                        "modes": modes,
                    },
                    tmp,
                    cache=cache,
                )
            key = f"mesh{rows}x{cols}-{mapping}-link{bandwidth}-{core.removesuffix('.yaml')}"
            out[key] = list(captured)
            print(
                f"{key}: {len(captured)} schedules, {time.perf_counter() - started:.1f} s",
                flush=True,
            )
    finally:
        multicore_sweep.schedule = scheduler.schedule = original
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("output")
    parser.add_argument("--against", help="fingerprints written before the change")
    parser.add_argument(
        "--big", action="store_true", help="also the 16-core fused case of every layer split"
    )
    parser.add_argument("--cache", default="results/.cache", help="cost-table cache folder")
    args = parser.parse_args()
    found = fingerprints(CASES + ([BIG] if args.big else []), args.cache)
    with open(args.output, "w") as handle:
        json.dump(found, handle, indent=1)
    if args.against:
        with open(args.against) as handle:
            before = json.load(handle)
        differ = [
            f"{case} schedule {i} {part}"
            for case, runs in found.items()
            if case in before
            for i, (now, then) in enumerate(zip(runs, before[case]))
            for part in PARTS
            if now[part] != then[part]
        ]
        print(
            "\n".join(differ)
            if differ
            else f"identical to {args.against}: "
            f"{sum(len(r) for c, r in found.items() if c in before)} schedules"
        )
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
