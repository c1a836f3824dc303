"""Multi-core sweeps at scale: ResNet-18 on >= 100 mesh variants through the workflow, from scratch.

Usage:  python benchmarks/bench_mc_sweep.py [--shapes 9] [--parts fixed search] [--cores 2]
                                           [--fixed-mapping inputs/stream/mapping/mesh_all_cores.yaml]

Variants (a ``kind: multicore`` hardware sweep of inputs/stream/hardware/tpu_like_mesh_pooling.yaml):
mesh shapes (rows x cols) with 2 to 16 cores, two core types (TPU-like, Simba-like chiplet), three link
bandwidths (16, 32, 64 bits/cycle) and two DRAM bandwidths (64, 128 bits/cycle): 9 x 2 x 3 x 2 =
108 variants. Two parts, each run by ``snakemake --cores N`` in an empty copy of inputs/:

* ``fixed``: the fixed-allocation rule of Stream's own fixed mappings (one core per layer, as in
  inputs/stream/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml), written against core roles
  so that it follows the core count: inputs/stream/mapping/mesh_resnet18_round_robin.yaml deals
  the convolutions and the classifier out round-robin over the mesh cores (``mesh[i]``), each Relu
  and Add on the core of its input, pooling on the pooling core; in lbl and fused modes: 216
  schedules. (Cutting *every* layer into one group per core, as mesh_all_cores.yaml does, makes
  every CN read from every core: a 16-core fused schedule has 21k CNs and its cost grows quickly
  with the core count; no fixed mapping of Stream splits every layer over all cores.)
* ``search``: inputs/stream/mapping/mesh_all_cores.yaml with the allocations left free (each
  layer to one of the mesh cores), a 16 x 8 allocation search (seed 0) per variant in lbl mode.

``--shapes K`` keeps the first K mesh shapes (a slice, for a loaded machine); ``--fixed-mapping``
times the fixed part with another mapping (e.g. every layer split over all cores). Printed per part:
variants, rows ok, schedules (the search's included), distinct cost-table entries computed, wall
time, schedules per second, the 1-minute load average before and after, and the CPU time of
Snakemake and its jobs (each run has a private job server, whose CPU time and its jobs' are read
before it stops; divided by the cores: the projection for an idle machine).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workflow import fresh_copy, job_env, timed_run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHAPES = [(1, 2), (1, 3), (2, 2), (2, 3), (2, 4), (3, 3), (2, 5), (3, 4), (4, 4)]
MAPPING = "inputs/stream/mapping/mesh_resnet18_round_robin.yaml"
SEARCH_MAPPING = "inputs/stream/mapping/mesh_all_cores.yaml"


def sweep_entry(
    name: str, shapes: list[tuple[int, int]], modes: list[str], mapping: str, search: dict | None
) -> dict:
    entry = {
        "name": name,
        "kind": "multicore",
        "base": "inputs/stream/hardware/tpu_like_mesh_pooling.yaml",
        "params": {
            "rows": "mesh.rows",
            "cols": "mesh.cols",
            "core": "mesh.core",
            "dram_bw": "offchip_core.memories.dram.r_bw",
        },
        "zip": [{"rows": [r for r, _ in shapes], "cols": [c for _, c in shapes]}],
        "vary": {
            "core": ["tpu_like.yaml", "simba_chiplet.yaml"],
            "bandwidth": [16, 32, 64],
            "dram_bw": [64, 128],
        },
        "derive": {"offchip_core.memories.dram.w_bw": "dram_bw"},
        "name_format": "mesh{rows}x{cols}-{core}-link{bandwidth}-dram{dram_bw}",
        "workloads": ["inputs/stream/workload/resnet18.onnx"],
        "mapping": mapping,
        "modes": modes,
        "clock_ghz": 1,
    }
    if search is not None:
        entry["allocation_search"] = search
    return entry


def free_mapping(workdir: Path) -> str:
    """The benchmark's mapping with its allocations left to the search (one group per layer)."""
    entries = yaml.safe_load((REPO / SEARCH_MAPPING).read_text())
    for entry in entries:
        if entry["core_allocation"] == "mesh":
            entry["core_allocation_is_fixed"] = False
            entry["inter_core_tiling"] = [entry["inter_core_tiling"][0], 1]
    path = workdir / "inputs" / "stream" / "mapping" / "mesh_free.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return str(path.relative_to(workdir))


