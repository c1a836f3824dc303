"""Spatial mappings: how layer loops unroll over the dimensions of the MAC array.

Two forms are used:

* the *array form* ``{OA dim: {layer dim: factor}}`` (what users write and generation yields);
* the *level form* ``{layer operand: [[(layer dim, factor), ...] per memory level + 1]}``: entry
  ``k`` holds the unrollings over which one instance of the operand's ``k``-th memory level is
  shared, the last entry the unrollings no level serves. The cost model works on this form.

Conversion makes two level forms: a *fractional* one (factors adjusted so that the temporal
remainder divides evenly, e.g. K=1000 on 32 lanes -> 31.25; used for energy and the search) and
an *integer* one (``int`` of those; used for latency).
"""

from __future__ import annotations

import math

from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping.reference_order import reference_set_order
from zigzag.workload.layer import Layer

ArrayMapping = dict[str, dict[str, float]]
LevelMapping = dict[str, list[list[tuple[str, float]]]]


def utilization(unrolling: dict[str, float]) -> float:
    return math.prod(unrolling.values())


def adjust_factors(
    mapping: ArrayMapping, layer: Layer, oa_sizes: dict[str, int], *, integer: bool
) -> ArrayMapping:
    """Clip factors to the array and balance the first largest factor of each dim so that the
    temporal remainder ``ceil(size / unrolling)`` is spread evenly."""
    largest_at: dict[str, str] = {}
    for oa, unrolling in mapping.items():
        for dim, factor in unrolling.items():
            if dim not in largest_at or factor > mapping[largest_at[dim]][dim]:
                largest_at[dim] = oa
    result: ArrayMapping = {}
    for oa, unrolling in mapping.items():
        converted = {}
        for dim, factor in unrolling.items():
            if dim not in layer.loop_sizes:
                continue
            factor = min(factor, oa_sizes[oa])
            if largest_at[dim] == oa:
                size = layer.loop_sizes[dim]
                earlier = math.prod(u[dim] for u in result.values() if dim in u)
                repeats = math.ceil(size / (factor * earlier))
                factor = size / repeats / earlier
                if integer:
                    factor = int(factor)
            converted[dim] = factor
        if converted:
            result[oa] = converted
    return result


def distribute_over_levels(
    mapping: ArrayMapping, layer: Layer, accelerator: Accelerator
) -> LevelMapping:
    """The level form of an array-form mapping, per layer operand."""
    levels: LevelMapping = {}
    for operand, mem_operand in layer.memory_operand_links.items():
        unclaimed = list(mapping)
        per_level = []
        for memory in accelerator.hierarchy(mem_operand):
            served = [
                oa
                for oa in reference_set_order(memory.served_dimensions, "oa_dim")
                if oa in unclaimed
            ]
            per_level.append(_merge(mapping, served))
            unclaimed = [oa for oa in unclaimed if oa not in served]
        per_level.append(_merge(mapping, unclaimed))
        levels[operand] = per_level
    return levels


def _merge(mapping: ArrayMapping, oa_dims: list[str]) -> list[tuple[str, float]]:
    merged: dict[str, float] = {}
    for oa in oa_dims:
        for dim, factor in mapping.get(oa, {}).items():
            merged[dim] = merged[dim] * factor if dim in merged else factor
    return list(merged.items())


def convert(
    mapping: ArrayMapping, layer: Layer, accelerator: Accelerator
) -> tuple[LevelMapping, LevelMapping]:
    """(fractional, integer) level forms of an array-form spatial mapping."""
    oa_sizes = accelerator.operational_array.dimensions
    fractional = adjust_factors(mapping, layer, oa_sizes, integer=False)
    integer = adjust_factors(mapping, layer, oa_sizes, integer=True)
    return (
        distribute_over_levels(fractional, layer, accelerator),
        distribute_over_levels(integer, layer, accelerator),
    )


def flat_unrollings(levels: LevelMapping, layer: Layer) -> list[tuple[str, float]]:
    """All unrollings in the level form of the layer's first input operand, bottom-up."""
    return [pair for level in levels[layer.inputs[0]] for pair in level]
