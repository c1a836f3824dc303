"""Results of the cost model: one evaluation (:class:`CostResult`) and network sums
(:class:`CumulativeResult`, docs/models/cost-model.md#results-and-network-sums).

Both are immutable dataclasses with a lossless JSON round trip::

    CostResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result

Containers are normalised to tuples (lists in JSON) and dicts with string keys; ints stay
ints and floats stay floats, so every figure comes back bit-identical.

Area is an extra of ours for digital arrays: the reference's digital cost model reports none
(docs/models/cost-model.md#area). ``area_total`` is the operational array's area (unit area x units) plus, for every
memory of the accelerator, its area times its number of instances (the product of the array
dimensions it does not serve). For an in-memory-computing array it is the reference's figure:
the array's area plus every memory's area once (docs/models/imc.md#energy-latency-and-area-of-a-layer); such results also carry the
array energy per component, the clock period ``tclk`` (ns) and the array's area breakdown.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable

from zigzag.cost.json_forms import cumulative_json


def _tuples(value):
    """Lists (from JSON) to tuples, recursively; dicts keep their keys."""
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _lists(value):
    """Tuples to lists, recursively (JSON form)."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


class _ShortNames:
    """The short names both results answer to, beside ZigZag's long ones."""

    energy_total: float
    latency_total2: float
    tclk: float | None

    @property
    def energy(self) -> float:
        """``energy_total`` (pJ)."""
        return self.energy_total

    @property
    def latency(self) -> float:
        """``latency_total2`` (cycles)."""
        return self.latency_total2

    @property
    def latency_ns(self) -> float | None:
        """``latency_total2`` in ns (cycles x tclk) when the clock period is known (IMC)."""
        return None if self.tclk is None else self.latency_total2 * self.tclk


