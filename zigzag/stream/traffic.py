"""The off-chip (DRAM) traffic of a multi-core schedule, per layer and kind of data.

:meth:`ScheduleResult.dram_traffic` gives the totals; :func:`dram_traffic_by_layer` splits the same
bits by the layer that owns each tensor, so that one can see which layers' data leave the chip
(e.g. whether a fused attention keeps its scores on-chip).
"""

from __future__ import annotations

from collections import Counter

#: the kinds of traffic per layer
KINDS = ("constants", "written", "read_back", "streamed")


def dram_traffic_by_layer(result) -> dict[int, dict[str, float]]:
    """Bits moved to or from the off-chip memory per layer id: ``constants`` (its constant operands
    fetched: weights, a cache), ``written`` (its outputs written back: evictions, final outputs),
    ``read_back`` (its outputs read again from DRAM by a consumer) and ``streamed`` (operands its
    CNs, too large for their core, stream while they run). The four kinds add up, over all
    layers, to ``result.dram_traffic()["traffic_bits"]``."""
    from zigzag.stream.schedule.problem import O

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
    for n, operands in enumerate(p.too_large):
        if len(operands):
            duration = float(result.end[n] - result.start[n])
            traffic.setdefault(int(p.layer[n]), Counter())["streamed"] += _streamed_bits(p, n, operands, duration)
    return {layer: {kind: float(counts[kind]) for kind in KINDS} for layer, counts in sorted(traffic.items())}


def _streamed_bits(p, n: int, operands, duration: float) -> float:
    """The bits a too-large CN streams: its read bandwidth while it runs when it streams an
    input, plus its write bandwidth when it streams its output (as ``dram_traffic`` counts)."""
    from zigzag.stream.schedule.problem import O

    bits = 0.0
    if O in operands:
        bits += float(p.bw_to_offchip[n]) * duration
    if any(m != O for m in operands):
        bits += float(p.bw_from_offchip[n]) * duration
    return bits
