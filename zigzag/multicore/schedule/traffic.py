"""The off-chip (DRAM) traffic of a multi-core schedule, per layer and kind of data.

:meth:`ScheduleResult.dram_traffic` gives the totals; :func:`dram_traffic_by_layer` splits the same
bits by the layer that owns each tensor, so that one can see which layers' data leave the chip
(e.g. whether a fused attention keeps its scores on-chip).
"""

from __future__ import annotations

from collections import Counter

from zigzag.multicore.schedule.problem import O

#: the kinds of traffic per layer
KINDS = ("constants", "written", "read_back", "streamed")


def dram_traffic_by_layer(result) -> dict[int, dict[str, float]]:
    """Bits moved to or from the off-chip memory per layer id: ``constants`` (its constant operands
    fetched: weights, a cache), ``written`` (its outputs written back: evictions, final outputs),
    ``read_back`` (its outputs read again from DRAM by a consumer) and ``streamed`` (operands its
    CNs, too large for their core, read from or write to DRAM while they run: :func:`streamed_dram_bits`).
    The four kinds add up, over all layers, to ``result.dram_traffic()["traffic_bits"]``."""
    p = result.problem
    offchip = p.hardware.offchip_core
    traffic: dict[int, Counter] = {}
    for t in result.transfers:
        if offchip not in (t.sender, t.receiver):
            continue
        origin, operand = int(p.tensor_origin[t.tensor]), int(p.tensor_operand[t.tensor])
        if t.receiver == offchip:
            kind = "written"
        else:  # the tensor's own operand (not the receiver's) tells a constant from an output
            kind = "constants" if operand != O and operand in p.constants[origin] else "read_back"
        traffic.setdefault(int(p.layer[origin]), Counter())[kind] += float(p.tensor_size[t.tensor])
    for n in range(p.nb_cns):
        for _, read, write in streamed_dram_bits(p, n):
            traffic.setdefault(int(p.layer[n]), Counter())["streamed"] += read + write
    return {
        layer: {kind: float(counts[kind]) for kind in KINDS}
        for layer, counts in sorted(traffic.items())
    }


def streamed_dram_bits(problem, n: int) -> tuple[tuple[int, float, float], ...]:
    """(memory operand, bits read from DRAM, bits written to DRAM) per operand CN ``n`` streams:
    the cost model's accesses of the DRAM level, as the problem's costs give them
    (``ScheduleProblem.dram_bits``); NaN bits where they do not. Not the bandwidth the CN
    reserves on the DRAM link times its run time: that rate is Stream's link model, not bits."""
    operands = problem.too_large[n]
    if not operands:
        return ()
    bits = None if problem.dram_bits is None else problem.dram_bits[n]
    if bits is None or len(bits) != len(operands):
        nan = float("nan")
        return tuple((m, nan, nan) for m in operands)
    return tuple((m, float(read), float(write)) for m, (read, write) in zip(operands, bits))
