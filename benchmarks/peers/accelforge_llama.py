"""Llama-3-8B on the peers' simple device, in AccelForge (1.0.467): run with AccelForge's own
venv's python (never the project's); prints one JSON line {"decode_ms", "prefill_ms", ...}.

One block's einsums are mapped (accelforge_llama.yaml), each on its own, and counted 32 times, the
LM head once (on the last
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


def latency_s(m: int, mf: int, block: bool, jobs: int = 1) -> dict[str, float]:
    """Each einsum's latency in seconds, each mapped on its own (mapping the block's einsums
    jointly, fusion included, took more than 25 minutes on a loaded 2-core machine), by ``jobs``
    mapper processes (the 2,048-token q projection at load ~20 on 2 cores: 294 s of wall time with
    AccelForge's default pool of worker processes, 116 s with one; the same mapping)."""
    import accelforge as af

    af.set_n_parallel_jobs(jobs)

    def spec():
        made = af.Spec.from_yaml(
            str(HERE / "accelforge_device.yaml"),
            str(HERE / "accelforge_llama.yaml"),
            jinja_parse_data={"M": m, "MF": mf, "V": 128256, "BLOCK": block},
        )
        made.mapper.metrics = af.Metrics.LATENCY
        return made

    names = [e.name for e in spec().workload.einsums]
    times = {}
    for name in names:
        mapped = spec().map_workload_to_arch(einsum_names=[name], print_progress=False)
        times[name] = float(mapped.latency())
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--prompt", type=int, default=2048)
    parser.add_argument("--skip-prefill", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="AccelForge's mapper processes")
    args = parser.parse_args()
    os.chdir(tempfile.mkdtemp())  # AccelForge writes mapping.svg to the working folder
    result = {"tool": "AccelForge", "context": args.context, "prompt": args.prompt, "batch": 1}
    for phase, m, mf in (("decode", 1, args.context + 1), ("prefill", args.prompt, args.prompt)):
        if phase == "prefill" and args.skip_prefill:
            continue
        block, head = latency_s(m, mf, True, args.jobs), latency_s(m, 1, False, args.jobs)
        result[f"{phase}_ms"] = 1e3 * (32 * sum(block.values()) + sum(head.values()))
        result[f"{phase}_terms_ms"] = {
            **{name: round(32e3 * t, 3) for name, t in block.items()},
            **{name: round(1e3 * t, 3) for name, t in head.items()},
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
