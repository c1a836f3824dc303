"""Time the workflow on a config: full runs with --cores 2 and --cores 1, a no-change rerun, the
time spent per rule, the fixed cost of a job (the rules' command on a chunk with nothing to
search: the client, the step reading the plan and writing its record), warm (through the job
server) and cold (in a process of its own), the plot job per experiment, and the machine's load
with every figure.

Usage:  python benchmarks/bench_workflow.py [--configfile benchmarks/config_single_core.yaml]
                                            [--skip-cores1] [--repeat-job 20] [--no-server]

Each full run starts from an empty copy of the inputs in a temporary directory, so nothing is
cached between runs, and with no job server running (a private server folder per run, so the
server's start is part of the run's time). ``--no-server`` runs every job in its own process
(``ZIGZAG_FLOW_WARM=0``). Per-rule times come from the rules' ``benchmark:`` files (wall time of
each job as Snakemake sees it, client start included). For the CPU seconds of a whole run, the
server's included, see ``benchmarks/bench_run_cpu.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from zigzag.steps import client

REPO = Path(__file__).resolve().parents[1]
THREADS = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}  # as the workflow sets


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def fresh_copy(config: Path, parent: Path, name: str) -> Path:
    workdir = parent / name
    workdir.mkdir()
    shutil.copytree(REPO / "inputs", workdir / "inputs")
    shutil.copy(config, workdir / "config.yaml")
    return workdir


def job_env(server_dir: Path, warm: bool) -> dict:
    """The jobs' environment: as the workflow sets it, with a private job server folder."""
    return {
        **os.environ,
        **THREADS,
        "ZIGZAG_FLOW_DIR": str(server_dir),
        "ZIGZAG_FLOW_WARM": "1" if warm else "0",
    }


def stop_servers(server_dir: Path) -> None:
    """SIGTERM the job servers started in this folder (pids from their logs)."""
    for log in server_dir.glob("*.log"):
        for pid in re.findall(r"^\S+ \[(\d+)\] starting", log.read_text(), re.MULTILINE):
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass


