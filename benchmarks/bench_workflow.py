"""Time the workflow on a config: full runs with --cores 1 and --cores 2, a no-change rerun,
the time spent per rule, the fixed cost of one layer job, and the machine's load meanwhile.

Usage:  python benchmarks/bench_workflow.py [--configfile config.yaml] [--skip-cores1] [--repeat-job 15]

Each full run starts from an empty copy of the inputs in a temporary directory, so nothing is
cached between runs. Per-rule times come from the rules' ``benchmark:`` files (wall time of each
job, process start included). The fixed cost of a layer job is the wall time of
``python -m zigzag.steps.evaluate`` on a job whose layer has every loop size set to 1 (its
search takes about a millisecond): process start, imports, reading the job, writing the result.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fresh_copy(config: Path, parent: Path, name: str) -> Path:
    workdir = parent / name
    workdir.mkdir()
    shutil.copytree(REPO / "inputs", workdir / "inputs")
    shutil.copy(config, workdir / "config.yaml")
    return workdir


def timed_run(workdir: Path, cores: int) -> tuple[float, tuple[float, float]]:
    """Wall time of a snakemake run and the 1-minute load average before and after it."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(workdir / "config.yaml"), "--cores", str(cores), "--quiet"]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, (load_before, os.getloadavg()[0])


def rule_times(workdir: Path) -> dict[str, list[float]]:
    """Wall seconds of every job, by rule, from the benchmark files (<cache>/benchmarks/<rule>/)."""
    times: dict[str, list[float]] = defaultdict(list)
    for path in (results_dir(workdir) / ".cache" / "benchmarks").glob("*/*.tsv"):
        with open(path) as handle:
            times[path.parent.name] += [float(row["s"]) for row in csv.DictReader(handle, delimiter="\t")]
    return times


def results_dir(workdir: Path) -> Path:
    import yaml

    config = yaml.safe_load((workdir / "config.yaml").read_text())
    return workdir / config.get("results", "results")


def layer_job_fixed_cost(workdir: Path, repeat: int) -> tuple[float, float, float, float]:
    """(median, min) wall seconds of a trivial layer job, its mean CPU seconds (user + system,
    less sensitive to other processes than wall time), and the median wall of ``python -c pass``."""
    cache = results_dir(workdir) / ".cache"
    job = json.loads(sorted((cache / "jobs").glob("*.json"))[0].read_text())
    job["layer"]["loop_sizes"] = [1] * len(job["layer"]["loop_sizes"])
    for key in ("pr_loop_sizes", "padding", "pr_loop_dims"):
        job["layer"][key] = None
    job["layer"]["dimension_relations"] = []
    trivial = workdir / "trivial_job.json"
    trivial.write_text(json.dumps(job))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

    def wall(command) -> float:
        started = time.perf_counter()
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    job_command = [sys.executable, "-m", "zigzag.steps.evaluate", str(trivial), "--output", str(workdir / "t.json")]
    wall(job_command)  # warm the file cache
    before = cpu()
    jobs = [wall(job_command) for _ in range(repeat)]
    cpu_per_job = (cpu() - before) / repeat
    bare = [wall([sys.executable, "-c", "pass"]) for _ in range(repeat)]
    return statistics.median(jobs), min(jobs), cpu_per_job, statistics.median(bare)


def summaries(workdir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in results_dir(workdir).glob("*/summary.json")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    parser.add_argument("--skip-cores1", action="store_true", help="only the --cores 2 run and the rerun")
    parser.add_argument("--repeat-job", type=int, default=15, help="runs of the trivial layer job")
    args = parser.parse_args()
    print(f"config:                 {args.configfile}")
    print(f"machine:                {os.cpu_count()} cores, load average at start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        two = fresh_copy(args.configfile, Path(tmp), "cores2")
        t2, load2 = timed_run(two, 2)
        rerun, load_rerun = timed_run(two, 2)
        if not args.skip_cores1:
            one = fresh_copy(args.configfile, Path(tmp), "cores1")
            t1, load1 = timed_run(one, 1)
        times = rule_times(two)
        median, fastest, cpu_per_job, bare = layer_job_fixed_cost(two, args.repeat_job)
        experiments = len(summaries(two))
        jobs = sum(len(v) for v in times.values())
        same = (summaries(one) == summaries(two)) if not args.skip_cores1 else None
    print(f"experiments:            {experiments}")
    print(f"jobs (all rules):       {jobs}   layer jobs: {len(times.get('evaluate_layer', []))}")
    print(f"full run, --cores 2:    {t2:8.1f} s   (load {load2[0]:.2f} -> {load2[1]:.2f})")
    if not args.skip_cores1:
        print(f"full run, --cores 1:    {t1:8.1f} s   (load {load1[0]:.2f} -> {load1[1]:.2f})")
        print(f"speed-up of 2 cores:    {t1 / t2:8.2f} x")
    print(f"no-change rerun:        {rerun:8.1f} s   (load {load_rerun[0]:.2f} -> {load_rerun[1]:.2f})")
    if same is not None:
        print(f"same results 1 vs 2:    {same}")
    print(f"layer job fixed cost:   {median:8.3f} s median wall, {fastest:.3f} s best of {args.repeat_job}, "
          f"{cpu_per_job:.3f} s CPU (python -c pass: {bare:.3f} s wall; load now {os.getloadavg()[0]:.2f})")
    plots = times.get("plot_experiment", [])
    if plots:
        print(f"plot job per experiment: {statistics.median(plots):7.3f} s median, {max(plots):.3f} s max")
    print("\ntime per rule (--cores 2 run; wall time of each job, process start included):")
    print(f"  {'rule':<18} {'jobs':>5} {'total s':>9} {'mean s':>8} {'max s':>7}")
    for rule, values in sorted(times.items(), key=lambda item: -sum(item[1])):
        print(f"  {rule:<18} {len(values):>5} {sum(values):>9.2f} {statistics.mean(values):>8.3f} {max(values):>7.3f}")


if __name__ == "__main__":
    main()
