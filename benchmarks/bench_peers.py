"""The same LLM questions on zigzag-flow and two peer tools, on one simple device (docs/peers.md).

The device: 128 x 128 int8 MACs at 1 GHz, 128 GB/s DRAM, 32 MiB SRAM, 8-bit weights, activations and
KV cache (ours: benchmarks/peers/peer_device.yaml). The questions: Llama-3-8B's time per output token
after 4,096 cached tokens (batch 1), and the time to first token of a 2,048-token prefill.

The peers run in their own virtual environments, never the project's: GenZ (PyPI ``genz-llm``
0.0.16) and AccelForge (PyPI ``accelforge`` 1.0.467), each given by its venv's folder
(``--genz-venv``, ``--accelforge-venv``); a venv that is absent is reported and skipped. Ours runs in
this process (the project's venv). Prints one line per tool and, for the prefill, the time by kind
of layer (matrix products of the blocks, attention, LM head) against the array's ideal.

    python benchmarks/bench_peers.py --genz-venv /work/venvs/genz --accelforge-venv /work/venvs/accelforge
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEVICE = HERE / "peers" / "peer_device.yaml"
MAPPING = HERE / "peers" / "peer_device.mapping.yaml"
CLOCK_GHZ = 1.0


def ours(phase: str, context: int, prompt: int) -> dict:
    """zigzag-flow's step on the device: its time and, per kind of layer, its cycles and ideal cycles."""
    from zigzag.api import run
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.tokens import per_token_figures
    from zigzag.tokens.workloads import llm_document

    fields = {"context": context} if phase == "decode" else {"tokens": prompt}
    started = time.perf_counter()
    result = run(
        llm_document(REPO / "inputs" / "workload" / f"llama-3-8b_{phase}.llm.yaml", fields),
        str(DEVICE),
        str(MAPPING),
        SearchOptions(lpf_limit=6, latency_model="bandwidth_bound"),
        show_progress=False,
    )
    figures = per_token_figures(result, clock_ghz=CLOCK_GHZ)
    terms: dict[str, list[float]] = {}
    for layer, cost in result.layers:
        kind = (
            "attention"
            if re.search(r"self_attn/MatMul", layer.name)
            else "lm_head"
            if "lm_head" in layer.name
            else "projections"
        )
        entry = terms.setdefault(kind, [0.0, 0.0])
        entry[0] += cost.latency_total2 / CLOCK_GHZ * 1e-6
        entry[1] += cost.ideal_cycle / CLOCK_GHZ * 1e-6
    step_ms = (figures.tpot_s if phase == "decode" else figures.ttft_s) * 1e3
    return {
        "ms": step_ms,
        "terms_ms": {k: round(v[0], 2) for k, v in terms.items()},
        "ideal_ms": {k: round(v[1], 2) for k, v in terms.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }


def peer(script: str, venv: Path, args: list[str]) -> dict | str:
    """One peer's JSON line, run with its venv's python; a sentence when it cannot run."""
    python = venv / "bin" / "python"
    if not python.exists():
        return f"no venv at {venv} (create it: python -m venv {venv} && {venv}/bin/pip install <package>)"
    done = subprocess.run(
        [str(python), str(HERE / "peers" / script), *args], capture_output=True, text=True
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return f"failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--genz-venv", type=Path, default=Path("/work/venvs/genz"))
    parser.add_argument("--accelforge-venv", type=Path, default=Path("/work/venvs/accelforge"))
    parser.add_argument(
        "--context", type=int, default=4096, help="cached tokens of the decode step"
    )
    parser.add_argument("--prompt", type=int, default=2048, help="tokens of the prefill")
    parser.add_argument("--skip", nargs="*", default=[], choices=["ours", "genz", "accelforge"])
    args = parser.parse_args()
    sizes = ["--context", str(args.context), "--prompt", str(args.prompt)]
    rows = {}
    if "ours" not in args.skip:
        rows["zigzag-flow"] = {
            "decode_ms": (decode := ours("decode", args.context, args.prompt))["ms"],
            "prefill_ms": (prefill := ours("prefill", args.context, args.prompt))["ms"],
            "prefill_terms_ms": prefill["terms_ms"],
            "prefill_ideal_ms": prefill["ideal_ms"],
            "seconds": decode["seconds"] + prefill["seconds"],
        }
    if "genz" not in args.skip:
        rows["GenZ 0.0.16"] = peer("genz_llama.py", args.genz_venv, sizes)
    if "accelforge" not in args.skip:
        rows["AccelForge 1.0.467"] = peer("accelforge_llama.py", args.accelforge_venv, sizes)
    print(
        f"Llama-3-8B on 128x128 MACs at 1 GHz, 128 GB/s, 32 MiB, 8-bit: decode after {args.context} "
        f"tokens (ms per token) and prefill of {args.prompt} tokens (ms to first token)"
    )
    for tool, row in rows.items():
        if isinstance(row, str):
            print(f"  {tool:20} not run: {row}")
            continue
        decode, prefill = row.get("decode_ms"), row.get("prefill_ms")
        print(
            f"  {tool:20} decode {decode:8.2f} ms   prefill "
            + (f"{prefill:9.1f} ms" if prefill is not None else "not run")
        )
        for key in ("prefill_terms_ms", "prefill_ideal_ms", "decode_terms_ms"):
            if row.get(key):
                print(f"  {'':20}   {key}: {json.dumps(row[key])}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
