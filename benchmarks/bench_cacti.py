"""Time CACTI cost extraction for a sweep of distinct memories: from an empty results cache, then again.

    python benchmarks/bench_cacti.py [--memories 100] [--parallel N] [--fresh-build]

The sweep: SRAMs of 8 KiB, 16 KiB, ... (one size step per memory) crossed with bus widths of 32 to
512 bits, each a distinct CACTI input. ``cold`` runs CACTI for every one (``--parallel`` at a time,
default: the number of CPUs) into an empty results folder; ``warm`` asks again and must make no
CACTI run (the executable is hidden for it). The CACTI build itself is timed apart: it is reused
from the per-user cache unless ``--fresh-build`` builds it into a temporary cache folder first.
Prints the machine's load average, as the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from zigzag.hardware.memory_costs import cacti_build, extraction
from zigzag.hardware.memory_costs.cacti import CactiRequest

WIDTHS = (32, 64, 128, 256, 512)


def sweep(count: int) -> list[CactiRequest]:
    """``count`` distinct SRAMs: sizes 8 KiB x i crossed with the bus widths."""
    return [
        CactiRequest(
            size_bytes=8192 * (1 + i // len(WIDTHS)),
            bus_width=WIDTHS[i % len(WIDTHS)],
            cache_type="ram",
        )
        for i in range(count)
    ]


def load() -> str:
    return "load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _children_cpu_s() -> float:
    """CPU time (user + system) of the finished CACTI runs so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=None)
    parser.add_argument("--fresh-build", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {load()}")
    with tempfile.TemporaryDirectory() as scratch:
        if args.fresh_build:
            os.environ["XDG_CACHE_HOME"] = str(Path(scratch) / "cache")
        start = time.perf_counter()
        executable = cacti_build.cacti_executable()
        print(
            f"CACTI executable {executable}: {time.perf_counter() - start:.1f} s "
            f"({'built' if args.fresh_build else 'reused or built'}); {load()}"
        )
        requests = sweep(args.memories)
        results = Path(scratch) / "results"
        start, cpu = time.perf_counter(), _children_cpu_s()
        cold = extraction.extract(requests, results=results, parallel=args.parallel)
        cold_s, cpu = time.perf_counter() - start, _children_cpu_s() - cpu
        print(
            f"cold: {len(requests)} distinct memories in {cold_s:.1f} s "
            f"({cold_s / len(requests):.2f} s each, parallel {args.parallel or os.cpu_count()}); "
            f"CACTI used {cpu:.1f} CPU-s in all (the wall time on an otherwise idle machine is about "
            f"that divided by the CPUs); {load()}"
        )

        def no_cacti():
            raise RuntimeError("the warm pass must not run CACTI")

        extraction.cacti_executable = no_cacti
        start = time.perf_counter()
        warm = extraction.extract(requests, results=results)
        warm_s = time.perf_counter() - start
        assert warm == cold
        print(f"warm: {len(requests)} memories in {warm_s * 1000:.1f} ms, no CACTI run; {load()}")


if __name__ == "__main__":
    main()
