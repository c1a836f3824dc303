"""Time the workflow on a config: full runs with --cores 2 and --cores 1, a no-change rerun, the
time spent per rule, the fixed cost of one layer job (warm, through the job server, and cold, in
a process of its own), the plot job per experiment, 60 of the layer jobs without Snakemake in one
stream and in two (what a second core can give them here), and the machine's load with every
figure.

Usage:  python benchmarks/bench_workflow.py [--configfile benchmarks/config_single_core.yaml]
                                            [--skip-cores1] [--repeat-job 20] [--no-server]

Each full run starts from an empty copy of the inputs in a temporary directory, so nothing is
cached between runs, and with no job server running (a private server folder per run, so the
server's start is part of the run's time). ``--no-server`` runs every job in its own process
(``ZIGZAG_FLOW_WARM=0``), as before the job server. Per-rule times come from the rules'
``benchmark:`` files (wall time of each job as Snakemake sees it, shell and client start
included). The fixed cost of a layer job is the wall time of the rule's command (``python -S
.../zigzag/steps/client.py evaluate JOB --output RESULT --log LOG``) on a job whose layer has every loop
size set to 1, so its search is trivial: process start, imports, reading the job, the trivial
search (printed apart, from the job's log), writing the result.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shlex
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
    for path in (results_dir(workdir) / ".cache" / "benchmarks").glob("*/*.tsv"):
        with open(path) as handle:
            times[path.parent.name] += [
                float(row["s"]) for row in csv.DictReader(handle, delimiter="\t")
            ]
    return times


def results_dir(workdir: Path) -> Path:
    import yaml

    config = yaml.safe_load((workdir / "config.yaml").read_text())
    return workdir / config.get("results", "results")


def trivial_job(workdir: Path) -> Path:
    """A copy of one of the run's layer jobs whose layer has every loop size set to 1."""
    job = json.loads(
        sorted((results_dir(workdir) / ".cache" / "jobs").glob("*.json"))[0].read_text()
    )
    job["layer"]["loop_sizes"] = [1] * len(job["layer"]["loop_sizes"])
    for key in ("pr_loop_sizes", "padding", "pr_loop_dims"):
        job["layer"][key] = None
    job["layer"]["dimension_relations"] = []
    path = workdir / "trivial_job.json"
    path.write_text(json.dumps(job))
    return path


def layer_command(job: Path, output: Path, log: str | Path) -> list[str]:
    """The layer rule's command (as workflow/rules/common.smk writes it) for one job."""
    return [
        sys.executable,
        "-S",
        client.__file__,
        "evaluate",
        str(job),
        "--output",
        str(output),
        "--log",
        str(log),
    ]


def layer_job_cost(workdir: Path, env: dict, repeat: int) -> dict[str, float]:
    """Wall seconds (median, best) of the layer rule's command on a trivial job, and the median
    time the job itself reports (the trivial search and writing the result, from its log)."""
    job, log = trivial_job(workdir), workdir / "trivial.log"
    command = layer_command(job, workdir / "trivial_result.json", log)
    walls, inside = [], []
    subprocess.run(
        command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )  # warm up
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


def job_streams(workdir: Path, env: dict, count: int = 60) -> tuple[int, float, float]:
    """Up to ``count`` of the run's layer jobs through the rule's command, without Snakemake: how
    many, and the wall seconds one after another, then as two parallel streams of half each.
    Their ratio is what a second core can give these jobs on this machine, the ceiling of the
    workflow's speed-up."""
    cache = results_dir(workdir) / ".cache"
    jobs = sorted((cache / "jobs").glob("*.json"))[:count]
    out = workdir / "streams"
    out.mkdir(exist_ok=True)

    def stream(part: list[Path]) -> subprocess.Popen:
        commands = " && ".join(
            shlex.join(layer_command(job, out / job.name, os.devnull)) for job in part
        )
        return subprocess.Popen(
            commands, shell=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    stream(jobs[:4]).wait()  # the server is started and warm
    timings = []
    for parts in ([jobs], [jobs[::2], jobs[1::2]]):
        started = time.perf_counter()
        for process in [stream(part) for part in parts]:
            process.wait()
        timings.append(time.perf_counter() - started)
    return len(jobs), timings[0], timings[1]


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
    parser.add_argument("--repeat-job", type=int, default=20, help="runs of the trivial layer job")
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
    sum(
        range(10**7)
    )  # the machine's speed now: shared machines vary by 10 % or more from hour to hour
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
            warm_job = layer_job_cost(two, job_env(servers / "job", True), args.repeat_job)
            cold_job = layer_job_cost(two, job_env(servers / "job", False), args.repeat_job)
            bare = bare_python(args.repeat_job)
            streams = job_streams(two, job_env(servers / "job", True))
            load_job += f" -> {load()}"
            experiments = len(summaries(two))
            jobs = sum(len(v) for v in times.values())
            same = (summaries(one) == summaries(two)) if not args.skip_cores1 else None
        finally:
            for folder in servers.iterdir():
                stop_servers(folder)
    print(f"experiments:            {experiments}")
    print(f"jobs (all rules):       {jobs}   layer jobs: {len(times.get('evaluate_layer', []))}")
    print(f"full run, --cores 2:    {t2:8.1f} s   (load {load2[0]:.2f} -> {load2[1]:.2f})")
    if not args.skip_cores1:
        print(f"full run, --cores 1:    {t1:8.1f} s   (load {load1[0]:.2f} -> {load1[1]:.2f})")
        print(f"speed-up of 2 cores:    {t1 / t2:8.2f} x")
    print(
        f"no-change rerun:        {rerun:8.1f} s   (load {load_rerun[0]:.2f} -> {load_rerun[1]:.2f})"
    )
    if same is not None:
        print(f"same results 1 vs 2:    {same}")
    jobs_timed, one_stream, two_streams = streams
    print(
        f"{jobs_timed} layer jobs without Snakemake: {one_stream:.1f} s in one stream, {two_streams:.1f} s in two: "
        f"{one_stream / two_streams:.2f} x, the ceiling of the 2-core speed-up on this machine"
    )
    print(
        f"layer job fixed cost ({load_job}; the rule's command on a trivial job, {args.repeat_job} runs):"
    )
    for name, cost in (("warm (job server)", warm_job), ("cold (own process)", cold_job)):
        print(
            f"  {name:<19} {cost['median']:.3f} s median wall, {cost['best']:.3f} s best "
            f"(of which the job itself: {cost['inside']:.3f} s)"
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
