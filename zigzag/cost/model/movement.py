"""Data movement and what it costs in memory (docs/models/cost-model.md#data-held-per-level).

Per operand, level and direction: the transfers (period, count, amount, precision; docs/models/cost-model.md#data-movement), the
memory utilisation they imply (docs/models/cost-model.md#data-held-per-level), the memory word accesses (docs/models/cost-model.md#data-movement) and their energy (docs/models/cost-model.md#energy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from zigzag.cost.model.quantities import (
    SpatialQuantities,
    TemporalQuantities,
    footprints,
    psum_flags,
)
from zigzag.cost.model.setup import Operand, Setup
from zigzag.errors import InputError
from zigzag.hardware.accelerator import DIRECTIONS


# =============================================================================================
# docs/models/cost-model.md#data-movement  Data movement per level, operand and direction
# =============================================================================================


class Flow(NamedTuple):
    """One direction of one memory level (docs/models/cost-model.md#data-movement)."""

    period: int  # T: cycles between transfers
    count: int  # N: number of periods in the layer
    amount: int  # A: elements per period (per instance)
    precision: int  # P: bits per element
    bw_aver: int  # average required bandwidth (bits/cycle), int()
    window: int  # instantaneous updating window (non-double-buffered), int()


NO_FLOW = Flow(0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class OperandMovement:
    """Everything docs/models/cost-model.md#data-held-per-level derive for one operand under one spatial variant."""

    D: list[int]  # elements per instance, per architecture index
    precision: list[int]  # per architecture index (output: from the psum flags)
    bits: list[int]  # D * precision
    eff_bits: list[int]  # bits // top_r
    psum: list[bool] | None  # output only
    flows: list[dict[str, Flow]]  # per memory level: direction -> Flow


def operand_movement(
    operand: Operand,
    temporal: TemporalQuantities,
    spatial: SpatialQuantities,
    total_cycle,
    pr_sizes,
    same_data_no_access: bool,
) -> OperandMovement:
    """docs/models/cost-model.md#data-held-per-level and docs/models/cost-model.md#data-movement for one operand and one spatial variant."""
    n = operand.n
    T = temporal.stationary
    S = spatial.levels
    D = footprints(T, S, operand, pr_sizes)
    boost = spatial.boost
    top_ir = temporal.top_ir

    # docs/models/cost-model.md#data-held-per-level precisions per architecture index; docs/models/cost-model.md#data-movement period base
    if operand.is_output:
        psum = psum_flags(T, S, operand, pr_sizes)
        p_o, p_of = operand.precision, operand.final_precision
        prec = [p_o if flag else p_of for flag in psum]
        c = [1, *temporal.cabl]
    else:
        psum = None
        prec = [operand.precision] * (n + 1)
        c = [temporal.mac_st if same_data_no_access else 1, *temporal.cabl]

    # docs/models/cost-model.md#data-held-per-level bits (the output's footprint at ML_k uses prec[k+1], decided by psum[k+1])
    bits = [D[a] * prec[a] for a in range(n + 1)]
    eff_bits = [bits[a] // temporal.top_r[a] for a in range(n + 1)]

    # docs/models/cost-model.md#data-movement required bandwidths (bits/cycle)
    low = [D[a] * prec[a] / c[a] for a in range(n + 1)]
    high = [low[a] * boost[a] for a in range(n + 1)]

    flows = []
    for k in range(n):
        s_low, s_high = int(top_ir[k]), int(top_ir[k + 1])
        t_low, t_high = int(c[k]), int(c[k + 1])
        n_low, n_high = int(total_cycle // c[k]), int(total_cycle // c[k + 1])
        if operand.is_output:
            # docs/models/cost-model.md#data-movement: psums go up (fl) and come back down (tl) equally often, and when the level
            # above accumulates they go up (th) and come back (fh) equally often
            amount_low, bw_low, window_low = int(D[k] * boost[k]), int(high[k]), int(t_low / s_low)
            bw_high, window_high = int(low[k + 1]), int(t_high / s_high)
            if psum[k]:
                fl = tl = Flow(t_low, n_low, amount_low, p_o, bw_low, window_low)
            else:
                fl = Flow(t_low, n_low, amount_low, p_of, bw_low, window_low)
                tl = NO_FLOW
            if psum[k + 1]:
                th = fh = Flow(t_high, n_high, D[k + 1], p_o, bw_high, window_high)
            else:
                th = Flow(t_high, n_high, D[k + 1], p_of, bw_high, window_high)
                fh = NO_FLOW
        else:
            # docs/models/cost-model.md#data-movement
            p = operand.precision
            tl = Flow(t_low, n_low, D[k] * boost[k], p, int(high[k]), int(t_low / s_low))
            fh = Flow(t_high, n_high, D[k + 1], p, int(low[k + 1]), int(t_high / s_high))
            fl = th = NO_FLOW
        if k == n - 1:
            # docs/models/cost-model.md#data-movement: traffic with the world outside the top level is not modelled
            fh = th = NO_FLOW
        flows.append({"fh": fh, "tl": tl, "fl": fl, "th": th})

    return OperandMovement(
        D=D, precision=prec, bits=bits, eff_bits=eff_bits, psum=psum, flows=flows
    )


# =============================================================================================
# docs/models/cost-model.md#data-held-per-level  Memory utilisation
# =============================================================================================


def memory_utilization(setup: Setup, movement: dict[str, OperandMovement]):
    """Individual and shared (effective) utilisations per operand and level (docs/models/cost-model.md#data-held-per-level).

    Returns ``(util, util_shared, eff_util, eff_util_shared)``, each ``{op: [per level]}``.
    """
    util, eff = {}, {}
    for op, operand in setup.operands.items():
        mv = movement[op]
        util[op] = [mv.bits[k + 1] / lv.size for k, lv in enumerate(operand.levels)]
        eff[op] = [mv.eff_bits[k + 1] / lv.size for k, lv in enumerate(operand.levels)]
    util_sh = {op: list(v) for op, v in util.items()}
    eff_sh = {op: list(v) for op, v in eff.items()}
    for members in setup.sharing_groups:
        u = sum(util[op][k] for op, k in members)
        e = sum(eff[op][k] for op, k in members)
        for op, k in members:
            util_sh[op][k] = u
            eff_sh[op][k] = e
    return util, util_sh, eff, eff_sh


# =============================================================================================
# docs/models/cost-model.md#data-movement, docs/models/cost-model.md#energy  Memory word accesses and energy
# =============================================================================================


def word_accesses(flow: Flow, bw_min: int | None, bw_max: int | None, instances: int) -> int:
    """Memory word accesses of one direction of one level, all instances together (docs/models/cost-model.md#data-movement).

    Returns None when no port serves the direction although data moves (the caller reports it).
    """
    if bw_min is None and bw_max is None:
        return 0 if flow.amount == 0 else None
    if flow.amount == 0 or flow.precision == 0:
        return 0
    return int(
        math.ceil(flow.amount * flow.precision / bw_min)
        * (bw_min / bw_max)
        * flow.count
        * instances
    )


def memory_word_access(setup: Setup, movement, spatial) -> dict[str, list[dict[str, int]]]:
    """Word accesses per operand, level and direction, from the fractional variant (docs/models/cost-model.md#data-movement)."""
    result = {}
    for op, operand in setup.operands.items():
        per_level = []
        for k, lv in enumerate(operand.levels):
            instances = spatial[op].unit_count[k + 1]
            flows = movement[op].flows[k]
            counts = {
                d: word_accesses(flows[d], lv.bw_min[d], lv.bw_max[d], instances)
                for d in DIRECTIONS
            }
            for d, count in counts.items():
                if count is None:
                    kind = "write" if d in ("fh", "fl") else "read"
                    raise InputError(
                        f"accelerator '{setup.accelerator.name}'",
                        f"memories.{lv.memory.name}.ports",
                        f"no port carries '{operand.mem_op}, {d}', but the mapping of layer {setup.layer.name} "
                        f"moves data there; add '{operand.mem_op}, {d}' to the allocation of a {kind} or "
                        "read_write port (see docs/reference/accelerator.md)",
                    )
            per_level.append(counts)
        result[op] = per_level
    return result


def memory_energy(setup: Setup, accesses):
    """Per level and direction energies and their sums (docs/models/cost-model.md#energy).

    Returns ``(mem_energy, breakdown, breakdown_further)``; the running sum starts from the
    integer 0 and goes over operands in layer-operand order, levels bottom-up.
    """
    total = 0
    breakdown, further = {}, {}
    for op, operand in setup.operands.items():
        per_level, per_level_dirs = [], []
        for lv, acc in zip(operand.levels, accesses[op]):
            e_th = acc["th"] * lv.r_cost
            e_fh = acc["fh"] * lv.w_cost
            e_tl = acc["tl"] * lv.r_cost
            e_fl = acc["fl"] * lv.w_cost
            level_energy = (e_th + e_tl) + (e_fh + e_fl)
            per_level.append(level_energy)
            per_level_dirs.append({"fh": e_fh, "tl": e_tl, "fl": e_fl, "th": e_th})
            total += level_energy
        breakdown[op] = per_level
        further[op] = per_level_dirs
    return total, breakdown, further
