"""The DRAM links of a multi-core schedule: how busy each link attached to the off-chip core is,
the bits it moves against what it can carry in the schedule (its **demand**; above 1 the latency
is not reachable), and Stream's bandwidth reservations over the same (``reserved``, a rate-time
product that is not bits moved). One definition for the schedule's summary, the per-token figures
and the tables."""

from __future__ import annotations

import logging
import math

from zigzag.multicore.schedule.traffic import streamed_dram_bits


def dram_link_shares(result) -> dict[str, dict[str, float]]:
    """Per link attached to the off-chip core of ``result`` (a ScheduleResult), by label: ``busy`` (0..1), the share of the step
    during which it carries something; ``demand``, the bits it moves in the step (a tensor sent to
    several cores at once counted once) over what its bandwidth can carry in the step; ``reserved``, Stream's reservations (transfers at the link's
    width, streaming CNs at their mapping's bandwidth need, for their run time) over the same."""
    p = result.problem
    hw = p.hardware
    offchip = hw.offchip_core
    attached = set()
    for (sender, receiver), route in hw.routes.items():
        if route and sender == offchip:
            attached.add(route[0])
        if route and receiver == offchip:
            attached.add(route[-1])
    moved = dict.fromkeys(attached, 0.0)
    sent = {index: set() for index in attached}  # (tensor, start): a broadcast crosses a link once
    for t in result.transfers:
        for index in set(hw.routes.get((t.sender, t.receiver), ())) & attached:
            if (t.tensor, t.start) not in sent[index]:
                sent[index].add((t.tensor, t.start))
                moved[index] += float(p.tensor_size[t.tensor])
    for n in range(p.nb_cns):
        core = int(p.core[n])
        for _, read, write in streamed_dram_bits(p, n):
            for index in set(hw.routes.get((offchip, core), ())) & attached:
                moved[index] += read
            for index in set(hw.routes.get((core, offchip), ())) & attached:
                moved[index] += write
    shares = {}
    for index in sorted(attached):
        link = hw.links[index]
        events = [e for e in result.link_events[index] if e.activity > 0 and e.end > e.start]
        if result.latency <= 0 or math.isinf(link.bandwidth):
            shares[link.label] = {"busy": 0.0, "demand": 0.0, "reserved": 0.0}
            continue
        busy, reach = 0.0, -math.inf
        for start, end in sorted(
            (e.start, e.end) for e in events
        ):  # the union of the busy intervals
            busy += max(0.0, end - max(start, reach))
            reach = max(reach, end)
        reserved = sum((e.end - e.start) * e.activity for e in events)
        capacity = link.bandwidth * result.latency
        shares[link.label] = {
            "busy": busy / result.latency,
            "demand": moved[index] / capacity,
            "reserved": reserved / capacity,
        }
    return shares


#: DRAM link demand above which a schedule is flagged as moving more than its links can carry
#: (1 plus room for the rounding of transfer and block durations)
DEMAND_LIMIT = 1.02


def dram_link_check(result) -> dict:
    """The most loaded DRAM link of ``result``: ``dram_link`` (its label), ``dram_link_demand`` (bits
    it moves over what it can carry in the schedule; NaN when streamed bits are unknown),
    ``dram_link_overcommitted`` (demand above :data:`DEMAND_LIMIT`: the latency is not reachable)
    and the ``latency_model`` scheduled with."""
    shares = dram_link_shares(result)
    label, demand = None, 0.0
    for name, share in shares.items():
        if label is None or share["demand"] > demand or math.isnan(share["demand"]):
            label, demand = name, share["demand"]
    return {
        "latency_model": result.problem.latency_model,
        "dram_link": label,
        "dram_link_demand": demand,
        "dram_link_overcommitted": bool(demand > DEMAND_LIMIT),
    }


def warn_if_overcommitted(result, check: dict | None = None) -> None:
    """Log one warning when a DRAM link of ``result`` moves more bits than it can carry."""
    check = check or dram_link_check(result)
    if not check["dram_link_overcommitted"]:
        return
    logging.getLogger(__name__).warning(
        "DRAM link '%s' must move %.3fx the bits it can carry in the scheduled %.10g cycles (Stream's "
        "link model does not stretch CNs streaming operands from DRAM), so this latency is not reachable; "
        "schedule with latency_model: bandwidth_bound (--latency-model bandwidth_bound) for one that is",
        check["dram_link"],
        check["dram_link_demand"],
        float(result.latency),
    )
