"""Wall time and CPU seconds of one workflow run from scratch: ``snakemake --cores N`` on a config
(default: the embedded ``config.yaml``) in a fresh copy of the inputs.

Usage:  python benchmarks/bench_run_cpu.py [--configfile FILE] [--cores 2] [--rerun]

CPU seconds are those of Snakemake and every process it waited for (``getrusage`` of the
children: the job processes), plus, where a job server ran them (versions before 2026-11-29's
coarser jobs), the server's own and its jobs' CPU read from ``/proc`` before it is stopped.
``uptime`` is printed before and after: the machine is shared, so wall times move with its load.
``--rerun`` also times a no-change rerun.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def server_cpu(folder: Path) -> float:
    """CPU seconds of the job servers started in ``folder`` and of the jobs they reaped; stops them."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for log in folder.glob("*.log"):
        for pid in re.findall(r"^\S+ \[(\d+)\] starting", log.read_text(), re.MULTILINE):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15]) / tick
                os.kill(int(pid), signal.SIGTERM)
            except (OSError, ProcessLookupError):
                pass
    return total


def run(workdir: Path, cores: int, config: str | None, env: dict) -> tuple[float, float, int]:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
    command += ["--directory", str(workdir), "--cores", str(cores), "--quiet"]
    if config:
        command += ["--configfile", config]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(workdir / "snakemake.log", "a") as log:
        status = subprocess.run(command, env=env, stdout=log, stderr=log).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--configfile", type=Path)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--rerun", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir="/tmp") as servers:
        workdir = Path(tmp) / "run"
        workdir.mkdir()
        shutil.copytree(REPO / "inputs", workdir / "inputs")
        shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
        config = None
        if args.configfile:
            shutil.copy(args.configfile, workdir / "given.yaml")
            config = str(workdir / "given.yaml")
        env = {**os.environ, "ZIGZAG_FLOW_DIR": str(Path(servers) / "s"), "ZIGZAG_FLOW_IDLE": "600"}
        print(f"before: {uptime()}")
        wall, cpu, status = run(workdir, args.cores, config, env)
        cpu += server_cpu(Path(servers) / "s")
        config_data = yaml.safe_load(Path(config or workdir / "config.yaml").read_text())
        benchmarks = workdir / config_data.get("results", "results") / ".cache" / "benchmarks"
        by_rule: dict[str, int] = {}
        for path in benchmarks.rglob("*.tsv"):
            rule = path.relative_to(benchmarks).parts[0]
            by_rule[rule] = by_rule.get(rule, 0) + 1
        print(f"after:  {uptime()}")
        print(
            f"jobs (with a benchmark file): {sum(by_rule.values())} {dict(sorted(by_rule.items()))}"
        )
        print(f"full run, --cores {args.cores}: {wall:.1f} s wall, {cpu:.1f} s CPU, exit {status}")
        if status:
            print((workdir / "snakemake.log").read_text()[-3000:])
        if args.rerun:
            wall, cpu, status = run(workdir, args.cores, config, env)
            cpu += server_cpu(Path(servers) / "s")
            print(f"no-change rerun: {wall:.1f} s wall, {cpu:.1f} s CPU, exit {status}; {uptime()}")


if __name__ == "__main__":
    main()
