#!/usr/bin/env python3
"""Speed of transformer exports on the multi-core floor: import, cost table and schedule.

Usage:  python benchmarks/bench_mc_llm.py [--cases NAME:HARDWARE:MODE ...]

Each case is an export of tests/data/stream_llm/ (2 blocks at the real widths), a hardware of
inputs/stream/hardware/ with its LLM mapping (quad core and 2 x 2 mesh: llm_quad_core.yaml; 4 x 4
mesh: llm_mesh_4x4.yaml; the quad core with a vector SIMD core: llm_vector_quad_core.yaml) and a mode,
run from a cold cost cache (a fresh folder). Printed per case: wall and CPU seconds, CNs, latency,
energy, the per-token figures (time per output token or to first token in cycles, the DRAM link's
busy share), and the machine load before and after (the machine may be shared: compare CPU seconds).

``--llama-layers N`` also runs a Llama-3-8B-shaped decode step of N blocks at 4096 cached tokens
(a shapes-only graph written by benchmarks/llama_onnx.py) on the 4 x 4 mesh (lbl), with a 1 Tbit DRAM
(the example's 10 Gbit cannot hold 8 B weights); ``--llama-prefill-tokens S`` (with ``--llama-layers``)
also its prefill over S prompt tokens in fused mode. Timed from the files to the schedule: import, CN
graph, cost table (cold) and schedule. The mesh x bandwidth x SRAM sweep is not measured here.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPINGS = {
    "tpu_like_quad_core": "llm_quad_core",
    "tpu_like_mesh_2x2": "llm_quad_core",
    "tpu_like_mesh_4x4": "llm_mesh_4x4",
    "tpu_like_quad_core_vector": "llm_vector_quad_core",
}
DEFAULT_CASES = (
    "llama_tiny_decode:tpu_like_mesh_4x4:lbl",
    "llama_tiny_prefill:tpu_like_mesh_4x4:fused",
    "gpt2_decode:tpu_like_quad_core_vector:lbl",
    "bert_base:tpu_like_mesh_2x2:fused",
)


def load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (cost jobs may run in workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", nargs="*", default=list(DEFAULT_CASES), help="NAME:HARDWARE:MODE items"
    )
    parser.add_argument(
        "--llama-layers", type=int, default=0, help="also a Llama-3-8B-shaped decode of N blocks"
    )
    parser.add_argument(
        "--llama-prefill-tokens",
        type=int,
        default=0,
        help="with --llama-layers: also its prefill over S tokens (fused)",
    )
    parser.add_argument(
        "--llama-prefill-modes",
        nargs="*",
        default=["fused"],
        choices=("lbl", "fused"),
        help="with --llama-prefill-tokens: the prefill's modes (default fused)",
    )
    parser.add_argument(
        "--latency-model",
        default="auto",
        choices=("auto", "zigzag", "bandwidth_bound"),
        help="the Llama runs' latency model (run_stream's; default auto: bandwidth_bound for an LLM)",
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from zigzag.multicore.pipeline import run_stream

    print(f"load before: {load()}")
    for case in args.cases:
        name, hardware, mode = case.split(":")
        with tempfile.TemporaryDirectory() as folder:
            wall, cpu = time.perf_counter(), cpu_seconds()
            result = run_stream(
                REPO / "inputs/stream/hardware" / f"{hardware}.yaml",
                REPO / "tests/data/stream_llm" / f"{name}.onnx",
                REPO / "inputs/stream/mapping" / f"{MAPPINGS[hardware]}.yaml",
                mode,
                cache=Path(folder) / "cache",
                output=Path(folder) / "run",
            )
            wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
            tokens = (
                json.loads((Path(folder) / "run" / "summary.json").read_text()).get("per_token")
                or {}
            )
        step = tokens.get("tpot_cycles") or tokens.get("ttft_cycles") or 0.0
        print(
            f"{name:22s} {hardware:26s} {mode:5s} {wall:7.2f} s wall {cpu:7.2f} s CPU  {result.problem.nb_cns:6d} CNs "
            f"latency {result.latency:14,.0f}  energy {result.energy:.4g} pJ  step {step:,.0f} cycles  "
            f"DRAM link busy {tokens.get('dram_link_busy_share', 0):.0%}"
        )
    if args.llama_layers:
        llama(args.llama_layers, 0, latency_model=args.latency_model)
        for mode in args.llama_prefill_modes if args.llama_prefill_tokens else ():
            llama(args.llama_layers, args.llama_prefill_tokens, mode, args.latency_model)
    print(f"load after: {load()}")


def llama(
    layers: int, prefill_tokens: int, mode: str | None = None, latency_model: str = "auto"
) -> None:
    """The Llama-3-8B-shaped decode step (lbl) or, with ``prefill_tokens``, its prefill (fused) on the
    4 x 4 mesh with a large DRAM, cold cost cache; ``mode`` overrides the mode, ``latency_model`` is
    run_stream's (``bandwidth_bound``: streaming CNs last their DRAM bits over the link)."""
    import sys

    from zigzag.multicore.pipeline import run_stream

    sys.path.insert(0, str(REPO / "benchmarks"))
    from llama_onnx import llama_decode, llama_prefill

    cores = REPO / "inputs/stream/hardware/cores"
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        dram = (
            (cores / "offchip.yaml").read_text().replace("size: 10000000000", "size: 1000000000000")
        )
        (folder / "offchip_1tbit.yaml").write_text(dram)
        (folder / "mesh.yaml").write_text(
            f"name: tpu_like_mesh_4x4_large_dram\nmesh: {{rows: 4, cols: 4, core: {cores / 'tpu_like.yaml'}, "
            f"pooling_core: {cores / 'pooling.yaml'}, simd_core: {cores / 'simd.yaml'}}}\n"
            f"offchip_core: {folder / 'offchip_1tbit.yaml'}\nbandwidth: 32\nunit_energy_cost: 0\n"
        )
        if prefill_tokens:
            model, default, what = (
                llama_prefill(folder / "llama.onnx", layers=layers, tokens=prefill_tokens),
                "fused",
                f"prefill {prefill_tokens}",
            )
        else:
            model, default, what = (
                llama_decode(folder / "llama.onnx", layers=layers),
                "lbl",
                "decode",
            )
        mode = mode or default
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = run_stream(
            folder / "mesh.yaml",
            model,
            REPO / "inputs/stream/mapping/llm_mesh_4x4.yaml",
            mode,
            cache=folder / "cache",
            output=folder / "run",
            latency_model=latency_model,
        )
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        tokens = json.loads((folder / "run" / "summary.json").read_text()).get("per_token") or {}
    step = "TTFT" if prefill_tokens else "TPOT"
    print(
        f"llama-3-8b {what} x{layers} tpu_like_mesh_4x4 (1 Tbit DRAM) {mode:5s} {wall:7.2f} s wall {cpu:7.2f} s CPU  "
        f"{result.problem.nb_cns:6d} CNs latency {result.latency:14,.0f}  energy {result.energy:.4g} pJ  "
        f"{step} {tokens.get('step_cycles', 0):,.0f} cycles  {tokens.get('energy_per_token_pJ', 0):.4g} pJ/token  "
        f"DRAM link busy {tokens.get('dram_link_busy_share', 0):.0%} demand {tokens.get('dram_link_demand', 0):.2f} "
        f"[{result.problem.latency_model}]"
    )


if __name__ == "__main__":
    main()
