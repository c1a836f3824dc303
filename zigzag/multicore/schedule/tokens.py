"""Per-token figures of a multi-core schedule of one LLM step, with the DRAM links' busy share.

The definitions are the single-core ones (docs/models/per-token.md): the scheduled workload is one
step, a prefill over S tokens of B sequences (time to first token = the step) or a decode step
giving one token to each of B sequences with C cached tokens (time per output token = the step);
tokens per second = B x tokens / the step's time; energy per token = energy / (B x tokens).
What multi-core adds is the **DRAM links' busy share**: the part of the step during which each
link attached to the off-chip core carries data (transfers, and CNs streaming operands too large
for their core), and its **demand**: the bits it moves in the step (tensors sent over it, and the
bits streaming CNs read or write through it, as the cost model counts them) over what it can carry
in the step. A busy share near 1 with a demand near 1 means the step is bound by streaming weights
and KV cache from DRAM, so more cores buy nothing. Stream's link model also reserves, for each
streaming CN, the DRAM bandwidth its mapping would use at full speed for its whole run time (a
rate, possibly above the link's width); that reservation over the link's capacity is ``reserved``,
which is not bits moved.
"""

from __future__ import annotations

from pathlib import Path

from zigzag.multicore.schedule.dram_links import dram_link_check, dram_link_shares
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.traffic import streamed_dram_bits


def dram_reads_by_role(result: ScheduleResult) -> dict[str, float]:
    """Bits read from the off-chip memory, split by what they hold
    (:meth:`~zigzag.multicore.schedule.problem.ScheduleProblem.data_role`): ``weights``, ``kv_cache``
    (the past keys and values a decode step reads where the cache lives) and ``activations``
    (inputs, evicted data): tensors sent by the off-chip core, plus the bits CNs read from DRAM for
    the operands they stream (the cost model's accesses of the DRAM level)."""
    p = result.problem
    reads = {"weights": 0.0, "kv_cache": 0.0, "activations": 0.0}
    for t in result.transfers:
        if t.sender == p.hardware.offchip_core:
            reads[p.tensor_role(t.tensor)] += float(p.tensor_size[t.tensor])
    for n in range(p.nb_cns):
        for m, read, _ in streamed_dram_bits(p, n):
            reads[p.data_role(n, m)] += read
    return reads


def token_figures(result: ScheduleResult, inference: dict, clock_ghz: float | None = None) -> dict:
    """The per-token figures of ``result`` for the step described by ``inference`` (``phase``,
    ``batch``, ``tokens``, ``context``; e.g. ``zigzag.io.onnx_operators.export_inference``);
    times in cycles, and in seconds too when ``clock_ghz`` is given."""
    batch, tokens = int(inference.get("batch", 1)), int(inference.get("tokens", 1))
    phase = inference.get("phase", "prefill")
    decode = phase != "prefill"
    cycles = float(result.latency)
    seconds = None if clock_ghz is None else cycles / (clock_ghz * 1e9)
    shares = dram_link_shares(result)
    return {
        **bound_figures(result),
        "phase": phase,
        "batch": batch,
        "tokens": tokens,
        "context": int(inference.get("context", 0)),
        "step_cycles": cycles,
        "clock_ghz": clock_ghz,
        "step_s": seconds,
        "ttft_cycles": None if decode else cycles,
        "tpot_cycles": cycles / tokens if decode else None,
        "ttft_s": None if decode else seconds,
        "tpot_s": seconds / tokens if decode and seconds is not None else None,
        "tokens_per_cycle": batch * tokens / cycles if cycles else None,
        "tokens_per_s": None if not seconds else batch * tokens / seconds,
        "energy_per_token_pJ": float(result.energy) / (batch * tokens),
        "energy_per_token_J": float(result.energy) * 1e-12 / (batch * tokens),
        "dram_links": shares,
        "dram_link_busy_share": max((v["busy"] for v in shares.values()), default=0.0),
        "dram_link_demand": max((v["demand"] for v in shares.values()), default=0.0),
        "dram_link_reserved": max((v["reserved"] for v in shares.values()), default=0.0),
    }


