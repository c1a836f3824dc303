"""Time the workflow on a config: a full run with --cores 1, with --cores 2, and a no-change rerun.

Usage:  python benchmarks/bench_workflow.py [--configfile config.yaml] [--keep DIR]

Each full run starts from an empty copy of the inputs in a temporary directory, so nothing is
cached between runs. Prints wall times, the speed-up of 2 cores and the no-change rerun time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fresh_copy(config: Path, parent: Path, name: str) -> Path:
    workdir = parent / name
    workdir.mkdir()
    shutil.copytree(REPO / "inputs", workdir / "inputs")
    shutil.copy(config, workdir / "config.yaml")
    return workdir


def timed_run(workdir: Path, cores: int) -> float:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
               "--cores", str(cores), "--quiet"]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one = fresh_copy(args.configfile, Path(tmp), "cores1")
        two = fresh_copy(args.configfile, Path(tmp), "cores2")
        t1 = timed_run(one, 1)
        t2 = timed_run(two, 2)
        rerun = timed_run(two, 2)
        same = all(
            json.loads(p.read_text()) == json.loads((two / p.relative_to(one)).read_text())
            for p in (one / "results").glob("*/summary.json")
        )
        jobs = len(list((two / "results" / ".cache" / "results").glob("*.json")))
    print(f"config:                 {args.configfile}")
    print(f"layer jobs:             {jobs}")
    print(f"full run, --cores 1:    {t1:8.1f} s")
    print(f"full run, --cores 2:    {t2:8.1f} s   (speed-up {t1 / t2:.2f}x)")
    print(f"no-change rerun:        {rerun:8.1f} s")
    print(f"same results 1 vs 2:    {same}")


if __name__ == "__main__":
    main()
