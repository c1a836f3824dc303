"""Per-token figures of one prefill or decode step (docs/models/per-token.md).

The evaluated workload is one *step*: a prefill over S prompt tokens of B sequences, or a decode
step giving one token to each of B sequences whose KV cache holds C tokens. Its latency is the
sum of its layers' latencies (cycles; seconds with the clock), its energy their sum, so:

* time to first token (prefill) = the step's time; time per output token (decode) = the step's
  time / tokens per sequence (1);
* tokens per second = B x tokens / the step's time; energy per token = energy / (B x tokens);
* weights and KV-cache bytes from the operands' roles (``zigzag.tokens.footprint``); the cache
  after the step holds B x (C + tokens) tokens;
* the physical bound: every weight and KV-cache byte whose outermost memory is off chip is read
  from it once per step at least, so the step takes at least those bits / that memory's read
  bandwidth (the sum of its read ports' ``bandwidth_max``); ``ratio`` = step / bound >= 1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from zigzag.errors import InputError
from zigzag.tokens.footprint import footprint, kv_bytes_per_token, operand_bytes, operand_role
from zigzag.tokens.metadata import OVERRIDABLE, _as_dict, read_inference


@dataclass(frozen=True)
class MemoryFit:
    """Whether the weights and the KV cache each fit one on-chip memory (all its instances)."""

    memory: str
    capacity_bytes: float
    weights: bool
    kv_cache: bool | None


@dataclass(frozen=True)
class MemoryBound:
    """The lower bound a memory's read bandwidth puts on the step."""

    memory: str
    read_bits_per_cycle: float
    bytes: float
    bound_cycles: float
    bound_s: float | None
    ratio: float


@dataclass(frozen=True)
class TokenFigures:
    """The per-token figures of one step (times in s when a clock is known, else None)."""

    model: str | None
    phase: str
    batch: int
    tokens: int
    context: int
    clock_ghz: float | None
    step_cycles: float
    step_s: float | None
    ttft_s: float | None
    tpot_s: float | None
    tpot_cycles: float | None
    tokens_per_s: float | None
    energy_pJ: float
    energy_per_token_pJ: float
    energy_per_token_J: float
    weights_bytes: float
    kv_cache_bytes_per_token: float | None
    kv_cache_bytes: float | None
    fits: tuple[MemoryFit, ...]
    dram: MemoryBound | None
    uncosted_layers: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        data = asdict(self)
        data["fits"] = {
            f["memory"]: {k: v for k, v in f.items() if k != "memory"} for f in data["fits"]
        }
        data["uncosted_layers"] = list(self.uncosted_layers)
        return data


def read_bandwidth(memory) -> float:
    """Bits per cycle a memory can read out: the sum of ``bandwidth_max`` over its ports that
    carry a read (``tl`` or ``th``), for one instance."""
    return float(
        sum(
            p.bandwidth_max for p in memory.ports if any(d in ("tl", "th") for _, d in p.allocation)
        )
    )


def _seconds(cycles: float, clock_ghz: float | None) -> float | None:
    return None if clock_ghz is None else cycles / (clock_ghz * 1e9)


def per_token_figures(
    result,
    inference=None,
    *,
    clock_ghz: float | None = None,
    accelerator=None,
    source: str = "per-token figures",
) -> TokenFigures:
    """The per-token figures of ``result`` (a NetworkResult of one prefill or decode step).

    ``inference``: the metadata (an ``Inference``, a dict, or overrides on top of
    ``result.inference``; see :func:`zigzag.tokens.read_inference`). ``clock_ghz``: the
    accelerator's clock (default: an in-memory-computing array's own clock period, else
    figures in cycles only). ``accelerator``: the one whose memories are checked (default: the
    accelerator of the first layer)."""
    metadata = read_inference(
        getattr(result, "inference", None), _overrides(inference), source=source
    )
    if metadata is None:
        raise InputError(
            source,
            "phase",
            "the workload has no inference metadata; give phase, batch, tokens, "
            "context (e.g. zigzag run --phase decode --context 4096)",
        )
    if clock_ghz is not None and (isinstance(clock_ghz, bool) or not clock_ghz > 0):
        raise InputError(
            source, "clock_ghz", f"{clock_ghz!r} is not a clock frequency in GHz; give a number > 0"
        )
    total = result.total
    if clock_ghz is None and total.tclk is not None:
        clock_ghz = 1 / total.tclk
    layers = [layer for layer, _ in result.layers]
    if accelerator is None:
        accelerator = next(iter(result.accelerators.values()))
    cycles = float(total.latency_total2)
    seconds = _seconds(cycles, clock_ghz)
    batch, tokens, context = metadata["batch"], metadata["tokens"], metadata["context"]
    produced = batch * tokens
    fp = footprint(layers)
    per_token = kv_bytes_per_token(fp, metadata)
    kv_total = None if per_token is None else per_token * batch * (context + tokens)
    decode = metadata["phase"] == "decode"
    return TokenFigures(
        model=metadata["model"],
        phase=metadata["phase"],
        batch=batch,
        tokens=tokens,
        context=context,
        clock_ghz=clock_ghz,
        step_cycles=cycles,
        step_s=seconds,
        ttft_s=None if decode else seconds,
        tpot_s=None if not decode or seconds is None else seconds / tokens,
        tpot_cycles=cycles / tokens if decode else None,
        tokens_per_s=None if seconds is None or seconds == 0 else produced / seconds,
        energy_pJ=float(total.energy_total),
        energy_per_token_pJ=total.energy_total / produced,
        energy_per_token_J=total.energy_total * 1e-12 / produced,
        weights_bytes=fp.weights,
        kv_cache_bytes_per_token=per_token,
        kv_cache_bytes=kv_total,
        fits=memory_fits(accelerator, fp.weights, kv_total),
        dram=offchip_bound(result, cycles, clock_ghz),
        uncosted_layers=tuple(getattr(result, "uncosted", ()) or ()),
    )


