#!/usr/bin/env python3
"""A multi-core sweep of an LLM decode step: mesh size x DRAM link x SRAM per core, with its front.

Usage:  python benchmarks/bench_mc_llm_sweep.py [--layers N] [--mesh 2x2 4x4 ...] [--dram-bw 256 ...]
                                                [--sram 1MiB 4MiB ...] [--output DIR]
                                                [--latency-model zigzag]

Runs the sweep of config/sweep_mc_llm.yaml (the base tpu_like_mesh_llm.yaml, mapping
llm_mesh_roles.yaml) on a Llama-3-8B-shaped decode step of N decoder blocks (4,096 cached tokens,
the LM head included; the shapes-only graph is written by benchmarks/llama_onnx.py), from a cold
cost cache, through ``zigzag.sweep.run_sweep`` (the same code as ``zigzag sweep`` and the
workflow). The grid's axes default to the config's. Printed: the Pareto front over time per
output token, energy per token and area (rows of variants.csv with ``pareto`` true), the wall and
CPU time, seconds per variant, and the machine load before and after (compare CPU seconds on a
shared machine).
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def sweep_section(
    workload: Path, mesh: list[str] | None, dram: list[int] | None, sram: list[str] | None
) -> dict:
    """The config's sweep with the generated workload and the axes given on the command line."""
    from zigzag.io.yaml_files import load_yaml

    section = dict(load_yaml(REPO / "config/sweep_mc_llm.yaml")["hardware_sweeps"][0])
    section["workloads"] = [str(workload)]
    vary = dict(section["vary"])
    if mesh:
        shapes = [tuple(int(n) for n in text.lower().split("x")) for text in mesh]
        section["zip"] = [{"rows": [r for r, _ in shapes], "cols": [c for _, c in shapes]}]
    if dram:
        vary["dram_bw"] = dram
    if sram:
        vary["sram"] = sram
    section["vary"] = vary
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--layers", type=int, default=2, help="decoder blocks of the Llama-3-8B shape (default 2)"
    )
    parser.add_argument("--mesh", nargs="*", help="mesh sizes ROWSxCOLS (default: the config's)")
    parser.add_argument(
        "--dram-bw",
        nargs="*",
        type=int,
        help="DRAM link widths, bits per cycle (default: the config's)",
    )
    parser.add_argument(
        "--sram", nargs="*", help="SRAM per core, e.g. 1MiB (default: the config's)"
    )
    parser.add_argument(
        "--output", default=None, help="folder for the tables (default: a temporary one)"
    )
    parser.add_argument(
        "--latency-model",
        default="auto",
        choices=("auto", "zigzag", "bandwidth_bound"),
        help="the sweep's latency_model (default auto: bandwidth_bound for an LLM step; zigzag: "
        "Stream's link model)",
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.chdir(REPO)
    sys.path.insert(0, str(REPO / "benchmarks"))
    from llama_onnx import llama_decode

    from zigzag.sweep import run_sweep

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        output = Path(args.output) if args.output else scratch / "sweep"
        workload = llama_decode(
            scratch / f"llama3_8b_decode_{args.layers}layers.onnx", layers=args.layers
        )
        section = sweep_section(workload, args.mesh, args.dram_bw, args.sram) | {
            "latency_model": args.latency_model
        }
        print(f"load before: {load()}")
        wall, cpu = time.perf_counter(), cpu_seconds()
        rows = run_sweep(section, output, cache=scratch / "cache")
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        print(f"load after: {load()}")
    ok = [r for r in rows if r["status"] == "ok"]
    print(
        f"Llama-3-8B-shaped decode step, {args.layers} blocks, context 4096: {len(rows)} variants "
        f"({len(ok)} ok) in {wall:.1f} s wall, {cpu:.1f} s CPU ({wall / max(len(rows), 1):.2f} s per variant)"
    )
    print(
        f"front over time per output token, energy per token and area ({sum(bool(r['pareto']) for r in rows)} "
        "variants):"
    )
    print(
        f"{'variant':34s} {'tpot (cycles)':>14s} {'tpot (ms)':>10s} {'tokens/s':>9s} {'mJ/token':>9s} "
        f"{'area (mm2)':>10s} {'DRAM busy':>9s} {'demand':>6s}"
    )
    for row in sorted((r for r in ok if r["pareto"]), key=lambda r: r["tpot_cycles"]):
        seconds = "" if row["tpot_s"] is None else f"{row['tpot_s'] * 1e3:10.3f}"
        rate = "" if row["tokens_per_s"] is None else f"{row['tokens_per_s']:9.2f}"
        print(
            f"{row['variant']:34s} {row['tpot_cycles']:14,.0f} {seconds:>10s} {rate:>9s} "
            f"{row['energy_per_token_J'] * 1e3:9.3f} {row['area_mm2']:10.3f} {row['dram_link_busy_share']:9.0%} "
            f"{row['dram_link_demand']:6.2f}"
        )
    for row in rows:
        if row["status"] != "ok":
            print(f"{row['variant']}: {row['status']}: {row['reason']}")


if __name__ == "__main__":
    main()
