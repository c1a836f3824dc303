"""Data on-loading before and off-loading after computation (docs/models/cost-model.md#latency)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from zigzag.cost.model.setup import PortDuty, Setup, loading_key


# =============================================================================================
# docs/models/cost-model.md#latency  On-loading and off-loading
# =============================================================================================


def reduce_balanced(cycles: list, minima: list, surplus) -> tuple[list, list]:
    """Spend ``surplus`` cycles shortening the largest transfers towards their minima (docs/models/cost-model.md#latency).

    Reproduces the reference's algorithm exactly: items are visited from the largest
    down; visiting item ``i`` reduces all items visited so far by item ``i``'s own distance to
    its minimum, so earlier items can end below their minimum, even negative.
    """
    reductions = [0.0] * len(cycles)
    if surplus <= 0 or not cycles:
        return list(cycles), reductions
    if len(cycles) == 1:  # the usual case (one whole-tensor transfer on a port): the loop's steps
        step = cycles[0] - minima[0]
        if surplus < step * 1:
            step = surplus / 1
        return [cycles[0] - step], [0.0 + step]
    order = sorted(range(len(cycles)), key=lambda i: cycles[i], reverse=True)
    current = list(cycles)
    for i, j in enumerate(order):
        step = current[j] - minima[j]
        capacity = step * (i + 1)
        if surplus < capacity:
            step = surplus / (i + 1)
        for prev in order[: i + 1]:
            current[prev] -= step
            reductions[prev] += step
        if surplus < capacity:
            break
        surplus -= capacity
    return current, reductions


class PortTransfer(NamedTuple):
    """One transfer of a port before or after computation (docs/models/cost-model.md#latency): ``cycles`` left for it,
    ``bits`` moved, ``bandwidth`` of the port (bits/cycle)."""

    op: str
    level: int
    direction: str
    cycles: float
    bits: float
    bandwidth: int


def port_loading(setup: Setup, movement_int, real, ss_comb, total_cycle):
    """Per-port on-/off-loading records (docs/models/cost-model.md#latency).

    Returns ``(loading, offloading, transfers, borrowed)``: the ``loading`` / ``offloading``
    tables ``{layer op: {"<op><k>_<dir long name>": (cycles, port shared by two inputs)}}``;
    per port ``(memory, port name)``, its ``transfers`` (the whole-tensor ones first) and the
    cycles and bandwidth each memory operand's whole-tensor transfer ``borrowed`` from
    computation, ``{memory operand: (cycles, bits per cycle)}``.
    """
    layer = setup.layer
    transfers, borrowed = {}, {}
    loading = {op: {} for op in layer.inputs}
    offloading = {layer.output: {}}
    tcc = math.ceil(total_cycle * setup.cycles_per_op) + ss_comb
    for port in setup.ports:
        shared = port.shared_by_two_inputs
        once = []  # transfers happening once: whole-tensor loads / stores
        periodic = []
        bw_req = 0
        for duty in port.loading_duties:
            flow = movement_int[duty.layer_op].flows[duty.level][duty.direction]
            if flow.count == 0:
                continue
            cycles = real[duty.layer_op][duty.level][duty.direction]
            if flow.count == 1:
                once.append((duty, cycles))
            else:
                bw_req += math.ceil(flow.bw_aver / setup.cycles_per_op)
                record_transfer(loading, offloading, duty, cycles, shared)
                periodic.append(
                    PortTransfer(
                        duty.layer_op,
                        duty.level,
                        duty.direction,
                        cycles,
                        flow.amount * flow.precision,
                        port.bw_max,
                    )
                )
        key = (port.memory, port.name)
        borrowed[key] = {}
        if once:
            totals = [cycles for _, cycles in once]
            # the innermost level's footprint of the operand, whatever the level
            minima = [math.ceil(movement_int[d.layer_op].bits[1] / port.bw_max) for d, _ in once]
            surplus = max(0, ((port.bw_max - bw_req) / port.bw_max) * tcc)
            remaining, reductions = reduce_balanced(totals, minima, surplus)
            for (duty, _), cycles, reduction in zip(once, remaining, reductions):
                record_transfer(loading, offloading, duty, cycles, shared)
                borrowed[key][duty.mem_op] = (reduction, math.ceil(reduction / tcc * port.bw_max))
            once = [
                PortTransfer(d.layer_op, d.level, d.direction, c, c * port.bw_max, port.bw_max)
                for (d, _), c in zip(once, remaining)
            ]
        transfers[key] = once + periodic
    return loading, offloading, transfers, borrowed


def record_transfer(loading, offloading, duty: PortDuty, cycles, shared: bool) -> None:
    """Enter one transfer's cycles (and whether its port serves both inputs) in the on-loading
    or off-loading table (docs/models/cost-model.md#latency)."""
    table = loading if duty.loading else offloading
    table.setdefault(duty.layer_op, {})[duty.key] = (cycles, shared)


@dataclass(frozen=True)
class OnloadingParts:
    """On-loading cycles per input operand: on unshared, half-shared and shared ports (docs/models/cost-model.md#latency)."""

    individual: dict
    half_shared: dict
    shared: dict


def onloading_cycles(
    setup: Setup, loading, maximum=max, minimum=min
) -> tuple[float, OnloadingParts]:
    """Initial data loading before computation (docs/models/cost-model.md#latency).

    With cycles given as arrays (one entry per candidate, :mod:`zigzag.mapping_search.batched`),
    ``maximum`` and ``minimum`` are ``np.maximum`` and ``np.minimum``.
    """
    inputs = setup.layer.inputs
    indiv = {op: 0 for op in inputs}
    half = {op: 0 for op in inputs}
    shared = {op: 0 for op in inputs}
    for op in inputs:
        table = loading[op]
        for k in range(setup.operands[op].n - 1):
            cyc1, sh1 = table[loading_key(op, k, "fh")]
            cyc2, sh2 = table[loading_key(op, k + 1, "tl")]
            longest = maximum(cyc1, cyc2)
            if not sh1 and not sh2:
                indiv[op] += longest
            elif sh1 and sh2:
                shared[op] += longest
            else:
                half[op] = longest  # assignment, not accumulation
    parts = OnloadingParts(indiv, half, shared)
    if not inputs:
        return 0, parts
    if len(inputs) == 1:
        return indiv[inputs[0]], parts
    op1, op2 = inputs[0], inputs[1]
    p1 = shared[op1] + maximum(shared[op2] + half[op2] + indiv[op2], half[op1] + indiv[op1])
    p2 = shared[op2] + maximum(shared[op1] + half[op1] + indiv[op1], half[op2] + indiv[op2])
    return minimum(p1, p2), parts


def port_bound_cycles(setup: Setup, movement) -> int:
    """The bandwidth-conserving floor of a layer's latency (docs/models/cost-model.md#a-bandwidth-conserving-latency):
    over every used port, the cycles it needs to carry all the bits crossing it during the layer,
    ``ceil(sum of count x amount x precision over its duties / bandwidth_max)``, the largest of them.

    ``movement`` is the fractional variant, the one the energy counts: the integer variant's
    rounded-down unrollings can cover less than the whole layer."""
    longest = 0
    for port in setup.ports:
        if not port.bw_max:  # a port without bandwidth moves nothing (as in the stall model)
            continue
        bits = 0
        for duty in port.duties:
            flow = movement[duty.layer_op].flows[duty.level][duty.direction]
            bits = bits + flow.count * flow.amount * flow.precision
        longest = max(longest, math.ceil(bits / port.bw_max))
    return longest


def offloading_cycles(setup: Setup, offloading, maximum=max) -> tuple[float, list]:
    """Final off-loading of the outputs, ports working in series (docs/models/cost-model.md#latency); ``maximum`` as in
    :func:`onloading_cycles`."""
    out = setup.layer.output
    table = offloading[out]
    pairs = [
        maximum(table[loading_key(out, k, "th")][0], table[loading_key(out, k + 1, "fl")][0])
        for k in range(setup.operands[out].n - 1)
    ]
    return sum(pairs), pairs
