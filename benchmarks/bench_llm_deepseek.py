#!/usr/bin/env python3
"""Speed of the largest configuration-built workload: one full DeepSeek-V3 decode step (61 blocks: latent
attention in its absorbed form, 3 dense blocks, 58 mixture-of-experts blocks of 8 of 256 routed experts and
a shared one) from its published config.json, searched and costed, with its per-token figures, from a cold
start (a fresh process: nothing imported, nothing searched).

Usage:  python benchmarks/bench_llm_deepseek.py [--hardware H] [--mapping M] [--lpf-limit 6]
                                                [--context 4096] [--batch 1] [--config PATH]

Printed: seconds (wall and CPU) to build the layers, to search and cost them, and to compute the per-token
figures; layers and distinct searches; the step's figures (matrix MACs, weight and KV-cache bytes, energy,
cycles, tokens per second at 1 GHz); the machine load before and after (the machine is shared: compare CPU
seconds).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WALL, CPU = time.perf_counter(), time.process_time()


def load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def with_dram_size(hardware: str, gib: int) -> str:
    """``hardware``, or a copy of it beside it in a temporary folder whose ``dram`` holds ``gib`` GiB."""
    if not gib:
        return hardware
    import tempfile

    import yaml

    spec = yaml.safe_load(Path(hardware).read_text())
    spec["memories"]["dram"]["size"] = gib * 8 * 2**30  # bits
    copy = Path(tempfile.mkdtemp()) / Path(hardware).name
    copy.write_text(yaml.safe_dump(spec, sort_keys=False))
    print(f"accelerator: {Path(hardware).name} with a {gib} GiB dram")
    return str(copy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--hardware", default=str(REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml")
    )
    parser.add_argument(
        "--mapping", default=str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml")
    )
    parser.add_argument(
        "--config",
        default=str(REPO / "tests" / "data" / "llm" / "families" / "deepseek_v3.config.json"),
    )
    parser.add_argument(
        "--dram-gib",
        type=int,
        default=64,
        help="the DRAM size given to the accelerator (GiB; 0 keeps the file's): the example's 8 GiB "
        "cannot hold the step's 34 GiB of weights, which the capacity check refuses",
    )
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print(f"load before: {load()}")

    from zigzag.io.llm_workloads import llm_layer_specs
    from zigzag.io.loaders import load_accelerator, load_mapping, workload_from_specs
    from zigzag.mapping_search.network import evaluate_network
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.tokens import per_token_figures
    from zigzag.workload.llm import step_figures

    accelerator = load_accelerator(with_dram_size(args.hardware, args.dram_gib))
    entries = load_mapping(args.mapping)
    print(f"imports and inputs: {time.perf_counter() - WALL:.2f} s wall")

    t0, c0 = time.perf_counter(), time.process_time()
    llm = {"phase": "decode", "context": args.context, "batch": args.batch}
    specs, inference = llm_layer_specs(args.config, **llm)
    counts = step_figures(specs)
    workload = workload_from_specs(specs, entries, inference=inference)
    t1, c1 = time.perf_counter(), time.process_time()
    print(f"build: {len(workload.layers)} layers, {t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU")

    memo: dict = {}
    result = evaluate_network(
        workload,
        accelerator,
        SearchOptions(lpf_limit=args.lpf_limit),
        show_progress=False,
        memo=memo,
    )
    t2, c2 = time.perf_counter(), time.process_time()
    print(
        f"search and cost: {len(memo)} distinct searches, {len(result.uncosted)} uncosted; "
        f"{t2 - t1:.2f} s wall, {c2 - c1:.2f} s CPU"
    )
    figures = per_token_figures(result, clock_ghz=1.0)
    t3, c3 = time.perf_counter(), time.process_time()
    print(f"per-token figures: {t3 - t2:.2f} s wall, {c3 - c2:.2f} s CPU")
    print(
        f"step: {counts.macs:,} MACs, {counts.weight_bytes:,.0f} weight bytes read, "
        f"{counts.kv_cache_bytes:,.0f} KV-cache bytes; {result.energy:.4e} pJ, {result.latency:.4e} cycles; "
        f"{figures.tokens_per_s:.4g} tokens/s at 1 GHz, {figures.energy_per_token_J:.4g} J per token"
    )
    print(
        f"total (cold, from process start): {time.perf_counter() - WALL:.2f} s wall, "
        f"{time.process_time() - CPU:.2f} s CPU; load {load()}"
    )


if __name__ == "__main__":
    main()
