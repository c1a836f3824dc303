"""What the operational array contributes to one evaluation: the MAC energy, the cycles per
operation, the clock period and the area.

A digital MAC array costs ``unit_energy`` per MAC (docs/models/cost-model.md), takes one cycle per
operation and reports no clock; its area is ours (unit area x units, memories x instances).
An in-memory-computing array (``zigzag.hardware.imc``) is costed by its own model (docs/models/imc.md#array-energy-per-layer): energy per component from the spatial mapping, ``P_a / b`` cycles per operation,
its clock period, and its area plus each memory's area once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from zigzag.cost.imc import layer_energy
from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.imc import ImcArray
from zigzag.workload.layer import Layer


#: cycles per operation of a digital MAC array (a float: it makes several latency figures
#: floats, exactly as in the reference, docs/models/cost-model.md)
DIGITAL_CYCLES_PER_OP = 1.0


class ArrayCost(NamedTuple):
    mac_energy: float
    mac_energy_breakdown: (
        dict[str, float] | None
    )  # IMC components (docs/models/imc.md#array-energy-per-layer)
    tclk: float | None  # ns; IMC only
    tclk_breakdown: dict[str, float] | None
    area: float | None  # mm²; None without a unit area
    area_breakdown: dict[str, float] | None
    memory_areas: dict[str, float]


def cycles_per_op(accelerator: Accelerator) -> float:
    """Cycles one operation occupies the array (1.0 for a digital MAC array; an IMC array's or a
    vector unit's lanes give their own)."""
    return getattr(accelerator.operational_array, "cycles_per_op", DIGITAL_CYCLES_PER_OP)


def mac_bits(layer: Layer) -> int:
    """The precision a MAC of ``layer`` runs at: the widest of its inputs' bits."""
    return max(int(layer.precision[op]) for op in layer.inputs)


def array_cost(
    layer: Layer, accelerator: Accelerator, spatial_mapping_array: dict | None
) -> ArrayCost:
    """The array's share of one evaluation of ``layer`` under ``spatial_mapping_array``."""
    array = accelerator.operational_array
    if not isinstance(array, ImcArray):
        area, memories = _digital_areas(accelerator)
        table = getattr(array, "unit_energy_per_precision", ())  # a vector unit has none
        energy = array.energy_per_mac(mac_bits(layer)) if table else None
        return ArrayCost(
            (array.unit_energy if energy is None else energy) * layer.total_macs,
            None,
            None,
            None,
            area,
            None,
            memories,
        )
    if spatial_mapping_array is None:
        raise ValueError(
            "an IMC array's energy needs the spatial mapping in array form (spatial_mapping_array)"
        )
    breakdown = layer_energy(array, layer, spatial_mapping_array)
    return ArrayCost(
        mac_energy=sum(breakdown.values()),
        mac_energy_breakdown=breakdown,
        tclk=array.tclk,
        tclk_breakdown=dict(array.tclk_breakdown),
        area=array.area,
        area_breakdown=dict(array.area_breakdown),
        memory_areas={m.name: m.area for m in accelerator.memories},
    )


@lru_cache(maxsize=64)
def _digital_areas(accelerator: Accelerator) -> tuple[float | None, dict[str, float]]:
    """Operational-array area and per-memory ``area x instances`` (ours; the reference's digital
    cost model reports no area, docs/models/cost-model.md#area). ``None`` for the array without ``unit_area``.
    A vector unit adds its lanes (``unit_area`` each) and its registers (docs/models/operators.md); a layer
    run on the vector view reports the whole core's area, as a MAC layer does."""
    array = accelerator.operational_array
    core = getattr(array, "core", None)
    if core is not None:
        return _digital_areas(core)
    array_area = None if array.unit_area is None else array.total_area
    memories = {m.name: (m.area or 0) * accelerator.unroll_count(m) for m in accelerator.memories}
    unit = accelerator.vector_unit
    if unit is not None:
        if array_area is not None and unit.unit_area is not None:
            array_area += unit.unit_area * unit.lanes
        for register in unit.registers:
            memories[register.name] = (register.area or 0) * (
                1 if register.served_dimensions else unit.lanes
            )
    return array_area, memories


#: factor from an accelerator file's stated area unit to µm² (a file that states none is read in µm²)
TO_UM2 = {"um2": 1.0, "mm2": 1e6}


def accelerator_area_um2(accelerator: Accelerator) -> float | None:
    """The area ``zigzag run`` reports for ``accelerator``, in µm²: a digital array's units x unit
    area plus every memory's area x its instances, converted from the file's ``area_unit``; an
    IMC array's own area (mm²) plus each memory's area once. None without a unit area."""
    array = accelerator.operational_array
    if isinstance(array, ImcArray):
        return (array.area + sum(m.area or 0 for m in accelerator.memories)) * 1e6
    area, memories = _digital_areas(accelerator)
    if area is None:
        return None
    return (area + sum(memories.values())) * TO_UM2.get(accelerator.area_unit, 1.0)