@dataclass(frozen=True)
class CostResult(_ShortNames):
    """Every figure of one evaluation of one (spatial, temporal) mapping of one layer (docs/models/cost-model.md#results-and-network-sums).

    Per-operand fields are ``{layer operand: (value per memory level, innermost first)}``;
    ``double_buffer`` is indexed by architecture index (0 = MAC array, k + 1 = level k).
    Energies in pJ, latencies in cycles.
    """

    layer_id: int
    layer_name: str
    accelerator_name: str
    memory_names: dict[str, tuple[str, ...]]

    # energy (docs/models/cost-model.md#energy)
    energy_total: float
    mac_energy: float
    mem_energy: float
    mem_energy_breakdown: dict[str, tuple[float, ...]]
    mem_energy_breakdown_further: dict[str, tuple[dict[str, float], ...]]
    memory_word_access: dict[str, tuple[dict[str, int], ...]]

    # latency (docs/models/cost-model.md#latency)
    ideal_cycle: int
    ideal_temporal_cycle: float
    latency_total0: float
    latency_total1: float
    latency_total2: float
    data_onloading_cycle: float
    data_offloading_cycle: float
    stall_slack_comb: int
    mac_spatial_utilization: float
    mac_utilization0: float
    mac_utilization1: float
    mac_utilization2: float

    # memories (docs/models/cost-model.md#data-held-per-level, docs/models/cost-model.md#latency)
    mem_utilization_individual: dict[str, tuple[float, ...]]
    mem_utilization_shared: dict[str, tuple[float, ...]]
    effective_mem_utilization_individual: dict[str, tuple[float, ...]]
    effective_mem_utilization_shared: dict[str, tuple[float, ...]]  # after the DB pass
    double_buffer: dict[str, tuple[bool, ...]]

    # mappings
    spatial_mapping: dict[
        str, tuple
    ]  # fractional per-level form (ZigZag's cme.spatial_mapping, e.g. 31.25)
    spatial_mapping_int: dict[
        str, tuple
    ]  # integer per-level form (docs/models/cost-model.md#spatial-mapping)
    temporal_mapping: dict[str, tuple]  # as given (allocator output)
    temporal_mapping_stationary: dict[
        str, tuple
    ]  # after the merge-down (docs/models/cost-model.md#temporal-mapping)
    spatial_mapping_array: dict[str, dict[str, float]] | None = None  # {OA dim: {dim: factor}}

    # area (ours, docs/models/cost-model.md#area)
    area_operational_array: float | None = None
    area_memories: dict[str, float] = field(default_factory=dict)  # memory -> area x instances

    # in-memory computing (docs/models/imc.md#array-energy-per-layer); None for a digital array
    mac_energy_breakdown: dict[str, float] | None = None  # array energy per component (pJ)
    tclk: float | None = None  # clock period (ns)
    tclk_breakdown: dict[str, float] | None = None
    area_operational_array_breakdown: dict[str, float] | None = None

    # the unit the layer ran on (docs/models/operators.md): mac_array | vector_unit, and its operation class
    compute_unit: str = "mac_array"
    vector_op: str | None = None
    # what bounds the computation: each memory port's stall (+) or slack (-) in cycles,
    # "<memory>.<port>" -> cycles; the largest positive one is stall_slack_comb (ours)
    port_stall_slack: dict[str, float] | None = None

    # ----- derived ------------------------------------------------------------------------
    @property
    def area_total(self) -> float | None:
        if self.area_operational_array is None:
            return None
        return self.area_operational_array + sum(self.area_memories.values())

    @property
    def layer_ids(self) -> tuple[int, ...]:
        return (self.layer_id,)

    def simple_dict(self) -> dict[str, float]:
        """The reference's "simple" JSON: ``{"energy": ..., "latency": ...}``, plus
        ``"tclk (ns)"`` and ``"area"`` for an IMC evaluation."""
        simple = {"energy": self.energy_total, "latency": self.latency_total2}
        if self.tclk is not None:
            simple.update({"tclk (ns)": self.tclk, "area": self.area_total})
        return simple

    # ----- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        return {f.name: _lists(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CostResult":
        """Inverse of :meth:`to_dict` (also accepts its JSON-decoded form)."""
        values = {}
        for f in dataclasses.fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name == "spatial_mapping_array":
                values[f.name] = None if value is None else {oa: dict(u) for oa, u in value.items()}
            else:
                values[f.name] = _tuples(value)
        return cls(**values)

    def __add__(self, other: "CostResult | CumulativeResult") -> "CumulativeResult":
        return CumulativeResult() + self + other

    def __radd__(self, other):
        if other == 0:  # sum([...]) starts from 0
            return CumulativeResult() + self
        return NotImplemented


# =============================================================================================
# docs/models/cost-model.md#results-and-network-sums  Network sum
# =============================================================================================

_SUMMED = (
    "mac_energy",
    "mem_energy",
    "energy_total",
    "data_onloading_cycle",
    "data_offloading_cycle",
    "ideal_cycle",
    "ideal_temporal_cycle",
    "latency_total0",
    "latency_total1",
    "latency_total2",
)


#: the totals per unit: the energy_total and latency_total2 of the layers on the MAC array / vector unit
_UNIT_SPLIT = ("mac_array_energy", "mac_array_latency", "vector_unit_energy", "vector_unit_latency")


def _unit_split(
    total: "CumulativeResult", other: "CostResult | CumulativeResult"
) -> dict[str, float]:
    """``total``'s per-unit sums with ``other`` added (a layer result adds to its own unit)."""
    if isinstance(other, CumulativeResult):
        return {name: getattr(total, name) + getattr(other, name) for name in _UNIT_SPLIT}
    values = {name: getattr(total, name) for name in _UNIT_SPLIT}
    unit = "vector_unit" if other.compute_unit == "vector_unit" else "mac_array"
    values[f"{unit}_energy"] += other.energy_total
    values[f"{unit}_latency"] += other.latency_total2
    return values


def _add_per_level(a: tuple, b: tuple) -> tuple:
    """Element-wise sum over the common length, then the longer tail (docs/models/cost-model.md#results-and-network-sums)."""
    common = min(len(a), len(b))
    summed = []
    for x, y in zip(a[:common], b[:common]):
        if isinstance(x, dict):
            summed.append({d: x[d] + y[d] for d in x})
        else:
            summed.append(x + y)
    return tuple(summed) + tuple(a[common:]) + tuple(b[common:])


