"""Per-token figures of one prefill or decode step (docs/models/per-token.md).

The evaluated workload is one *step*: a prefill over S prompt tokens of B sequences, or a decode
step giving one token to each of B sequences whose KV cache holds C tokens. Its latency is the
sum of its layers' latencies (cycles; seconds with the clock), its energy their sum, so:

* time to first token (prefill) = the step's time; time per output token (decode) = the step's
  time / tokens per sequence (1);
* tokens per second = B x tokens / the step's time; energy per token = energy / (B x tokens);
* weights and KV-cache bytes from the operands' roles (``zigzag.workload.footprint``); the cache
  after the step holds B x (C + tokens) tokens; a state-space model's state (role ``state``) is updated in
  place: its bytes are the state's, whatever the context, never cache growth;
* the physical bound: every weight and KV-cache byte whose outermost memory is off chip is read
  from it once per step at least, so the step takes at least those bits / that memory's read
  bandwidth (the sum of its read ports' ``bandwidth_max``); ``ratio`` = step / bound >= 1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from zigzag.cost.array import mac_bits
from zigzag.errors import InputError
from zigzag.mapping_search.capacity import Holding, step_holdings
from zigzag.tokens.bound import (
    StepBound,
    latency_model_of,
    memory_terms,
    read_bandwidth,
    step_bound,
)
from zigzag.tokens.metadata import OVERRIDABLE, _as_dict, read_inference
from zigzag.workload.footprint import footprint, kv_bytes_per_token, operand_role, state_bytes


@dataclass(frozen=True)
class MemoryFit:
    """Whether the weights, the KV cache, the activations alive at once and a state-space model's state
    each fit one on-chip memory (all its instances); None: the step has none of it."""

    memory: str
    capacity_bytes: float
    weights: bool
    kv_cache: bool | None
    activations: bool | None = None
    state: bool | None = None


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
    #: the step's physical bound (memories, ports, compute), the term that binds, step / bound
    bound: StepBound | None = None
    #: bits per operand role (weight, activation, kv_cache)
    precision: dict | None = None
    #: what each outermost memory holds during the step (weights, KV cache, activations)
    holdings: tuple[Holding, ...] = ()
    #: the rule the MAC energy followed (the accelerator's per-precision table, or unit_energy)
    mac_energy: str | None = None
    #: a state-space model's recurrent state (all layers and sequences), updated in place: it does not grow
    state_bytes: float | None = None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["fits"] = {
            f["memory"]: {k: v for k, v in f.items() if k != "memory"} for f in data["fits"]
        }
        data["uncosted_layers"] = list(self.uncosted_layers)
        data["bound"] = None if self.bound is None else self.bound.to_dict()
        data["holdings"] = {
            h.memory: {**{k: v for k, v in asdict(h).items() if k != "memory"}, "fits": h.fits}
            for h in self.holdings
        }
        return data


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
    state = state_bytes(fp)
    decode = metadata["phase"] == "decode"
    holdings = step_holdings(layers, result.accelerators, metadata)
    live = max((h.activations_bytes for h in holdings), default=0.0)
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
        fits=memory_fits(accelerator, fp.weights, kv_total, live, state),
        dram=offchip_bound(result, cycles, clock_ghz),
        uncosted_layers=tuple(getattr(result, "uncosted", ()) or ()),
        bound=step_bound(result, cycles, clock_ghz, latency_model_of(result))
        if result.layers
        else None,
        precision=precision_of(layers),
        holdings=holdings,
        mac_energy=mac_energy_rule(accelerator, layers),
        state_bytes=state,
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


def memory_fits(
    accelerator,
    weights: float,
    kv_cache: float | None,
    activations: float | None = None,
    state: float | None = None,
) -> tuple[MemoryFit, ...]:
    """For every memory below the outermost ones, innermost first: does each footprint fit (each
    on its own: the KV cache and the state are separate figures)?"""
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
                None if activations is None else activations <= capacity,
                None if state is None else state <= capacity,
            )
        )
    return tuple(fits)


def offchip_bound(result, cycles: float, clock_ghz: float | None) -> MemoryBound | None:
    """The tightest bound among the outermost memories that hold weights or KV cache (None if none)."""
    accelerator = next(iter(result.accelerators.values()))
    bounds = []
    for term in memory_terms(result):
        memory = accelerator.memory[term.name]
        bandwidth = read_bandwidth(memory) * accelerator.unroll_count(memory)
        bounds.append(
            MemoryBound(
                term.name,
                bandwidth,
                term.cycles * bandwidth / 8,
                term.cycles,
                _seconds(term.cycles, clock_ghz),
                cycles / term.cycles,
            )
        )
    return max(bounds, key=lambda b: b.bound_cycles, default=None)


def precision_of(layers) -> dict[str, list[int]]:
    """The bits of each operand role over ``layers`` (``weight``, ``activation``, ``kv_cache``;
    operands without a role count as activations)."""
    bits: dict[str, set[int]] = {}
    for layer in layers:
        for operand in (*layer.inputs, layer.output):
            role = operand_role(layer, operand) or "activation"
            value = (
                layer.final_output_precision
                if operand == layer.output
                else layer.precision[operand]
            )
            bits.setdefault(role, set()).add(int(value))
    return {role: sorted(values) for role, values in sorted(bits.items())}


def mac_energy_rule(accelerator, layers) -> str | None:
    """Which MAC energy applied: ``unit_energy_per_precision`` at the bits the MAC layers ran at,
    or ``unit_energy`` whatever the bits (None for an in-memory-computing array: its own model)."""
    array = accelerator.operational_array
    if array.is_imc:
        return None
    table = dict(getattr(array, "unit_energy_per_precision", ()) or ())
    if not table:
        return f"unit_energy {array.unit_energy:g} pJ per MAC at any precision"
    used = sorted(
        {mac_bits(layer) for layer in layers if getattr(layer, "vector_op", None) is None}
    )
    entries = ", ".join(f"{bits} bits: {table[bits]:g} pJ" for bits in used if bits in table)
    return f"unit_energy_per_precision ({entries})"


def precision_text(precision: dict[str, list[int]]) -> str:
    """``weights 8, activations 8, kv_cache 8 bits``."""
    names = {
        "weight": "weights",
        "activation": "activations",
        "kv_cache": "KV cache",
        "state": "state",
    }
    return (
        ", ".join(
            f"{names.get(role, role)} {'/'.join(map(str, bits))}"
            for role, bits in precision.items()
        )
        + " bits"
    )


def _read_once(f: TokenFigures) -> str:
    """What the memory bound reads once: the weights, and the KV cache and the state the step has."""
    parts = ["weights"] + ["KV cache"] * (f.kv_cache_bytes is not None)
    parts += ["state"] * (f.state_bytes is not None)
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


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
    clock = f"{f.clock_ghz:g} GHz" if f.clock_ghz else "unknown: give --clock-ghz"
    lines = [f"per token ({where}; clock {clock}):"]
    if f.precision:
        model = f.bound.latency_model if f.bound is not None and f.bound.latency_model else "?"
        lines.append(f"  precision: {precision_text(f.precision)}; latency model: {model}")
    if f.mac_energy:
        lines.append(f"  MAC energy: {f.mac_energy}")
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
    if f.state_bytes is not None:
        lines.append(
            f"  state: {_bytes(f.state_bytes)} for {f.batch} sequence{'s' * (f.batch > 1)}, updated in "
            "place (the same at any context)"
        )
    for held in f.holdings:
        lines.append(
            f"  {held.memory} ({_bytes(held.capacity_bytes)}) holds {_bytes(held.needed_bytes)}: "
            f"weights {_bytes(held.weights_bytes)}, "
            + (
                f"KV cache {_bytes(held.kv_cache_bytes)}, "
                if f.kv_cache_bytes is not None or held.kv_cache_bytes
                else ""
            )
            + (f"state {_bytes(held.state_bytes)}, " if held.state_bytes else "")
            + f"activations {_bytes(held.activations_bytes)}"
        )
    for fit in f.fits:
        parts = [f"weights {'fit' if fit.weights else 'do not fit'}"]
        if fit.kv_cache is not None:
            parts.append(f"KV cache {'fits' if fit.kv_cache else 'does not fit'}")
        if fit.state is not None:
            parts.append(f"state {'fits' if fit.state else 'does not fit'}")
        if fit.activations is not None:
            parts.append(f"activations {'fit' if fit.activations else 'do not fit'}")
        lines.append(f"  {fit.memory} ({_bytes(fit.capacity_bytes)}): {', '.join(parts)}")
    if f.dram is not None:
        d = f.dram
        lines.append(
            f"  {d.memory} bound: {_bytes(d.bytes)} of {_read_once(f)} at {d.read_bits_per_cycle:g} "
            f"bit/cycle >= {time(d.bound_s, d.bound_cycles)}; step / bound = {d.ratio:.4g}"
        )
    if f.bound is not None:
        b = f.bound
        lines.append(
            f"  compute bound: {time(_seconds(b.compute_cycles, f.clock_ghz), b.compute_cycles)}; "
            f"memory bound: {time(_seconds(b.memory_cycles, f.clock_ghz), b.memory_cycles)}"
        )
        lines.append(
            f"  step bound: {time(b.seconds, b.cycles)}, {b.kind} bound ({b.binding}); "
            f"step / bound = {b.ratio:.4g}"
        )
        if b.ratio < 1:
            lines.append(
                f"  below the physical bound by {b.below:.2%}: latency model {b.latency_model} "
                f"credits {b.binding} with more than it carries; latency_model bandwidth_bound "
                "does not (docs/models/per-token.md)"
            )
    if f.uncosted_layers:
        lines.append(f"  not costed (no vector unit for them): {len(f.uncosted_layers)} layers")
    return lines


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value:.4g} B"