def bound_figures(result: ScheduleResult) -> dict:
    """The step against the bound of its busiest DRAM link (the bits it moves over its bandwidth):
    ``bound_ratio`` = step / that bound (1 / the link's demand), ``bound_term`` the link,
    ``below_bound`` how far below (0 when not) and ``bound_note`` the sentence saying so."""
    check = dram_link_check(result)
    demand = check["dram_link_demand"]
    ratio = 1 / demand if demand and demand > 0 else None
    below = 0.0 if ratio is None else max(0.0, 1 - ratio)
    model = check["latency_model"]
    return {
        "latency_model": model,
        "bound_term": check["dram_link"],
        "bound_ratio": ratio,
        "below_bound": below,
        "bound_note": (
            f"{below:.1%} below the {check['dram_link']} bound (latency_model {model}; "
            "bandwidth_bound honours it)"
            if below > 0
            else None
        ),
    }


#: the per-token columns of a results table row (``ttft``: prefill; ``tpot``: decode; ``_s``: with a clock)
TABLE_COLUMNS = (
    "phase",
    "batch",
    "tokens",
    "context",
    "ttft_cycles",
    "tpot_cycles",
    "ttft_s",
    "tpot_s",
    "tokens_per_cycle",
    "tokens_per_s",
    "energy_per_token_pJ",
    "energy_per_token_J",
    "dram_link_busy_share",
    "dram_link_demand",
    "dram_link_reserved",
    "bound_term",
    "bound_ratio",
    "below_bound",
    "bound_note",
)


def token_columns(figures: dict | None) -> dict:
    """The :data:`TABLE_COLUMNS` (and DRAM reads by role) of :func:`token_figures`' figures; {}
    when the workload is not a transformer step (``figures`` None)."""
    if not figures:
        return {}
    return {
        **{key: figures.get(key) for key in TABLE_COLUMNS},
        **{key: value for key, value in figures.items() if key.startswith("dram_read_bits_")},
    }


def accelerator_clock(accelerator) -> float | None:
    """The clock (GHz) a multi-core accelerator file declares (``clock_ghz``), or None."""
    document = getattr(accelerator, "document", None) or {}
    return document.get("clock_ghz")


def export_figures(
    result: ScheduleResult, workload: str | Path, clock_ghz: float | None = None
) -> dict | None:
    """:func:`token_figures` of an ONNX export's step with its DRAM reads by role (None when the
    workload is not a transformer)."""
    from zigzag.io.onnx_operators import export_inference
    from zigzag.io.onnx_reading import load_model

    inference = export_inference(load_model(workload, str(workload)))
    if not inference.get("layers"):
        return None
    reads = dram_reads_by_role(result)
    return token_figures(result, inference, clock_ghz) | {
        f"dram_read_bits_{k}": v for k, v in reads.items()
    }


#: the default latency model of the multi-core floor: resolved per workload by
#: :func:`resolve_latency_model`
AUTO_LATENCY = "auto"


def is_llm_export(workload) -> bool:
    """Whether ``workload`` (an ONNX file or ``onnx.ModelProto``) is one LLM step: an export whose
    attention softmaxes make it a transformer (the workloads with per-token figures)."""
    from onnx import ModelProto

    from zigzag.io.onnx_operators import export_inference
    from zigzag.io.onnx_reading import load_model

    if not isinstance(workload, ModelProto) and not str(workload).endswith(".onnx"):
        return False
    return bool(export_inference(load_model(workload, str(workload))).get("layers"))


def resolve_latency_model(latency_model: str, workload) -> str:
    """``latency_model`` with ``auto`` resolved for ``workload``: ``bandwidth_bound`` for an LLM
    step (:func:`is_llm_export`), so that its time never falls below the DRAM link's bound,
    ``zigzag`` (Stream's link model) for anything else; other values unchanged."""
    if latency_model != AUTO_LATENCY:
        return latency_model
    return "bandwidth_bound" if is_llm_export(workload) else "zigzag"
