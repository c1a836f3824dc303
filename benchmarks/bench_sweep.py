"""How the workflow's time grows with the number of experiments: a sweep config run from scratch
on growing subsets of its networks.

Usage:  python benchmarks/bench_sweep.py [--configfile config/sweep_large.yaml] [--networks 1 2 4] [--cores 2]

For each count N, every sweep of the config keeps its first N workloads (so the 4-network ×
6-accelerator × 2-target sweep gives 12, 24 and 48 experiments), runs from an empty results
folder, and the script prints experiments, layers, distinct layer jobs, all jobs, the wall time,
seconds per experiment and per distinct layer job, and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workflow import fresh_copy, results_dir, rule_times, timed_run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def subset_config(config: dict, networks: int) -> dict:
    """The config with each sweep's workload list cut to its first ``networks`` entries."""
    sweeps = [
        {**sweep, "workload": list(sweep["workload"])[:networks]}
        for sweep in config.get("sweeps", [])
    ]
    return {**config, "sweeps": sweeps, "results": "results"}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--configfile", type=Path, default=REPO / "config" / "sweep_large.yaml")
    parser.add_argument("--networks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    config = yaml.safe_load(args.configfile.read_text())
    print(f"config: {args.configfile}   --cores {args.cores}   machine: {os.cpu_count()} cores")
    print(
        f"{'networks':>8} {'experiments':>11} {'layers':>7} {'layer jobs':>10} {'jobs':>6} {'wall s':>8} "
        f"{'s/experiment':>12} {'s/layer job':>11} {'load before->after':>19}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for networks in args.networks:
            config_file = Path(tmp) / f"sweep_{networks}.yaml"
            config_file.write_text(yaml.safe_dump(subset_config(config, networks), sort_keys=False))
            workdir = fresh_copy(config_file, Path(tmp), f"run_{networks}")
            wall, (load_before, load_after) = timed_run(workdir, args.cores)
            results = results_dir(workdir)
            plans = [json.loads(p.read_text()) for p in results.glob("*/plan.json")]
            layers = sum(len(plan["layers"]) for plan in plans)
            layer_jobs = len(list((results / ".cache" / "results").glob("*.json")))
            jobs = sum(len(times) for times in rule_times(workdir).values())
            print(
                f"{networks:>8} {len(plans):>11} {layers:>7} {layer_jobs:>10} {jobs:>6} {wall:>8.1f} "
                f"{wall / len(plans):>12.2f} {wall / layer_jobs:>11.3f} {load_before:>9.2f} -> {load_after:.2f}"
            )


if __name__ == "__main__":
    main()
