"""Stalls and slack during computation (docs/models/cost-model.md#latency).

Double buffering per level, real and allowed transfer cycles per direction, and per memory
port the activities that share it, their updating windows and the port's stall or slack.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from zigzag.cost.model.setup import Port, Setup
from zigzag.hardware.accelerator import DIRECTIONS


# =============================================================================================
# docs/models/cost-model.md#latency  Double buffering, real and allowed transfer cycles
# =============================================================================================


def double_buffer_flags(setup: Setup, eff_util, eff_util_shared) -> dict[str, list[bool]]:
    """``DB(op)`` per architecture index (docs/models/cost-model.md#latency).

    Mutates ``eff_util_shared`` as the reference does: when an operand fits beside the
    others (rule 2), its effective utilisation is added to every linked member of its
    sharing group, which affects operands processed later.
    """
    flags = {}
    for op, operand in setup.operands.items():
        db = [False]
        for k, lv in enumerate(operand.levels):
            if eff_util_shared[op][k] <= 0.5:
                db.append(True)
            elif eff_util[op][k] <= 1 - eff_util_shared[op][k]:
                db.append(True)
                if lv.sharing is not None:
                    for member_op, member_k in lv.sharing:
                        eff_util_shared[member_op][member_k] += eff_util[op][k]
            else:
                db.append(False)
        flags[op] = db
    return flags


def transfer_cycles(setup: Setup, movement_int, db_flags):
    """Real and allowed cycles per operand, level and direction (docs/models/cost-model.md#latency).

    ``real = ceil(A * P / bw_max)`` (0 without bandwidth); ``allowed = ceil(X * CPO)`` with
    ``X`` the full period when the relevant level is double-buffered, else the window.  The
    relevant level is the one below for ``tl``/``fl`` and this one for ``th``/``fh``.
    """
    real, allowed = {}, {}
    ceil, cpo = math.ceil, setup.cycles_per_op
    for op, operand in setup.operands.items():
        real_op, allowed_op = [], []
        db = db_flags[op]
        flows_op = movement_int[op].flows
        for k, lv in enumerate(operand.levels):
            flows = flows_op[k]
            bw_max = lv.bw_max
            r, a = {}, {}
            for d, upper in _UPPER:
                period, _, amount, precision, _, window = flows[d]
                bw = bw_max[d]
                r[d] = ceil(amount * precision / bw) if bw else 0
                a[d] = ceil((period if db[k + upper] else window) * cpo)
            real_op.append(r)
            allowed_op.append(a)
        real[op] = real_op
        allowed[op] = allowed_op
    return real, allowed


#: each direction, and whether the level its double buffering reads is the one above (1: this
#: level, index ``k + 1`` of the flags, for ``th``/``fh``) or the one below (0: ``tl``/``fl``)
_UPPER = tuple((d, 1 if d in ("th", "fh") else 0) for d in DIRECTIONS)


# =============================================================================================
# docs/models/cost-model.md#latency  Port activities, stall / slack
# =============================================================================================


class PortActivity(NamedTuple):
    """One served (operand, level, direction) of a port during computation (docs/models/cost-model.md#latency)."""

    op: str
    level: int
    direction: str
    real: int
    allowed: int
    period: int
    count: int

    @property
    def stall_or_slack(self) -> int:
        """Stall (+) or slack (-) over the layer; the first period is excluded."""
        return (self.real - self.allowed) * (self.count - 1)

    @property
    def updating_window(self) -> int:
        return self.allowed * (self.count - 1)


class PortStall(NamedTuple):
    """One port's activities during computation and its stall (+) or slack (-) (docs/models/cost-model.md#latency).
    A named tuple: one per used port of every evaluation, so cheap to make."""

    memory: str
    port: str
    activities: tuple[PortActivity, ...]
    stall_slack: int
    window_union: int | None  # only for >= 2 activities


def port_activities(
    setup: Setup, movement_int, real, allowed
) -> list[tuple[Port, list[PortActivity]]]:
    """Activities per used port, memories in YAML order (docs/models/cost-model.md#latency); unlinked memory operands and
    directions without traffic (``N = 0``) are skipped."""
    result = []
    ceil, cpo = math.ceil, setup.cycles_per_op
    flows = {op: m.flows for op, m in movement_int.items()}
    for port in setup.ports:
        acts = []
        for _, level, direction, op, _, _ in port.duties:
            flow = flows[op][level][direction]
            count = flow.count
            if count == 0:
                continue
            acts.append(
                PortActivity(
                    op,
                    level,
                    direction,
                    real[op][level][direction],
                    allowed[op][level][direction],
                    ceil(flow.period * cpo),
                    count,
                )
            )
        result.append((port, acts))
    return result


def updating_window_union(activities) -> int:
    """Union of the memory-updating windows of the activities sharing a port (docs/models/cost-model.md#latency).

    The first activity whose allowed window fills its whole period gives ``period x count``.
    Otherwise, on a timeline of ``P*`` slots (``P*`` the longest period, first on ties, and
    ``N*`` its count) each activity marks the first ``allowed`` slots of every one of its
    periods; the union is ``(#marked slots) x N*``.
    """
    for act in activities:
        if act.period == act.allowed:
            return act.period * act.count
    longest = activities[0]
    for act in activities[1:]:
        if act.period > longest.period:
            longest = act
    return marked_slots(activities, longest.period) * longest.count


def marked_slots(activities, horizon: int) -> int:
    """Number of slots of ``[0, horizon)`` marked by the activities' windows (docs/models/cost-model.md#latency).

    With nested periods (each divides the next larger one, as in practice) the count is
    computed without building the timeline, which can be millions of slots long: sorting the
    activities by period, the union pattern of the first ``i + 1`` activities over one period
    ``p_i`` is the pattern of the first ``i`` repeated ``p_i / p_{i-1}`` times plus
    ``[0, a_i)``.  Other period sets fall back to marking the slots one by one.
    """
    acts = sorted(
        ((act.period, min(max(act.allowed, 0), act.period)) for act in activities if act.period > 0)
    )
    if any(p2 % p1 for (p1, _), (p2, _) in zip(acts, acts[1:])) or horizon % acts[-1][0]:
        slots = bytearray(horizon)
        for period, allowed in acts:
            for start in range(0, horizon - period + 1, period):
                slots[start : start + allowed] = b"\x01" * allowed
        return sum(slots)

    totals = []  # totals[i]: marked slots of the union of acts[0..i] over one period p_i

    def repeated(i: int, x: int) -> int:
        """Marked slots in [0, x) of the union of acts[0..i] repeated with period p_i."""
        if i < 0:
            return 0
        period = acts[i][0]
        return (x // period) * totals[i] + prefix(i, x % period)

    def prefix(i: int, x: int) -> int:
        """Marked slots in [0, x) (x <= p_i) of the union of acts[0..i]."""
        window = min(x, acts[i][1])
        return window + repeated(i - 1, x) - repeated(i - 1, window)

    for i, (period, _) in enumerate(acts):
        totals.append(prefix(i, period))
    return totals[-1] * (horizon // acts[-1][0])


def port_stall_slack(activities) -> tuple[int, int | None]:
    """``SS_port`` and the window union of one port (docs/models/cost-model.md#latency)."""
    if not activities:
        return 0, None
    if len(activities) == 1:
        return activities[0].stall_or_slack, None
    union = updating_window_union(activities)
    positive = negative = windows = 0
    for act in activities:
        ss = act.stall_or_slack
        if ss > 0:
            positive += ss
        else:
            negative += ss
        windows += act.updating_window
    return positive + max(0, negative + windows - union), union


def stall_slack(setup: Setup, movement_int, real, allowed) -> tuple[int, list[PortStall]]:
    """``SS_comb`` = max(0, worst port) and the per-port details (docs/models/cost-model.md#latency)."""
    ports = []
    combined = 0
    for port, acts in port_activities(setup, movement_int, real, allowed):
        ss, union = port_stall_slack(acts)
        if acts:
            combined = max(combined, ss)
        ports.append(PortStall(port.memory, port.name, tuple(acts), ss, union))
    return combined, ports
