"""DRAM-link reservations of a multi-core schedule: the bandwidth a CN with streamed operands
(too large for its core) holds on the links to and from the off-chip core while it runs."""

from __future__ import annotations

import math

from zigzag.multicore.schedule.problem import O
from zigzag.multicore.schedule.state import ScheduleState
from zigzag.multicore.schedule.traffic import streamed_dram_bits


def reserve_dram_links(
    state: ScheduleState, n: int, core: int, t: float, duration: float
) -> tuple[float, float]:
    """Reserve DRAM-link bandwidth for a CN's streamed operands; (block start, CN duration).

    Stream's model reserves the mapping's bandwidth need for ``duration`` (the need may exceed
    the link's width). With the ``bandwidth_bound`` latency model the reservation is at most the
    link's width and the CN lasts at least its DRAM bits over it (:func:`granted_rate`)."""
    p = state.p
    too_large = p.too_large[n]
    if not too_large:
        return t, duration
    need: dict[int, float] = {}
    tensors: dict[int, list[int]] = {}
    bits: dict[int, float] = {}
    read = write = math.nan
    if p.latency_model == "bandwidth_bound":
        streamed = streamed_dram_bits(p, n)
        read, write = sum(r for _, r, _ in streamed), sum(w for _, _, w in streamed)
    if O in too_large:
        for lk in dict.fromkeys(state.hw.routes[(core, state.offchip)]):
            need[lk] = need.get(lk, 0) + float(p.bw_to_offchip[n])
            bits[lk] = bits.get(lk, 0) + write
            tensors.setdefault(lk, []).append(int(p.operand_tensor[n, O]))
    inputs = [m for m in too_large if m != O]
    if inputs:
        for lk in dict.fromkeys(state.hw.routes[(state.offchip, core)]):
            need[lk] = need.get(lk, 0) + float(p.bw_from_offchip[n])
            bits[lk] = bits.get(lk, 0) + read
            tensors.setdefault(lk, []).extend(int(p.operand_tensor[n, m]) for m in inputs)
    bound = p.latency_model == "bandwidth_bound"
    if bound:
        bandwidth = state.links.bandwidth
        granted = {lk: granted_rate(need[lk], bits[lk], duration, bandwidth[lk]) for lk in need}
        for lk, rate in granted.items():
            moved = bits[lk] if not math.isnan(bits[lk]) else need[lk] * duration
            if rate > 0 and moved > rate * duration * (1 + 1e-9):
                duration = float(math.ceil(moved / rate))
        need = granted
    # bandwidth_bound: a block moves its own bits, it never rides on another event as a broadcast
    start = state.links.window(need, t, duration, {lk: [] for lk in need} if bound else tensors)
    for lk, req in need.items():
        state.links.record(
            lk,
            "block",
            start,
            start + duration,
            math.ceil(req),
            tuple(tensors[lk]),
            shared=not bound,
        )
    return start, duration


def granted_rate(need: float, bits: float, runtime: float, bandwidth: float) -> float:
    """The DRAM-link bandwidth a streaming CN gets under ``bandwidth_bound``: what it needs to move
    its bits in its run time (or its mapping's need, if higher), at most the link's width. Bits
    not known (NaN): the mapping's need for the run time stands for them."""
    rate = need if math.isnan(bits) or runtime <= 0 else max(need, bits / runtime)
    if rate <= 0 and bits > 0:  # no run time to spread them over: the whole link
        rate = bandwidth
    return min(rate, bandwidth)