def timed_run(
    workdir: Path, cores: int, env: dict | None = None
) -> tuple[float, tuple[float, float]]:
    """Wall time of a snakemake run and the 1-minute load average before and after it (``env``:
    the jobs' environment, default this process's)."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        str(cores),
        "--quiet",
    ]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run(
        command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - started, (load_before, os.getloadavg()[0])


def rule_times(workdir: Path) -> dict[str, list[float]]:
    """Wall seconds of every job, by rule, from the benchmark files (<cache>/benchmarks/<rule>/)."""
    times: dict[str, list[float]] = defaultdict(list)
    for path in (results_dir(workdir) / ".cache" / "benchmarks").rglob("*.tsv"):
        rule = path.relative_to(results_dir(workdir) / ".cache" / "benchmarks").parts[0]
        with open(path) as handle:
            times[rule] += [float(row["s"]) for row in csv.DictReader(handle, delimiter="\t")]
    return times


def results_dir(workdir: Path) -> Path:
    import yaml

    config = yaml.safe_load((workdir / "config.yaml").read_text())
    return workdir / config.get("results", "results")


def job_cost(workdir: Path, env: dict, repeat: int) -> dict[str, float]:
    """Wall seconds (median, best) of the rules' command on a chunk of a finished plan (its
    layers are all stored: the step reads the plan and writes its record), and the median time
    the step itself reports in its log."""
    plan = next(results_dir(workdir).glob("*/plan.json"))
    log = workdir / "trivial.log"
    command = [sys.executable, "-S", client.__file__, "evaluate-layers", str(plan)]
    command += ["--chunk", "1of1", "--cache", str(results_dir(workdir) / ".cache")]
    command += ["--output", str(workdir / "trivial.json"), "--log", str(log)]
    walls, inside = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(
            command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        walls.append(time.perf_counter() - started)
        inside.append(float(log.read_text().split()[0].strip("[")))
    return {
        "median": statistics.median(walls),
        "best": min(walls),
        "inside": statistics.median(inside),
    }


def bare_python(repeat: int) -> float:
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def summaries(workdir: Path) -> dict[str, dict]:
    return {
        p.parent.name: json.loads(p.read_text())
        for p in results_dir(workdir).glob("*/summary.json")
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    parser.add_argument(
        "--skip-cores1", action="store_true", help="only the --cores 2 run and the rerun"
    )
    parser.add_argument("--repeat-job", type=int, default=20, help="runs of the trivial job")
    parser.add_argument(
        "--no-server", action="store_true", help="every job in its own process (no job server)"
    )
    args = parser.parse_args()
    warm = not args.no_server
    print(f"config:                 {args.configfile}")
    print(
        f"jobs run:               {'through the job server' if warm else 'each in its own process'}"
    )
    print(
        f"machine:                {os.cpu_count()} cores, load average at start {os.getloadavg()}"
    )
    started = time.perf_counter()
    sum(range(10**7))  # the machine's speed now: shared machines vary by 10 % or more
    print(f"calibration:            sum(range(10**7)) takes {time.perf_counter() - started:.3f} s")
    with (
        tempfile.TemporaryDirectory() as tmp,
        tempfile.TemporaryDirectory(prefix="zzb-", dir="/tmp") as servers,
    ):
        servers = Path(servers)
        try:
            two = fresh_copy(args.configfile, Path(tmp), "cores2")
            t2, load2 = timed_run(two, 2, job_env(servers / "cores2", warm))
            rerun, load_rerun = timed_run(two, 2, job_env(servers / "cores2", warm))
            if not args.skip_cores1:
                one = fresh_copy(args.configfile, Path(tmp), "cores1")
                t1, load1 = timed_run(one, 1, job_env(servers / "cores1", warm))
            times = rule_times(two)
            load_job = load()
            warm_cost = job_cost(two, job_env(servers / "job", True), args.repeat_job)
            cold_cost = job_cost(two, job_env(servers / "job", False), args.repeat_job)
            bare = bare_python(args.repeat_job)
            load_job += f" -> {load()}"
            experiments = len(summaries(two))
            jobs = sum(len(v) for v in times.values())
            same = (summaries(one) == summaries(two)) if not args.skip_cores1 else None
        finally:
            for folder in servers.iterdir():
                stop_servers(folder)
    print(f"experiments:            {experiments}")
    chunks = len(times.get("evaluate_layers", []))
    print(f"jobs (all rules):       {jobs}   layer-search chunks: {chunks}")
    print(f"full run, --cores 2:    {t2:8.1f} s   (load {load2[0]:.2f} -> {load2[1]:.2f})")
    if not args.skip_cores1:
        print(f"full run, --cores 1:    {t1:8.1f} s   (load {load1[0]:.2f} -> {load1[1]:.2f})")
        print(f"speed-up of 2 cores:    {t1 / t2:8.2f} x")
    print(
        f"no-change rerun:        {rerun:8.1f} s   (load {load_rerun[0]:.2f} -> {load_rerun[1]:.2f})"
    )
    if same is not None:
        print(f"same results 1 vs 2:    {same}")
    print(
        f"a job's fixed cost ({load_job}; the rules' command, nothing to search, {args.repeat_job} runs):"
    )
    for name, cost in (("warm (job server)", warm_cost), ("cold (own process)", cold_cost)):
        print(
            f"  {name:<19} {cost['median']:.3f} s median wall, {cost['best']:.3f} s best "
            f"(of which the step itself: {cost['inside']:.3f} s)"
        )
    print(f"  python -c pass      {bare:.3f} s median wall")
    plots = times.get("plot_experiment", [])
    if plots:
        print(
            f"plot job per experiment: {statistics.median(plots):7.3f} s median, {max(plots):.3f} s max"
        )
    print("\ntime per rule (--cores 2 run; wall time of each job, process start included):")
    print(f"  {'rule':<18} {'jobs':>5} {'total s':>9} {'mean s':>8} {'max s':>7}")
    for rule, values in sorted(times.items(), key=lambda item: -sum(item[1])):
        print(
            f"  {rule:<18} {len(values):>5} {sum(values):>9.2f} {statistics.mean(values):>8.3f} {max(values):>7.3f}"
        )


if __name__ == "__main__":
    main()
