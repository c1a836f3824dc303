"""Energy of one layer on an in-memory-computing array (docs/models/imc.md#array-energy-per-layer).

The array energy of a layer depends on the layer, the array and the spatial mapping *as
generated* (``{OA dim: {layer dim: factor}}``, before conversion to per-level forms),
not on the temporal mapping: every macro activation costs the same, and the number of
activations is the layer's MAC count over the MACs one macro does at once. The memory traffic,
including re-writing weights into the cells, is costed by the ordinary memory model.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from zigzag.hardware.imc import (
    BL_CAP,
    DFF_ENERGY,
    ENERGY_PARTS,
    FA_ENERGY,
    FA_HALF_ENERGY,
    MUL_ENERGY,
    V2,
    ImcArray,
)
from zigzag.mapping.reference_order import reference_set_order
from zigzag.workload.layer import Layer, activation_and_weight_operands


class MacroUse(NamedTuple):
    """How one spatial mapping uses a macro (docs/models/imc.md#array-energy-per-layer)."""

    rows: int  # active rows (inputs of each bitline adder)
    columns: float  # active columns (product of the wordline unrollings)
    activations: float  # macro activations, as if all work ran through one macro


def macro_use(array: ImcArray, layer: Layer, spatial_mapping: dict) -> MacroUse:
    """Active rows and columns of a macro and its number of activations (docs/models/imc.md#array-energy-per-layer)."""
    on_wordline = dict(spatial_mapping.get(array.wordline_dim) or {})
    on_bitline = dict(spatial_mapping.get(array.bitline_dim) or {})
    per_macro = math.prod(on_wordline.values()) * math.prod(on_bitline.values())
    _, weight = activation_and_weight_operands(layer)
    diagonal = any(dim in layer.irrelevant[weight] for dim in on_wordline)
    rows = math.ceil(math.prod(on_bitline.values()))
    if diagonal and rows != 1:
        rows = _diagonal_rows(layer, on_wordline, on_bitline)
    return MacroUse(rows, math.prod(on_wordline.values()), layer.total_macs / float(per_macro))


def _diagonal_rows(layer: Layer, on_wordline: dict, on_bitline: dict) -> int:
    """Rows used when a weight-irrelevant dim (e.g. OX) is unrolled on the wordlines: its
    partner in the input relation (FX) then spans ``FX + OX - 1`` rows (docs/models/imc.md#array-energy-per-layer).

    Reproduces the reference's pairing of dims taken in set order with factors taken in key
    order. Where the reference crashes we take the evident intent instead: a
    single bitline dim uses its own factor, and a weight-irrelevant dim outside every input
    relation widens nothing.
    """
    activation, weight = activation_and_weight_operands(layer)
    weight_irrelevant = layer.irrelevant[weight]
    partner_extent: dict[str, float] = {}  # pr partner dim -> unrolling of its weight-ir dim
    partner_of: dict[str, str] = {}
    for relation in layer.partially_relevant[activation].values():
        a, b = relation.dim_a, relation.dim_b
        if a in weight_irrelevant:
            partner_extent[b], partner_of[a] = 1, b
        else:
            partner_extent[a], partner_of[b] = 1, a
    for dim in weight_irrelevant:
        if dim in partner_of and dim in on_wordline:
            partner_extent[partner_of[dim]] *= on_wordline[dim]
    dims = reference_set_order(on_bitline, "layer_dim")
    sizes = list(on_bitline.values())
    rows = 1
    for dim, size in zip(dims, sizes):
        rows *= size + (partner_extent[dim] - 1 if dim in partner_extent else 0)
    return math.ceil(rows)


def adder_tree_energy(precision: int, active: float, inputs: int) -> float:
    """Energy of one bitline adder tree with ``active`` of its ``inputs`` in use (docs/models/imc.md#array-energy-per-layer).

    A full sub-tree of ``n`` inputs has ``n (p + 1) - (p + log2 n + 1)`` one-bit adders; the
    adder joining a sub-tree to the rest is fully active when inputs remain on the other side,
    else only half (one operand zero: no carry activity).
    """
    depth = int(math.log2(inputs))
    total = inputs * (precision + 1) - (precision + depth + 1)
    if active < 1:
        return 0
    if active >= inputs:
        full, half = total, 0
    else:
        full = half = 0
        left, base = active, inputs
        while left != 0:
            base = base / 2
            sub_depth = int(math.log2(base))
            if left <= 1 and base == 1:
                half += precision
                left = 0
            elif left > base:
                full += (
                    base * (precision + 1) - (precision + sub_depth + 1) + (precision + sub_depth)
                )
                left = left - base
            elif left < base:
                half += precision + sub_depth
            else:
                full += base * (precision + 1) - (precision + sub_depth + 1)
                half += precision + sub_depth
                left = left - base
    return full * FA_ENERGY + half * FA_HALF_ENERGY


def layer_energy(array: ImcArray, layer: Layer, spatial_mapping: dict) -> dict[str, float]:
    """The array energy of one layer under one spatial mapping, per component (docs/models/imc.md#array-energy-per-layer), in pJ.

    AIMC charges its DACs per active row, its ADCs per active column and weight bit, its
    multipliers for all columns of the active rows; DIMC charges its multipliers for the whole
    array. Every figure scales with the bit-serial cycles per operation and the activations.
    Hardware precisions are used, not the layer's.
    """
    use = macro_use(array, layer, spatial_mapping)
    rows, cols, acts = use.rows, use.columns, use.activations
    serial = array.cycles_per_op
    p_w, b = array.weight_precision, array.bit_serial_precision
    energy = dict.fromkeys(ENERGY_PARTS, 0)
    if array.analog:
        energy["dacs"] = array.dac.energy * rows * serial * acts
        energy["adcs"] = array.adc.energy * p_w * cols * serial * acts
        energy["mults"] = MUL_ENERGY * (p_w * array.columns * rows) * serial * acts
        energy["analog_bl_addition"] = (BL_CAP * V2 * p_w) * cols * array.rows * serial * acts
    else:
        energy["mults"] = MUL_ENERGY * (b * p_w * array.columns * array.rows) * serial * acts
        tree = adder_tree_energy(p_w, rows, array.rows)
        energy["adders_regular"] = tree * (b * cols) * serial * acts
    energy["adders_pv"] = FA_ENERGY * array.place_value_adders * cols * serial * acts
    if array.has_accumulator:
        energy["accumulators"] = (
            (FA_ENERGY + DFF_ENERGY) * array.accumulator_precision * cols * serial * acts
        )
    return energy
