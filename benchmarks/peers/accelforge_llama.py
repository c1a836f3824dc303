"""Llama-3-8B on the peers' simple device, in AccelForge (1.0.467): run with AccelForge's own
venv's python (never the project's); prints one JSON line {"decode_ms", "prefill_ms", ...}.

One block is mapped (accelforge_llama.yaml) and counted 32 times, the LM head once (on the last
token for decode, on every prompt token for a prefill, as GenZ and our generator with
``logits: all`` do). The device is accelforge_device.yaml.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def latency_s(m: int, mf: int, block: bool) -> float:
    import accelforge as af

    spec = af.Spec.from_yaml(
        str(HERE / "accelforge_device.yaml"),
        str(HERE / "accelforge_llama.yaml"),
        jinja_parse_data={"M": m, "MF": mf, "V": 128256, "BLOCK": block},
    )
    spec.mapper.metrics = af.Metrics.LATENCY
    return float(spec.map_workload_to_arch(print_progress=False).latency())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--prompt", type=int, default=2048)
    parser.add_argument("--skip-prefill", action="store_true")
    args = parser.parse_args()
    os.chdir(tempfile.mkdtemp())  # AccelForge writes mapping.svg to the working folder
    result = {"tool": "AccelForge", "context": args.context, "prompt": args.prompt, "batch": 1}
    block, head = latency_s(1, args.context + 1, True), latency_s(1, 1, False)
    result["decode_ms"] = 1e3 * (32 * block + head)
    result["decode_terms_ms"] = {"blocks": 32e3 * block, "lm_head": 1e3 * head}
    if not args.skip_prefill:
        block, head = latency_s(args.prompt, args.prompt, True), latency_s(args.prompt, 1, False)
        result["prefill_ms"] = 1e3 * (32 * block + head)
        result["prefill_terms_ms"] = {"blocks": 32e3 * block, "lm_head": 1e3 * head}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
