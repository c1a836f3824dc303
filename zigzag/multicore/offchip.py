"""Operands streamed from DRAM: which ones, the DRAM level that serves them, the bandwidth they need.

Stream evaluates a computation node (CN) on a core whose top memories may be too small for the
node's tensors. Those operands are then served by one more memory level on top of the core: the
off-chip memory. This module holds the three pieces of that rule (docs/models/multi-core.md#cost-table):

* :func:`too_large_operands`: which memory operands do not fit (smallest-first packing, then room
  for the unrolled lowest level of every streamed operand), in the order they get on the DRAM level;
* :func:`with_dram_level`: a copy of the core with the off-chip memory added on top for them;
* :func:`offchip_bandwidth`: the four-way DRAM bandwidth the chosen mapping needs during computation
  (zigzag 3.8.0's formula, which Stream uses: instantaneous top-level bandwidths plus the loading
  bandwidth borrowed from computation). The scheduler reserves it on the DRAM link while the node
  runs; it is a rate, not the bits moved;
* :func:`streamed_bits`: the bits a node actually reads from and writes to DRAM for those operands
  (the cost model's accesses of the DRAM level), :func:`streamed_read_energy` the energy of the reads;
* :func:`cache_read_share`: both scaled to the share of an operand read from where it lives (a KV
  cache's past tokens, gathered experts' distinct weights), the one place a share changes a cost.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

from zigzag.cost.model import CPO, CostDetail, reduce_balanced
from zigzag.errors import InputError
from zigzag.hardware.accelerator import DIRECTION_NAMES, Accelerator, Memory
from zigzag.workload.layer import Layer
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS

#: Stream's four directions of an off-chip bandwidth need, in its order.
FOUR_WAY = ("rd_out_to_low", "wr_in_by_low", "rd_out_to_high", "wr_in_by_high")
_SHORT = {long: short for short, long in DIRECTION_NAMES.items()}


def stored_bits(layer: Layer, edge_bits: Mapping[str, int]) -> dict[str, int]:
    """Bits each layer operand needs in the core (docs/models/multi-core.md#cost-table): the operand's ZigZag size, or the sum of
    the CN's in-edge bits for that operand when larger (edges can carry more than the CN needs)."""
    return {op: max(int(edge_bits.get(op, 0)), layer.operand_size_bit(op)) for op in layer.operands}


def too_large_operands(layer: Layer, core: Accelerator, bits: Mapping[str, int]) -> tuple[str, ...]:
    """Memory operands of ``layer`` that ``core``'s top memories cannot hold (docs/models/multi-core.md#cost-table).

    ``bits``: layer operand -> bits to store (:func:`stored_bits`). Per top memory, operands are
    packed smallest first; the ones left out are streamed, and if some are kept and some streamed,
    kept ones move out (largest first) until the rest of the memory can hold the lowest level of
    every streamed operand times its unroll count. Result order = the DRAM level's operand order.
    """
    layer_of = layer.layer_operand_of
    tops = list(dict.fromkeys(core.top_memory(m) for m in core.memory_operands))
    streamed: list[str] = []
    for (
        memory
    ) in tops:  # Stream iterates a set here; the shipped cores have one overflowing top memory
        need = {m: bits[layer_of[m]] for m in memory.operands if m in layer_of}
        if memory.size >= sum(need.values()):
            continue
        ordered = sorted(need, key=need.__getitem__)  # stable: ties keep the memory's operand order
        kept = len(ordered)
        while kept and memory.size < sum(need[m] for m in ordered[:kept]):
            kept -= 1
        if 0 < kept < len(ordered):
            while kept and memory.size - sum(need[m] for m in ordered[:kept]) < _lowest_level_room(
                core, ordered[kept:]
            ):
                kept -= 1
        streamed += ordered[kept:]
    return tuple(streamed)


def _lowest_level_room(core: Accelerator, memory_operands: list[str]) -> int:
    """Bits of the lowest memory level of each operand, over all its unrolled copies."""
    total = 0
    for m in memory_operands:
        lowest = core.hierarchy(m)[0]
        total += lowest.size * core.unroll_count(lowest)
    return round(total)


def with_dram_level(core: Accelerator, dram: Memory, operands: tuple[str, ...]) -> Accelerator:
    """A copy of ``core`` with ``dram`` on top, storing ``operands`` (in that order) (docs/models/multi-core.md#cost-table).

    The DRAM keeps its served dimensions and, per operand, the port allocation it has for it.
    """
    if not operands:
        return core
    if dram.name in core.memory:
        raise InputError(
            None,
            f"core '{core.name}'",
            f"has a memory named '{dram.name}' like the off-chip memory; rename one of them",
        )
    missing = [m for m in operands if m not in dram.operands]
    if missing:
        raise InputError(
            None,
            f"off-chip memory '{dram.name}'",
            f"does not store memory operand {missing[0]} that is too large for core '{core.name}'; "
            "add it to its operands",
        )
    ports = []
    for port in dram.ports:
        allocation = tuple((m, d) for m in operands for o, d in port.allocation if o == m)
        if allocation:
            ports.append(dataclasses.replace(port, allocation=allocation))
    level = dataclasses.replace(dram, operands=tuple(operands), ports=tuple(ports))
    unit = getattr(core, "vector_unit", None)
    if unit is not None:  # the vector unit streams them from the same DRAM level
        unit = dataclasses.replace(unit, memories=unit.memories + (dram.name,))
        return dataclasses.replace(core, memories=core.memories + (level,), vector_unit=unit)
    return dataclasses.replace(core, memories=core.memories + (level,))


def offchip_bandwidth(detail: CostDetail, dram_name: str) -> dict[str, float]:
    """Four-way DRAM bandwidth (bits/cycle) the evaluated mapping needs while computing (docs/models/multi-core.md#cost-table).

    For each operand on the DRAM level: its instantaneous bandwidth at that (top) level, from the
    fractional mapping; plus, per DRAM port, the loading bandwidth borrowed from computation
    (once-only transfers shortened by the computation's idle port time), put under
    ``wr_in_by_high`` when the DRAM holds the output, else under ``rd_out_to_low`` (zigzag 3.8.0).
    """
    need = dict.fromkeys(FOUR_WAY, 0)
    setup = detail._setup  # the evaluation's fixed per-(layer, accelerator) facts
    dram_operands = []
    for op, operand in setup.operands.items():
        top = operand.n - 1
        if operand.levels[top].memory.name != dram_name:
            continue
        dram_operands.append(operand.mem_op)
        flows = detail.movement[op].flows[top]
        top_ir = detail.temporal[op].top_ir
        for long in FOUR_WAY:
            short = _SHORT[long]
            scale = int(top_ir[top] if short in ("tl", "fl") else top_ir[top + 1])
            need[long] += int(flows[short].bw_aver * scale)
    if not dram_operands:
        return need
    computing = detail.total_cycle + detail.stall_slack_comb
    holds_output = "O" in dram_operands
    for port in setup.ports:
        if port.memory != dram_name:
            continue
        borrowed = _borrowed_cycles(detail, port, computing)
        bandwidth = borrowed / computing * port.bw_max
        need["wr_in_by_high" if holds_output else "rd_out_to_low"] += bandwidth
    return need


def _borrowed_cycles(detail: CostDetail, port, computing) -> float:
    """Cycles of once-only transfers on ``port`` that overlap computation (cost-model docs/models/multi-core.md#energy-terms)."""
    once = []
    required = 0
    for duty in port.loading_duties:
        flow = detail.movement_int[duty.layer_op].flows[duty.level][duty.direction]
        if flow.count == 0:
            continue
        if flow.count == 1:
            once.append(duty)
        else:
            required += math.ceil(flow.bw_aver / CPO)
    if not once:
        return 0
    totals = [detail.real_cycles[d.layer_op][d.level][d.direction] for d in once]
    minima = [math.ceil(detail.movement_int[d.layer_op].bits[1] / port.bw_max) for d in once]
    surplus = max(0, (port.bw_max - required) / port.bw_max * computing)
    remaining, _ = reduce_balanced(totals, minima, surplus)
    return sum(totals) - sum(remaining)


#: the layer operand behind each memory operand, in Stream's fixed convention
_LAYER_OPERAND = {"O": "O", "I1": "I", "I2": "W"}


def streamed_bits(
    result, operands: tuple[str, ...], dram: Memory
) -> tuple[tuple[float, float], ...]:
    """(bits read from, bits written to) the DRAM level per streamed memory operand of ``operands``
    (in that order): the evaluation's word accesses of its top level (``result``: a
    ``CostResult`` whose core got ``dram`` on top) times the width of the DRAM port serving them.
    A weight read once gives its size; an operand fetched again per reuse gives size x fetches."""
    out = []
    for m in operands:
        op = _LAYER_OPERAND[m]
        if result.memory_names[op][-1] != dram.name:
            raise InputError(
                None,
                f"cost-table entry of layer '{result.layer_name}'",
                f"streams {m} but its top level is not the off-chip memory '{dram.name}'; "
                "delete the cost cache and run again",
            )
        words = result.memory_word_access[op][-1]
        read = words["tl"] * (dram.bandwidth_max(m, "tl") or 0) + words["th"] * (
            dram.bandwidth_max(m, "th") or 0
        )
        write = words["fl"] * (dram.bandwidth_max(m, "fl") or 0) + words["fh"] * (
            dram.bandwidth_max(m, "fh") or 0
        )
        out.append((float(read), float(write)))
    return tuple(out)


def streamed_read_energy(result, operands: tuple[str, ...]) -> tuple[float, ...]:
    """The energy of the DRAM reads (to the level below and to the level above) of each streamed
    memory operand of ``operands`` (in that order): its top level's read energy in ``result``
    (a ``CostResult`` whose core got the DRAM level on top), a part of the entry's off-chip energy."""
    out = []
    for m in operands:
        top = result.mem_energy_breakdown_further[_LAYER_OPERAND[m]][-1]
        out.append(float(top["tl"] + top["th"]))
    return tuple(out)


def cache_read_share(cost, cache_operands: Mapping[str, float]):
    """``cost`` (a ``CNCost``) with the DRAM reads of its streamed shared operands scaled to their
    share (``LayerInfo.cache_operands``): the bits read (``dram_bits``) and their energy (the
    operand's part of ``offchip_energy``; writes unchanged). The cost model streams the whole
    operand, but only the past cache of a KV-cache operand (appended token and repeated
    grouped-query heads excluded), or the distinct experts of gathered expert weights, are read
    from where they live. The one place a share changes a CN's cost."""
    share = {STREAM_MEMORY_OPERAND_LINKS[op]: value for op, value in cache_operands.items()}
    if not share or not share.keys() & set(cost.too_large):
        return cost
    factors = [share.get(m, 1.0) for m in cost.too_large]
    changes = {}
    if cost.dram_bits:
        changes["dram_bits"] = tuple(
            (read * f, write) for f, (read, write) in zip(factors, cost.dram_bits)
        )
    if cost.dram_read_energy:
        energy = tuple(e * f for f, e in zip(factors, cost.dram_read_energy))
        changes["dram_read_energy"] = energy
        changes["offchip_energy"] = cost.offchip_energy - sum(cost.dram_read_energy) + sum(energy)
    return dataclasses.replace(cost, **changes)
