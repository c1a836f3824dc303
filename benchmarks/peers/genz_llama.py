"""Llama-3-8B on the peers' simple device, in GenZ (genz-llm 0.0.16): run with GenZ's own venv's
python (never the project's), prints one JSON line {"decode_ms", "prefill_ms", ...}.

The device: 128 x 128 int8 MACs at 1 GHz (32.77 int8 TOP/s), 128 GB/s DRAM, 32 MiB SRAM, 8-bit
weights, activations and KV cache. GenZ counts bandwidths in GiB/s and compute in bf16 TFLOP/s
(int8 at twice the rate), so the figures are converted below.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import warnings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--prompt", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.chdir(tempfile.mkdtemp())  # GenZ writes its model files to the working folder
    from GenZ import System, decode_moddeling, prefill_moddeling

    macs, clock_hz = 128 * 128, 1e9
    int8_ops = 2 * macs * clock_hz  # 32.77e12 operations per second
    system = System(
        flops=int8_ops / 2 / 1e12,  # GenZ's bf16 TFLOP/s; int8 runs at twice this
        frequency=clock_hz / 1e6,
        offchip_mem_bw=128e9 / 2**30,  # GiB/s
        off_chip_mem_size=16 * 1024,  # MiB
        on_chip_mem_size=32,  # MiB
        onchip_mem_bw=1e6,  # on-chip traffic not limiting, as in the other tools' device
        bits="int8",
    )
    model = "meta-llama/Llama-3.1-8B"  # GenZ's entry: the Llama-3-8B widths (32 blocks, GQA 8)
    decode = decode_moddeling(
        model=model,
        batch_size=args.batch,
        input_tokens=args.context,
        output_tokens=1,
        Bb=1,
        system_name=system,
        bits="int8",
    )
    prefill = prefill_moddeling(
        model=model,
        batch_size=args.batch,
        input_tokens=args.prompt,
        system_name=system,
        bits="int8",
    )
    # the prefill's time by operator (GenZ's own table): the block's operators count 32 times
    # (between Repeat and End Repeat), the embeddings and the classifier once
    terms = {
        str(op["Layer Name"]): round(float(op["Latency (msec)"]), 3)
        for _, op in prefill["model_df"].iterrows()
        if float(op["Latency (msec)"]) > 0
    }
    print(
        json.dumps(
            {
                "tool": "GenZ",
                "decode_ms": float(decode["Latency"]),
                "prefill_ms": float(prefill["Latency"]),
                "prefill_terms_ms": terms,
                "blocks": 32,
                "context": args.context,
                "prompt": args.prompt,
                "batch": args.batch,
            }
        )
    )


if __name__ == "__main__":
    main()