def _overrides(inference) -> dict | None:
    """Metadata given by the caller: a full record or some of phase/batch/tokens/context."""
    if inference is None:
        return None

    data = _as_dict(inference)
    return {k: data.get(k) for k in OVERRIDABLE if data.get(k) is not None}


def outermost_memories(accelerator) -> set[str]:
    """Names of the memories at the top of some operand's hierarchy (off chip in the examples)."""
    return {accelerator.top_memory(op).name for op in accelerator.memory_operands}


def memory_fits(accelerator, weights: float, kv_cache: float | None) -> tuple[MemoryFit, ...]:
    """For every memory below the outermost ones, innermost first: does each footprint fit?"""
    top = outermost_memories(accelerator)
    fits = []
    for memory in accelerator.memories:
        if memory.name in top:
            continue
        capacity = memory.size * accelerator.unroll_count(memory) / 8
        fits.append(
            MemoryFit(
                memory.name,
                capacity,
                weights <= capacity,
                None if kv_cache is None else kv_cache <= capacity,
            )
        )
    return tuple(fits)


def offchip_bytes(result) -> dict[str, float]:
    """Bytes of weight and KV-cache inputs per outermost memory they are read from."""
    read: dict[str, float] = {}
    for layer, _ in result.layers:
        accelerator = result.accelerators[layer.id]
        for operand in layer.inputs:
            if operand_role(layer, operand) in ("weight", "kv_cache"):
                top = accelerator.top_memory(layer.memory_operand(operand)).name
                read[top] = read.get(top, 0.0) + operand_bytes(layer, operand)
    return read


def offchip_bound(result, cycles: float, clock_ghz: float | None) -> MemoryBound | None:
    """The tightest bound among the outermost memories that hold weights or KV cache (None if none)."""
    accelerator = next(iter(result.accelerators.values()))
    bounds = []
    for name, size in offchip_bytes(result).items():
        memory = accelerator.memory[name]
        bandwidth = read_bandwidth(memory) * accelerator.unroll_count(memory)
        if bandwidth <= 0 or size <= 0:
            continue
        bound = size * 8 / bandwidth
        bounds.append(
            MemoryBound(name, bandwidth, size, bound, _seconds(bound, clock_ghz), cycles / bound)
        )
    return max(bounds, key=lambda b: b.bound_cycles, default=None)


def summary_lines(figures: TokenFigures) -> list[str]:
    """The figures as printed by ``zigzag run``."""

    def time(seconds, cycles):
        return (
            f"{cycles:.6g} cycles"
            if seconds is None
            else f"{seconds * 1e3:.6g} ms ({cycles:.6g} cycles)"
        )

    f = figures
    where = f"{f.model + ' ' if f.model else ''}{f.phase}, batch {f.batch}, tokens {f.tokens}, context {f.context}"
    lines = [
        f"per token ({where}; clock {f'{f.clock_ghz:g} GHz' if f.clock_ghz else 'unknown: give --clock-ghz'}):"
    ]
    if f.phase == "prefill":
        lines.append(f"  time to first token: {time(f.ttft_s, f.step_cycles)}")
    else:
        lines.append(f"  time per output token: {time(f.tpot_s, f.tpot_cycles)}")
    if f.tokens_per_s is not None:
        lines.append(f"  tokens/s at batch {f.batch}: {f.tokens_per_s:.6g}")
    lines.append(
        f"  energy per token: {f.energy_per_token_pJ:.6g} pJ ({f.energy_per_token_J:.6g} J)"
    )
    lines.append(f"  weights: {_bytes(f.weights_bytes)}")
    if f.kv_cache_bytes_per_token is not None:
        lines.append(
            f"  KV cache: {_bytes(f.kv_cache_bytes_per_token)} per token, {_bytes(f.kv_cache_bytes)} "
            f"for {f.batch} x {f.context + f.tokens} tokens"
        )
    for fit in f.fits:
        kv = (
            ""
            if fit.kv_cache is None
            else f", KV cache {'fits' if fit.kv_cache else 'does not fit'}"
        )
        lines.append(
            f"  {fit.memory} ({_bytes(fit.capacity_bytes)}): weights "
            f"{'fit' if fit.weights else 'do not fit'}{kv}"
        )
    if f.dram is not None:
        d = f.dram
        lines.append(
            f"  {d.memory} bound: {_bytes(d.bytes)} of weights and KV cache at {d.read_bits_per_cycle:g} "
            f"bit/cycle >= {time(d.bound_s, d.bound_cycles)}; step / bound = {d.ratio:.4g}"
        )
        if d.ratio < 1:
            lines.append(
                f"  below the physical limit by {1 - d.ratio:.2%}: ZigZag's latency model hides part of the "
                f"transfers from {d.memory}; latency_model bandwidth_bound does not (docs/models/per-token.md)"
            )
    if f.uncosted_layers:
        lines.append(f"  not costed (no vector unit for them): {len(f.uncosted_layers)} layers")
    return lines


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value:.4g} B"
