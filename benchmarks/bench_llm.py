#!/usr/bin/env python3
"""Speed of LLM workloads built from a configuration: a Llama-3-8B-shaped prefill and decode step, and a
context-length sweep of the decode step.

Usage:  python benchmarks/bench_llm.py [--hardware H] [--mapping M] [--lpf-limit 6] [--layers 32]
                                       [--tokens 2048] [--context 4096] [--points 20] [--max-context 8000]

1. Prefill of ``--tokens`` tokens, then one decode step after ``--context`` cached tokens, from a cold start
   (nothing evaluated yet in the process; the API keeps no disk cache): the workload generated from the
   catalogue's ``llama-3-8b`` with ``--layers`` transformer blocks, every operator a layer (the vector layers
   on the accelerator's vector unit), searched at ``--lpf-limit``. Identical layers (the 32 equal blocks)
   are searched once.
2. ``--points`` decode steps at contexts evenly spread up to ``--max-context``, the accelerator loaded once
   and the searches kept across points: only the layers whose shapes change with the context (attention's)
   are searched again.

Printed: wall and CPU seconds per part, layers and distinct searches, the figures of each step, and the
machine load (``/proc/loadavg``) before and after (the machine is shared: compare CPU seconds).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--hardware", default=str(REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml")
    )
    parser.add_argument(
        "--mapping", default=str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml")
    )
    parser.add_argument("--model", default="llama-3-8b")
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--max-context", type=int, default=8000)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print(f"load before: {load()}")

    wall, cpu = time.perf_counter(), time.process_time()
    from zigzag.io.loaders import load_accelerator, load_mapping
    from zigzag.mapping_search.network import evaluate_network
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.io.loaders import build_workload

    accelerator = load_accelerator(args.hardware)
    entries = load_mapping(args.mapping)
    options = SearchOptions(lpf_limit=args.lpf_limit)
    memo: dict = {}

    def step(**llm):
        searched = len(memo)
        workload = build_workload(args.model, entries, layers=args.layers, **llm)
        result = evaluate_network(workload, accelerator, options, show_progress=False, memo=memo)
        return workload, result, len(memo) - searched

    for llm in (
        {"phase": "prefill", "tokens": args.tokens},
        {"phase": "decode", "context": args.context},
    ):
        t0, c0 = time.perf_counter(), time.process_time()
        workload, result, searched = step(**llm)
        print(
            f"{llm['phase']:8s} {workload.inference.tokens:5d} tokens, context {workload.inference.context:5d}: "
            f"{len(workload.layers)} layers, {searched} searched, {len(result.uncosted)} uncosted; "
            f"{result.energy:.4e} pJ, {result.latency:.4e} cycles; "
            f"{time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU"
        )
    print(
        f"part 1 (imports, inputs, prefill + decode): {time.perf_counter() - wall:.2f} s wall, "
        f"{time.process_time() - cpu:.2f} s CPU; load {load()}"
    )

    wall, cpu = time.perf_counter(), time.process_time()
    contexts = [round(args.max_context * (i + 1) / args.points) for i in range(args.points)]
    searched = 0
    for context in contexts:
        workload, result, new = step(phase="decode", context=context)
        searched += new
        print(
            f"  decode at {context:5d}: {result.latency:.4e} cycles, {result.energy:.4e} pJ, {new} searched"
        )
    print(
        f"part 2 ({args.points} decode steps, contexts {contexts[0]}..{contexts[-1]}): "
        f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU, {searched} searches; "
        f"load {load()}"
    )


if __name__ == "__main__":
    main()
