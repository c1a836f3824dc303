"""Spatial and temporal quantities of one mapping, per operand (docs/models/cost-model.md#spatial-mapping).

pr-decoupling (docs/models/cost-model.md#spatial-mapping), unit counts and bandwidth boosts of the spatial mapping (docs/models/cost-model.md#spatial-mapping), the
stationarity merge-down and cycle counts of the temporal mapping (docs/models/cost-model.md#temporal-mapping), and what the two
give together: footprints and partial-sum flags (docs/models/cost-model.md#data-held-per-level).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from zigzag.cost.model.setup import LevelLoops, Operand, Setup, ir_name, r_name
from zigzag.memo import recent


# =============================================================================================
# docs/models/cost-model.md#spatial-mapping  pr-decoupling
# =============================================================================================


def decouple_pr_loops(
    levels, operand: Operand, pr_sizes: dict[str, int]
) -> list[list[tuple[str, float]]]:
    """Replace the pr loops (``OX``, ``FX`` ...) of a pr operand by ``X_R`` / ``X_IR`` pairs (docs/models/cost-model.md#spatial-mapping).

    Walks the levels bottom-up and the loops in order, keeping per data dim ``X`` the
    cumulative sizes of its two related dims.  Each pr loop becomes ``(X_R, e / e_prev)``
    followed by ``(X_IR, ru / ru_prev)`` with ``e`` the clipped extent of ``X`` so far (``int()``
    of the cumulative sizes) and ``ru = cumA * cumB / e`` the reuse so far.
    """
    relations = operand.pr_relations
    if not relations:
        return [list(level) for level in levels]
    keep = operand.relevant | operand.irrelevant
    # per data dim: [cum_a, cum_b, e_prev, ru_prev]
    state = {rel.data_dim: [1, 1, 1, 1] for rel in relations}
    result = []
    for level in levels:
        new_level = []
        for dim, size in level:
            matched = False
            if dim not in keep:
                for rel in relations:
                    if dim != rel.dim_a and dim != rel.dim_b:
                        continue
                    matched = True
                    st = state[rel.data_dim]
                    if dim == rel.dim_a:
                        st[0] *= size
                    else:
                        st[1] *= size
                    extent = min(pr_sizes[rel.data_dim], rel.unique_count(int(st[0]), int(st[1])))
                    reuse = (st[0] * st[1]) / extent
                    new_level.append((r_name(rel.data_dim), extent / st[2]))
                    new_level.append((ir_name(rel.data_dim), reuse / st[3]))
                    st[2], st[3] = extent, reuse
            if not matched:
                new_level.append((dim, size))
        result.append(new_level)
    return result


# =============================================================================================
# docs/models/cost-model.md#spatial-mapping  Derived spatial quantities
# =============================================================================================


@dataclass(frozen=True)
class SpatialQuantities:
    """docs/models/cost-model.md#spatial-mapping for one operand and one spatial variant (lists indexed by architecture index)."""

    levels: LevelLoops  # S_0 .. S_n as given
    unit_count: tuple[int, ...]  # instances at each architecture index
    unit_unique: tuple[float, ...]  # instances holding distinct data
    boost: tuple[int, ...]  # memory bandwidth boost; boost[n] = 1


def spatial_quantities(
    levels: LevelLoops, operand: Operand, pr_sizes: dict[str, int]
) -> SpatialQuantities:
    """Unit counts, unique-unit counts and bandwidth boosts of one operand (docs/models/cost-model.md#spatial-mapping).

    A factor counts as relevant when its (decoupled) dim is in ``r'``; everything else --
    including dims that are neither r' nor ir' -- counts as irrelevant.
    """
    decoupled = decouple_pr_loops(levels, operand, pr_sizes)
    relevant = operand.relevant_dec
    unroll_r, unroll_total = [], []
    for level in decoupled:
        r = total = 1
        for dim, factor in level:
            if dim in relevant:
                r *= factor
            total *= factor
        unroll_r.append(r)
        unroll_total.append(total)
    arch = len(decoupled)
    unit_count = tuple(round(round(math.prod(unroll_total[a:]), 3)) for a in range(arch))
    unit_unique = tuple(math.prod(unroll_r[a:]) for a in range(arch))
    boost = tuple(round(unit_unique[k] / unit_unique[k + 1]) for k in range(arch - 1)) + (1,)
    return SpatialQuantities(levels, unit_count, unit_unique, boost)


def normalise_levels(mapping: dict) -> dict[str, LevelLoops]:
    """``{op: [[(dim, size), ...] per level]}`` (lists or tuples) as nested tuples."""
    return {
        op: tuple(tuple(map(tuple, level)) for level in levels) for op, levels in mapping.items()
    }


#: spatial quantities by (set-up frame, spatial variant), the last :data:`SPATIAL_KEPT` used
_SPATIAL: OrderedDict = OrderedDict()
SPATIAL_KEPT = 4096


def spatial_analysis(
    setup: Setup, levels: tuple[tuple[str, LevelLoops], ...]
) -> dict[str, SpatialQuantities]:
    """docs/models/cost-model.md#spatial-mapping for every operand of one spatial variant (cached: a search evaluates one spatial
    mapping with many temporal mappings). Kept by the set-up's frame (``zigzag.cost.model.setup.Frame``):
    they read the layer, its operands' relevancy and memory levels, never a memory's size, cost
    or bandwidth, so the set-ups of one layer on accelerators of one structure share them."""
    return recent(
        _SPATIAL,
        (setup.frame, levels),
        lambda: spatial_quantities_of(setup, levels),
        SPATIAL_KEPT,
    )


def spatial_quantities_of(
    setup: Setup, levels: tuple[tuple[str, LevelLoops], ...]
) -> dict[str, SpatialQuantities]:
    """:func:`spatial_analysis`, computed (uncached)."""
    per_op = dict(levels)
    result = {}
    for op, operand in setup.operands.items():
        if len(per_op[op]) != operand.n + 1:
            raise ValueError(
                f"spatial mapping of operand {op} has {len(per_op[op])} entries, "
                f"expected {operand.n + 1} (memory levels + 1)"
            )
        result[op] = spatial_quantities(per_op[op], operand, setup.pr_sizes)
    macs = {q.unit_count[0] for q in result.values()}
    if len(macs) != 1:
        raise ValueError(
            f"spatial mapping gives different MAC-level unit counts per operand: {macs}"
        )
    return result


# =============================================================================================
# docs/models/cost-model.md#temporal-mapping  Temporal mapping: stationarity merge-down, cycle counts, top loops
# =============================================================================================


def _leading_run(loops, dims) -> int:
    """Length of the maximal run of loops at the innermost end whose dims are in ``dims``."""
    count = 0
    for dim, _ in loops:
        if dim not in dims:
            break
        count += 1
    return count


def merge_down(levels: LevelLoops, irrelevant: frozenset[str]) -> tuple[LevelLoops, float]:
    """Stationarity merge-down of one operand's temporal mapping (docs/models/cost-model.md#temporal-mapping).

    Repeatedly moves the maximal run of ``ir(op)`` loops at the innermost end of every level
    ``L > 0`` to the outermost end of level ``L - 1``, until nothing moves.  The global loop
    order never changes, only the level boundaries rise.  Returns the stationary mapping and
    ``mac_st(op)``, the product of the ir-run at the innermost end of level 0.
    """
    work = [list(level) for level in levels]
    moved = True
    while moved:
        moved = False
        for k in range(1, len(work)):
            run = _leading_run(work[k], irrelevant)
            if run:
                work[k - 1].extend(work[k][:run])
                del work[k][:run]
                moved = True
    mac_st = 1
    for dim, size in work[0] if work else ():
        if dim not in irrelevant:
            break
        mac_st *= size
    return tuple(tuple(level) for level in work), mac_st


def cycles_at_and_below(levels: LevelLoops) -> list:
    """``cabl[k]`` = product of all loops of levels ``0..k`` (docs/models/cost-model.md#temporal-mapping)."""
    per_level = [math.prod(size for _, size in level) for level in levels]
    return [math.prod(per_level[: k + 1]) for k in range(len(levels))]


def top_loop_sizes(levels: LevelLoops, dims: frozenset[str]) -> list:
    """Per architecture index, the product of the maximal run of loops at the *outermost*
    end of each level whose dims are in ``dims`` (``top_r`` / ``top_ir``, docs/models/cost-model.md#temporal-mapping); index 0 is 1."""
    result = [1]
    for level in levels:
        product = 1
        for dim, size in reversed(level):
            if dim not in dims:
                break
            product *= size
        result.append(product)
    return result


@dataclass(frozen=True)
class TemporalQuantities:
    """docs/models/cost-model.md#temporal-mapping for one operand."""

    stationary: LevelLoops
    mac_st: float
    cabl: tuple
    top_r: tuple
    top_ir: tuple


def temporal_quantities(levels: LevelLoops, operand: Operand) -> TemporalQuantities:
    """Stationary mapping, ``mac_st``, cycle counts and top loops of one operand (docs/models/cost-model.md#temporal-mapping)."""
    stationary, mac_st = merge_down(levels, operand.irrelevant)
    return TemporalQuantities(
        stationary=stationary,
        mac_st=mac_st,
        cabl=tuple(cycles_at_and_below(stationary)),
        top_r=tuple(top_loop_sizes(stationary, operand.relevant)),
        top_ir=tuple(top_loop_sizes(stationary, operand.irrelevant)),
    )


# =============================================================================================
# docs/models/cost-model.md#data-held-per-level  Combined per-level quantities: footprints, psum flags, precisions, bits
# =============================================================================================


def footprints(temporal: LevelLoops, spatial: LevelLoops, operand: Operand, pr_sizes) -> list[int]:
    """``D[a]``: elements held by one instance at architecture index ``a`` (docs/models/cost-model.md#data-held-per-level).

    Built on the "1s2t" list ``[[], T_0+S_0, ..., T_{n-1}+S_{n-1}]`` (pr-decoupled for a pr
    operand): product of the r' factors per level, cumulative product, rounded twice as the
    reference does.
    """
    combined = [()] + [temporal[k] + spatial[k] for k in range(operand.n)]
    if operand.pr_relations:
        combined = decouple_pr_loops(combined, operand, pr_sizes)
    relevant = operand.relevant_dec
    result = []
    cumulative = 1
    for level in combined:
        per_level = 1
        for dim, size in level:
            if dim in relevant:
                per_level *= size
        cumulative = cumulative * per_level
        result.append(round(round(cumulative)))
    return result


def psum_flags(temporal: LevelLoops, spatial: LevelLoops, operand: Operand, pr_sizes) -> list[bool]:
    """``psum[k]``: memory level ``k`` of the output holds partial sums (docs/models/cost-model.md#data-held-per-level).

    On the "1s1t" list ``[S_0, T_0+S_1, ..., T_{n-1}+S_n]``: ``psum[k]`` is true when some
    level ``a > k`` of it holds an ``ir'(O)`` loop of size > 1; ``psum[n] = False``.
    """
    n = operand.n
    combined = [spatial[0]] + [temporal[k] + spatial[k + 1] for k in range(n)]
    if operand.pr_relations:
        combined = decouple_pr_loops(combined, operand, pr_sizes)
    irrelevant = operand.irrelevant_dec
    has_ir = [any(dim in irrelevant and size > 1 for dim, size in level) for level in combined]
    return [any(has_ir[k + 1 :]) for k in range(n)] + [False]