def _add_per_operand(a: dict, b: dict) -> dict:
    result = {op: _add_per_level(v, b[op]) for op, v in a.items() if op in b}
    for op, v in a.items():
        result.setdefault(op, v)
    for op, v in b.items():
        result.setdefault(op, v)
    return result


def _ratio(num, den):
    return num / den if den else 0.0


@dataclass(frozen=True)
class CumulativeResult(_ShortNames):
    """Sum of per-layer results (docs/models/cost-model.md#results-and-network-sums).

    Energies, cycles and per-level breakdowns are summed; ``mac_spatial_utilization`` and
    ``mac_utilization0/1/2`` are recomputed from the sums.  Stall/slack, utilisations
    and mappings are not carried.  Start from ``CumulativeResult()`` (all zeros, like the
    reference's empty cumulative evaluation) and add results in processing order.
    """

    mac_energy: float = 0.0
    mem_energy: float = 0.0
    energy_total: float = 0.0
    data_onloading_cycle: float = 0.0
    data_offloading_cycle: float = 0.0
    ideal_cycle: float = 0.0
    ideal_temporal_cycle: float = 0.0
    latency_total0: float = 0.0
    latency_total1: float = 0.0
    latency_total2: float = 0.0
    mem_energy_breakdown: dict[str, tuple[float, ...]] = field(default_factory=dict)
    mem_energy_breakdown_further: dict[str, tuple[dict[str, float], ...]] = field(
        default_factory=dict
    )
    memory_word_access: dict[str, tuple[dict[str, int], ...]] = field(default_factory=dict)
    layer_ids: tuple[int, ...] = ()
    accelerator_name: str | None = None
    area_total: float | None = None  # of the first result added (as the reference's IMC API)
    tclk: float | None = None  # clock period (ns) of the first result added (IMC)
    # energy (pJ) and latency (cycles) of the layers on each unit (docs/models/operators.md)
    mac_array_energy: float = 0.0
    mac_array_latency: float = 0.0
    vector_unit_energy: float = 0.0
    vector_unit_latency: float = 0.0

    @property
    def mac_spatial_utilization(self) -> float:
        return _ratio(self.ideal_cycle, self.ideal_temporal_cycle)

    @property
    def mac_utilization0(self) -> float:
        return _ratio(self.ideal_cycle, self.latency_total0)

    @property
    def mac_utilization1(self) -> float:
        return _ratio(self.ideal_cycle, self.latency_total1)

    @property
    def mac_utilization2(self) -> float:
        return _ratio(self.ideal_cycle, self.latency_total2)

    def simple_dict(self) -> dict[str, float]:
        return {"energy": self.energy_total, "latency": self.latency_total2}

    def __add__(self, other: "CostResult | CumulativeResult") -> "CumulativeResult":
        values = {name: getattr(self, name) + getattr(other, name) for name in _SUMMED}
        for name in ("mem_energy_breakdown", "mem_energy_breakdown_further", "memory_word_access"):
            values[name] = _add_per_operand(getattr(self, name), getattr(other, name))
        values["layer_ids"] = self.layer_ids + tuple(other.layer_ids)
        values["accelerator_name"] = self.accelerator_name or other.accelerator_name
        values["area_total"] = self.area_total if self.area_total is not None else other.area_total
        values["tclk"] = self.tclk if self.tclk is not None else other.tclk
        values.update(_unit_split(self, other))
        return CumulativeResult(**values)

    def __radd__(self, other):
        if other == 0:  # allows sum(results, CumulativeResult()) and sum() starting at 0
            return self
        return NotImplemented

    def __mul__(self, number: int) -> "CumulativeResult":
        """Scale every summed figure by ``number`` (ratios follow)."""
        values = {name: getattr(self, name) * number for name in _SUMMED + _UNIT_SPLIT}
        for name in ("mem_energy_breakdown", "mem_energy_breakdown_further"):
            values[name] = {
                op: tuple(
                    {d: e * number for d, e in v.items()} if isinstance(v, dict) else v * number
                    for v in levels
                )
                for op, levels in getattr(self, name).items()
            }
        values["memory_word_access"] = {
            op: tuple({d: a * number for d, a in v.items()} for v in levels)
            for op, levels in self.memory_word_access.items()
        }
        return dataclasses.replace(self, **values)

    def __simplejsonrepr__(self) -> dict[str, float]:
        """ZigZag's simple JSON form (as in ``overall_simple.json``)."""
        return self.simple_dict()

    def __jsonrepr__(self) -> dict:
        """ZigZag's complete JSON form (as in ``overall_complete.json``)."""
        return cumulative_json(self)

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: _lists(getattr(self, f.name)) for f in dataclasses.fields(self)}
        data.update(
            mac_spatial_utilization=self.mac_spatial_utilization,
            mac_utilization0=self.mac_utilization0,
            mac_utilization1=self.mac_utilization1,
            mac_utilization2=self.mac_utilization2,
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CumulativeResult":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: _tuples(v) for k, v in data.items() if k in names})


#: the per-operand breakdowns a sum adds level by level
_PER_OPERAND = ("mem_energy_breakdown", "mem_energy_breakdown_further", "memory_word_access")


def sum_results(results: Iterable[CostResult | CumulativeResult]) -> CumulativeResult:
    """Network sum of per-layer results, added in the given order (docs/models/cost-model.md#results-and-network-sums):
    ``CumulativeResult() + r1 + r2 + ...``, the same figures, with the running sums kept in place
    instead of a new cumulative result per addition."""
    sums = dict.fromkeys(_SUMMED + _UNIT_SPLIT, 0.0)
    parts: dict[str, dict[str, list]] = {name: {} for name in _PER_OPERAND}
    layer_ids: list[int] = []
    first = {"accelerator_name": None, "area_total": None, "tclk": None}
    for r in results:
        for name in _SUMMED:
            sums[name] = sums[name] + getattr(r, name)
        for name in _PER_OPERAND:
            parts[name] = _add_in_place(parts[name], getattr(r, name))
        layer_ids.extend(r.layer_ids)
        first["accelerator_name"] = first["accelerator_name"] or r.accelerator_name
        for name in ("area_total", "tclk"):
            if first[name] is None:
                first[name] = getattr(r, name)
        if isinstance(r, CumulativeResult):
            for name in _UNIT_SPLIT:
                sums[name] = sums[name] + getattr(r, name)
        else:
            unit = "vector_unit" if r.compute_unit == "vector_unit" else "mac_array"
            sums[f"{unit}_energy"] = sums[f"{unit}_energy"] + r.energy_total
            sums[f"{unit}_latency"] = sums[f"{unit}_latency"] + r.latency_total2
    return CumulativeResult(
        **sums,
        **{name: {op: tuple(v) for op, v in part.items()} for name, part in parts.items()},
        layer_ids=tuple(layer_ids),
        **first,
    )


def _add_in_place(total: dict[str, list], other: dict) -> dict[str, list]:
    """:func:`_add_per_operand` on running sums that are this sum's own (lists of levels, dict
    levels copied): the same values and order, added into ``total``'s levels."""
    result = {}
    for op, levels in total.items():
        if op in other:
            added = other[op]
            common = min(len(levels), len(added))
            for k in range(common):
                x, y = levels[k], added[k]
                if isinstance(x, dict):
                    for d in x:  # dict's own item read: a FourWay's is a Python method
                        x[d] = x[d] + _item(y, d)
                else:
                    levels[k] = x + y
            levels.extend(_own(v) for v in added[common:])
            result[op] = levels
    for op, levels in total.items():
        result.setdefault(op, levels)
    for op, levels in other.items():
        if op not in result:
            result[op] = [_own(v) for v in levels]
    return result


_item = dict.__getitem__


def _own(level):
    """A level of a result, copied when it is a dict (the running sums add into it)."""
    return dict(level) if isinstance(level, dict) else level
