"""Per-token figures of a multi-core schedule of one LLM step, with the DRAM links' busy share.

The definitions are the single-core ones (docs/models/per-token.md): the scheduled workload is one
step, a prefill over S tokens of B sequences (time to first token = the step) or a decode step
giving one token to each of B sequences with C cached tokens (time per output token = the step);
tokens per second = B x tokens / the step's time; energy per token = energy / (B x tokens).
What multi-core adds is the **DRAM links' busy share**: the part of the step during which each
link attached to the off-chip core carries data (transfers, and CNs streaming operands too large
for their core), and its **demand**: the bits asked of it over what it can carry in the step. A
busy share near 1 with a demand above 1 means the step is bound by streaming weights and KV cache
from DRAM, so more cores buy nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

from zigzag.stream.schedule.problem import I2, O
from zigzag.stream.schedule.result import ScheduleResult


def dram_link_shares(result: ScheduleResult) -> dict[str, dict[str, float]]:
    """Per link attached to the off-chip core (by label): ``busy`` (0..1), the share of the step
    during which it carries something, and ``demand``, the bits the step asks of it over what its
    bandwidth can carry in the step (above 1: the step is bound by that link)."""
    hw = result.problem.hardware
    attached = set()
    for (sender, receiver), route in hw.routes.items():
        if route and sender == hw.offchip_core:
            attached.add(route[0])
        if route and receiver == hw.offchip_core:
            attached.add(route[-1])
    shares = {}
    for index in sorted(attached):
        link = hw.links[index]
        events = [e for e in result.link_events[index] if e.activity > 0 and e.end > e.start]
        if result.latency <= 0 or math.isinf(link.bandwidth):
            shares[link.label] = {"busy": 0.0, "demand": 0.0}
            continue
        busy, reach = 0.0, -math.inf
        for start, end in sorted((e.start, e.end) for e in events):  # the union of the busy intervals
            busy += max(0.0, end - max(start, reach))
            reach = max(reach, end)
        carried = sum((e.end - e.start) * e.activity for e in events)
        shares[link.label] = {"busy": busy / result.latency, "demand": carried / (link.bandwidth * result.latency)}
    return shares


def dram_reads_by_role(result: ScheduleResult, layer_types: dict[int, str]) -> dict[str, float]:
    """Bits read from the off-chip memory, split into ``weights`` (constant operands), ``kv_cache``
    (the past keys and values a cache-append layer reads) and ``activations`` (everything else:
    inputs, evicted data): tensors sent by the off-chip core, plus operands CNs stream while they
    run. ``layer_types``: layer id -> the layer's type (``cache_append`` marks the cache)."""
    p = result.problem
    reads = {"weights": 0.0, "kv_cache": 0.0, "activations": 0.0}

    def role(cn: int, m: int) -> str:
        if m not in p.constants[cn]:
            return "activations"
        return "kv_cache" if layer_types.get(int(p.layer[cn])) == "cache_append" and m == I2 else "weights"

    for t in result.transfers:
        if t.sender == p.hardware.offchip_core:
            reads[role(int(p.tensor_origin[t.tensor]), t.memory_operand)] += float(p.tensor_size[t.tensor])
    for n, operands in enumerate(p.too_large):
        inputs = [m for m in operands if m != O]
        if inputs:  # the CN's streaming read bandwidth, shared equally by its streamed inputs
            bits = float(p.bw_from_offchip[n]) * float(result.end[n] - result.start[n]) / len(inputs)
            for m in inputs:
                reads[role(n, m)] += bits
    return reads


def token_figures(result: ScheduleResult, inference: dict, clock_ghz: float | None = None) -> dict:
    """The per-token figures of ``result`` for the step described by ``inference`` (``phase``,
    ``batch``, ``tokens``, ``context``; e.g. ``zigzag.io.onnx_operators.export_inference``)."""
    batch, tokens = int(inference.get("batch", 1)), int(inference.get("tokens", 1))
    phase = inference.get("phase", "prefill")
    cycles = float(result.latency)
    seconds = None if clock_ghz is None else cycles / (clock_ghz * 1e9)
    shares = dram_link_shares(result)
    figures = {
        "phase": phase, "batch": batch, "tokens": tokens, "context": int(inference.get("context", 0)),
        "step_cycles": cycles, "clock_ghz": clock_ghz, "step_s": seconds,
        ("ttft_cycles" if phase == "prefill" else "tpot_cycles"): cycles,
        "tokens_per_cycle": batch * tokens / cycles if cycles else None,
        "tokens_per_s": None if not seconds else batch * tokens / seconds,
        "energy_per_token_pJ": float(result.energy) / (batch * tokens),
        "dram_links": shares,
        "dram_link_busy_share": max((v["busy"] for v in shares.values()), default=0.0),
        "dram_link_demand": max((v["demand"] for v in shares.values()), default=0.0),
    }
    if seconds is not None:
        figures["ttft_s" if phase == "prefill" else "tpot_s"] = seconds
    return figures


def export_figures(result: ScheduleResult, workload: str | Path, layer_types: dict[int, str],
                   clock_ghz: float | None = None) -> dict | None:
    """:func:`token_figures` of an ONNX export's step with its DRAM reads by role (None when the
    workload is not a transformer)."""
    from zigzag.io.onnx_operators import export_inference
    from zigzag.io.onnx_reading import load_model

    inference = export_inference(load_model(workload, str(workload)))
    if not inference.get("layers"):
        return None
    reads = dram_reads_by_role(result, layer_types)
    return token_figures(result, inference, clock_ghz) | {f"dram_read_bits_{k}": v for k, v in reads.items()}
