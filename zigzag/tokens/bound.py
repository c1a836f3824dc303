"""The physical bound of one step: no latency model may report it faster (docs/models/per-token.md).

A step's layers run one after the other on one core, so the step lasts at least the largest of

* per outermost memory (DRAM in the examples): the bits of every weight and KV-cache input read
  from it, each read once, over its read bandwidth (the sum of its read ports' ``bandwidth_max``
  times its instances): term ``<memory>``, kind ``memory``;
* per memory port: the bits the layers' mappings move through it (every operand and direction it
  serves, as the cost model counts them) over its ``bandwidth_max``, summed over the layers: term
  ``<memory>.<port>``, kind ``port``;
* the operations over the peak rate of the unit that runs them (the MAC array's units, a vector
  unit's or an in-memory-computing array's operations per ideal cycle), summed over the layers:
  term ``compute``.

``ratio`` = step / bound: 1 or more under the ``bandwidth_bound`` latency model (every layer lasts
at least every port's bits over its bandwidth); ZigZag's model can go below (its on-loading
estimate credits a port with spare bandwidth while it carries the weights).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from zigzag.cost.layer_result import LayerCostResult
from zigzag.workload.footprint import operand_bytes, operand_role
from zigzag.tokens.roofline import _peak


@dataclass(frozen=True)
class BoundTerm:
    """One term of the bound: its name, kind (``memory``, ``port`` or ``compute``) and cycles."""

    name: str
    kind: str
    cycles: float


@dataclass(frozen=True)
class StepBound:
    """The step's physical bound, the term that binds and how the step compares with it."""

    cycles: float
    seconds: float | None
    binding: str
    kind: str
    ratio: float
    latency_model: str | None
    terms: tuple[BoundTerm, ...]

    @property
    def memory_cycles(self) -> float:
        """The largest memory or port term (the bandwidth bound)."""
        return max((t.cycles for t in self.terms if t.kind != "compute"), default=0.0)

    @property
    def compute_cycles(self) -> float:
        """The compute term."""
        return next((t.cycles for t in self.terms if t.kind == "compute"), 0.0)

    @property
    def below(self) -> float:
        """How far below the bound the step is (0 when it is not)."""
        return max(0.0, 1.0 - self.ratio)

    def note(self) -> str:
        """One line saying how far below the bound the step is ('' when it is not)."""
        if self.ratio >= 1:
            return ""
        return (
            f"{self.below:.1%} below the {self.binding} bound "
            f"(latency_model {self.latency_model or 'zigzag'}; bandwidth_bound honours it)"
        )

    def to_dict(self) -> dict:
        return {
            "cycles": self.cycles,
            "seconds": self.seconds,
            "binding": self.binding,
            "kind": self.kind,
            "ratio": self.ratio,
            "latency_model": self.latency_model,
            "memory_cycles": self.memory_cycles,
            "compute_cycles": self.compute_cycles,
            "terms": {t.name: t.cycles for t in self.terms},
        }


def read_bandwidth(memory) -> float:
    """Bits per cycle a memory can read out: the sum of ``bandwidth_max`` over its ports that
    carry a read (``tl`` or ``th``), for one instance."""
    return float(
        sum(
            p.bandwidth_max for p in memory.ports if any(d in ("tl", "th") for _, d in p.allocation)
        )
    )


def offchip_bytes(result) -> dict[str, float]:
    """Bytes of weight and KV-cache inputs per outermost memory they are read from."""
    read: dict[str, float] = {}
    for layer, _ in result.layers:
        accelerator = result.accelerators[layer.id]
        for operand in layer.inputs:
            if operand_role(layer, operand) in ("weight", "kv_cache", "state"):
                top = accelerator.top_memory(layer.memory_operand(operand)).name
                read[top] = read.get(top, 0.0) + operand_bytes(layer, operand)
    return read


def memory_terms(result) -> list[BoundTerm]:
    """The outermost memories' terms: weights and KV cache read once over the read bandwidth."""
    accelerator = next(iter(result.accelerators.values()))
    terms = []
    for name, size in offchip_bytes(result).items():
        memory = accelerator.memory[name]
        bandwidth = read_bandwidth(memory) * accelerator.unroll_count(memory)
        if bandwidth > 0 and size > 0:
            terms.append(BoundTerm(name, "memory", size * 8 / bandwidth))
    return terms


def _detail(layer, cost, accelerator, memo: dict):
    """The cost model's intermediates of one layer's result (computed once per distinct mapping)."""
    if not isinstance(cost, LayerCostResult) or cost.layer is None:
        cost = LayerCostResult.of(cost, layer, accelerator)
    key = json.dumps(
        [
            layer.signature(),
            cost.accelerator.name,
            cost.spatial_mapping,
            cost.spatial_mapping_int,
            cost.temporal_mapping,
            cost.compute_unit,
        ],
        sort_keys=True,
        default=str,
    )
    if key not in memo:
        memo[key] = cost.cost_detail
    return memo[key]


def port_cycles(result) -> dict[str, float]:
    """Per memory port (``memory.port``): the cycles its bandwidth needs for the bits every layer's
    mapping moves through it, summed over the layers (as ``zigzag.cost.model.loading.port_bound_cycles``
    counts them, without rounding up)."""
    cycles: dict[str, float] = {}
    memo: dict = {}
    for layer, cost in result.layers:
        detail = _detail(layer, cost, result.accelerators[layer.id], memo)
        for port in detail._setup.ports:
            if not port.bw_max:
                continue
            bits = sum(
                flow.count * flow.amount * flow.precision
                for duty in port.duties
                for flow in (detail.movement[duty.layer_op].flows[duty.level][duty.direction],)
            )
            name = f"{port.memory}.{port.name}"
            cycles[name] = cycles.get(name, 0.0) + float(bits) / port.bw_max
    return cycles


def compute_cycles(result) -> float:
    """The operations of every layer over the peak rate of the unit that runs it, summed."""
    total = 0.0
    for layer, cost in result.layers:
        peak = _peak(layer, cost, result.accelerators[layer.id])
        if peak and peak != float("inf"):
            total += layer.total_macs / peak
    return total


def step_bound(result, cycles: float, clock_ghz: float | None, latency_model=None) -> StepBound:
    """The physical bound of ``result`` (a NetworkResult of one step lasting ``cycles``)."""
    terms = memory_terms(result)
    terms += [BoundTerm(name, "port", c) for name, c in port_cycles(result).items() if c > 0]
    terms.append(BoundTerm("compute", "compute", compute_cycles(result)))
    binding = max(terms, key=lambda t: t.cycles)
    bound = binding.cycles
    seconds = None if clock_ghz is None else bound / (clock_ghz * 1e9)
    return StepBound(
        bound,
        seconds,
        binding.name,
        binding.kind,
        cycles / bound if bound > 0 else float("inf"),
        latency_model,
        tuple(terms),
    )


def latency_model_of(result) -> str | None:
    """The latency model ``result``'s layers were costed with (None when unknown)."""
    model = getattr(result, "latency_model", None)
    if model:
        return model
    models = {getattr(cost, "latency_model", None) for _, cost in result.layers}
    return models.pop() if len(models) == 1 else None