def run_part(
    part: str, shapes: list, cores: int, parent: Path, fixed_mapping: str = MAPPING
) -> None:
    config = parent / f"{part}.yaml"
    config.write_text("{}")
    workdir = fresh_copy(config, parent, part)
    if part == "fixed":
        entry = sweep_entry("mc_fixed", shapes, ["lbl", "fused"], fixed_mapping, None)
    else:
        entry = sweep_entry(
            "mc_search",
            shapes,
            ["lbl"],
            free_mapping(workdir),
            {"individuals": 16, "generations": 8, "seed": 0},
        )
    (workdir / "config.yaml").write_text(
        yaml.safe_dump({"hardware_sweeps": [entry], "results": "results"}, sort_keys=False)
    )
    servers = (
        parent / f"servers-{part}"
    )  # a private job server for this run: its CPU time is the jobs'
    cpu_before = _children_cpu()
    wall, (before, after) = timed_run(
        workdir, cores, {**job_env(servers, warm=True), "ZIGZAG_FLOW_IDLE": "20"}
    )
    cpu = _children_cpu() - cpu_before + _server_cpu(servers)
    with open(
        workdir / "results" / "hardware_sweeps" / entry["name"] / "variants.csv", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    ok = [r for r in rows if r["status"] == "ok"]
    schedules = sum(int(float(r.get("search_schedules") or 0)) + 1 for r in ok)
    entries = len(
        list((workdir / "results" / ".cache" / "multicore-cost" / "entries").glob("*.json"))
    )
    variants = len({r["variant"] for r in rows})
    print(
        f"{part:>7} {variants:>8} {len(ok):>7} {schedules:>9} {entries:>11} {wall:>8.1f} "
        f"{schedules / wall:>11.2f} {before:>8.2f} -> {after:.2f}  {cpu:>7.1f} {cpu / cores:>10.1f}"
    )
    failed = {(r["status"], r["reason"]) for r in rows if r["status"] != "ok"}
    for status, reason in sorted(failed)[:5]:
        print(f"        {status}: {reason}")


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children: Snakemake and its clients."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _server_cpu(folder: Path) -> float:
    """CPU seconds of the job servers of ``folder`` (still idling after the run) and of the jobs
    they ran (their children, reaped), read from /proc; 0 where a server has gone already."""
    total = 0.0
    for log in folder.glob("*.log"):
        for pid in set(re.findall(r"\[(\d+)\]", log.read_text())):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(v) for v in fields[11:15]) / os.sysconf(
                "SC_CLK_TCK"
            )  # utime stime cutime cstime
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shapes", type=int, default=len(SHAPES), help="first K mesh shapes (default all 9)"
    )
    parser.add_argument(
        "--parts", nargs="+", choices=("fixed", "search"), default=["fixed", "search"]
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--fixed-mapping", default=MAPPING, help=f"the fixed part's mapping (default {MAPPING})"
    )
    args = parser.parse_args()
    shapes = SHAPES[: args.shapes]
    print(
        f"mesh shapes {shapes}, x 2 core types x 3 link x 2 DRAM bandwidths = {len(shapes) * 12} variants; "
        f"snakemake --cores {args.cores}; machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'part':>7} {'variants':>8} {'rows ok':>7} {'schedules':>9} {'cost entries':>11} {'wall s':>8} "
        f"{'schedules/s':>11} {'load before -> after':>20}  {'CPU s':>7} {'CPU s/core':>10}"
    )
    print(
        "(CPU s: Snakemake's and its jobs' CPU time; CPU s/core: the wall time an idle machine with "
        "--cores N would need at best, the projection when the load is high)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.parts:
            run_part(part, shapes, args.cores, Path(tmp), args.fixed_mapping)


if __name__ == "__main__":
    main()
