"""Every no-fit diagnosis of the 1,000-variant grid (benchmarks/bench_hw_sweep.py), scalar and
batched: the grid's batch jobs run in this process (shared path, 25 variants each, a fresh cache
per job as the workflow's jobs have), every call of the diagnosis is kept, then each is made
again by ``zigzag.mapping_search.loma.no_fit_diagnosis`` (the scalar assigner per ordering) and
by ``zigzag.mapping_search.batched.no_fit.no_fit_diagnosis``, interleaved: their failures and
error texts compared, their CPU seconds printed.

Usage:  python benchmarks/check_no_fit_grid.py                 # the whole grid (~4 CPU min)
        python benchmarks/check_no_fit_grid.py --jobs 0 8      # the grid's first 8 jobs
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hw_sweep as grid  # noqa: E402

from zigzag.mapping_search import loma  # noqa: E402
from zigzag.mapping_search.batched import no_fit, shared  # noqa: E402
from zigzag.sweep.runner import evaluate_points, variants_of  # noqa: E402

JOB = 25  # variants per batch job of the grid (batch_size auto)


def captured_calls(first: int, last: int) -> list[tuple]:
    """The arguments of every diagnosis the grid's jobs ``first`` to ``last - 1`` make."""
    calls = []
    diagnose = shared.no_fit_diagnosis

    def keep(layer, accelerator, spatial, **options):
        calls.append((layer, accelerator, spatial, options))
        return diagnose(layer, accelerator, spatial, **options)

    shared.no_fit_diagnosis = keep
    try:
        points = grid.grid()
        for job in range(first, last):
            part = points[job * JOB : (job + 1) * JOB]
            sweep = grid._sweep_of(grid.sweep_config(part, "auto", grid.WORKLOADS), grid.REPO)
            with tempfile.TemporaryDirectory() as cache:
                evaluate_points(sweep, variants_of(sweep), cache, share=True)
            print(f"job {job}: {len(calls)} diagnoses so far", flush=True)
    finally:
        shared.no_fit_diagnosis = diagnose
    return calls


def fields(failure):
    if failure is None:
        return None
    return (failure.memory, failure.operands, failure.needed, failure.available, failure.whole)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", nargs=2, type=int, default=(0, 40), metavar=("FIRST", "END"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    calls = captured_calls(*args.jobs)
    print(f"load {os.getloadavg()[0]:.2f}; {len(calls)} diagnoses")
    if calls:  # the batched pass's kernels compiled or loaded before timing
        layer, accelerator, spatial, options = calls[0]
        no_fit.no_fit_diagnosis(layer, accelerator, spatial, **options)
    scalar_cpu = batched_cpu = 0.0
    same = 0
    for layer, accelerator, spatial, options in calls:
        start = time.process_time()
        expected = loma.no_fit_diagnosis(layer, accelerator, spatial, **options)
        scalar_cpu += time.process_time() - start
        start = time.process_time()
        found = no_fit.no_fit_diagnosis(layer, accelerator, spatial, **options)
        batched_cpu += time.process_time() - start
        texts = [str(loma.no_fit_message(layer, accelerator.name, f)) for f in (expected, found)]
        if fields(expected) == fields(found) and texts[0] == texts[1]:
            same += 1
        else:
            print(f"DIFFERENT {layer.name} on {accelerator.name}:\n  {texts[0]}\n  {texts[1]}")
    print(
        f"identical: {same} of {len(calls)}; scalar {scalar_cpu:.2f} CPU s, "
        f"batched {batched_cpu:.2f} CPU s"
    )


if __name__ == "__main__":
    main()
