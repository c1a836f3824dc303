"""Compiled loops of the batched data movement (numba; docs/performance.md#compiled-kernels):
every operand's temporal levels, the pr-decoupling walk and the word accesses, candidate by candidate, with the
IEEE operations of the numpy steps they replace in the same order (as
:mod:`~zigzag.mapping_search.batched.kernels`, whose helpers they share), so the same bits."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from zigzag.mapping_search.batched.candidates import EXACT
from zigzag.mapping_search.batched.kernels import _array, _maximum, _minimum


#: the one signature of :func:`temporal_levels`: the candidates' ir and r masks over their loop
#: positions, their memory cuts and their prefix products (a transposed view, so layout "A")
_TEMPORAL_SIGNATURE = (
    _array(types.bool_, 2, True),  # irm
    _array(types.bool_, 2, True),  # rm
    types.Array(types.int64, 2, "A", readonly=True),  # cuts
    types.Array(types.float64, 2, "A", readonly=True),  # prefix
)


@njit([_TEMPORAL_SIGNATURE], cache=True, error_model="numpy")
def temporal_levels(irm, rm, cuts, prefix):
    """``(ends, cabl, mac_st, top_r, top_ir)`` of one operand's ``N`` memory levels for ``n``
    candidates (``BatchCostModel._temporal``, docs/models/cost-model.md#temporal-mapping): per
    level ``k`` and candidate ``i``, where the level's loops end (the first position at or after
    its cut that is not an ir loop; the top level: all of them), the product of the loops below
    that end, and the products of the r (``top_r``) and ir (``top_ir``) loops on top of the
    level (the run of such loops ending there, not below the level's start), as quotients of
    prefix products; ``mac_st``: the product below the first position that is not an ir loop.
    Arrays ``(N, n)`` and ``(n,)``: ``N`` is ``cuts.shape[1] + 1``."""
    n, length = irm.shape
    N = cuts.shape[1] + 1
    ends = np.empty((N, n), dtype=np.int64)
    cabl = np.empty((N, n))
    mac_st = np.empty(n)
    top_r = np.empty((N, n))
    top_ir = np.empty((N, n))
    nxt = np.empty(length + 1, dtype=np.int64)
    rs_r = np.empty(length + 1, dtype=np.int64)
    rs_ir = np.empty(length + 1, dtype=np.int64)
    for i in range(n):
        nxt[length] = length
        for p in range(length - 1, -1, -1):
            nxt[p] = nxt[p + 1] if irm[i, p] else p
        rs_r[0] = 0
        rs_ir[0] = 0
        for p in range(length):
            rs_r[p + 1] = rs_r[p] if rm[i, p] else p + 1
            rs_ir[p + 1] = rs_ir[p] if irm[i, p] else p + 1
        mac_st[i] = prefix[i, nxt[0]]
        start = 0
        for k in range(N):
            end = nxt[cuts[i, k]] if k < N - 1 else length
            ends[k, i] = end
            cabl[k, i] = prefix[i, end]
            top_r[k, i] = prefix[i, end] / prefix[i, max(rs_r[end], start)]
            top_ir[k, i] = prefix[i, end] / prefix[i, max(rs_ir[end], start)]
            start = end
    return ends, cabl, mac_st, top_r, top_ir


#: the one signature of :func:`pr_footprints`
_PR_SIGNATURE = (
    types.Array(types.int64, 2, "A", readonly=True),  # ends
    _array(types.int64, 2, True),  # ldim
    _array(types.float64, 2, True),  # lsize
    _array(types.bool_, 1, True),  # relevant_code
    _array(types.bool_, 1, True),  # keep_code
    _array(types.int64, 2, True),  # rel_codes
    _array(types.float64, 2, True),  # rel_figures
    _array(types.int64, 1, True),  # spatial_ptr
    _array(types.int64, 1, True),  # spatial_rel
    _array(types.bool_, 1, True),  # spatial_is_a
    _array(types.float64, 1, True),  # spatial_factor
)


@njit(inline="always")
def _pr_step(state, r, on_a, size, rel_figures):
    """One step of relation ``r``'s decoupling walk: its dim a (``on_a``) or b grows by ``size``;
    the new extent (the distinct values of its data dim, ``DimRelation.unique_count`` of the
    truncated cumulative sizes, at most the data dim's size) replaces the previous one in
    ``state[r]``. Returns ``(extent / previous extent, extent)``."""
    if on_a:
        state[r, 0] = state[r, 0] * size
    else:
        state[r, 1] = state[r, 1] * size
    a, b = np.trunc(state[r, 0]), np.trunc(state[r, 1])
    unique = a * b - _maximum(0.0, b - rel_figures[r, 0]) * (a - rel_figures[r, 1])
    extent = _minimum(rel_figures[r, 2], unique)
    factor = extent / state[r, 2]
    state[r, 2] = extent
    return factor, extent


@njit([_PR_SIGNATURE], cache=True, error_model="numpy")
def pr_footprints(
    ends,
    ldim,
    lsize,
    relevant_code,
    keep_code,
    rel_codes,
    rel_figures,
    spatial_ptr,
    spatial_rel,
    spatial_is_a,
    spatial_factor,
):
    """``(D, zero)``: the footprints ``D[k, i]`` (levels ``1..N``) of an operand with partially
    relevant dims for ``n`` candidates (``BatchCostModel._footprints``,
    docs/models/cost-model.md#spatial-mapping): the pr-decoupling walk loop by loop in the scalar
    model's order, then each level's spatial unrollings; ``zero[i]``: an extent of 0 met (the
    scalar model divides by it).

    ``ends``: the levels' loop ends ``(N, n)``; ``ldim``, ``lsize``: the candidates' dim codes and
    sizes per position. Per relation ``r``: ``rel_codes[r]`` the codes of its two dims,
    ``rel_figures[r]`` ``coef_a // g``, ``coef_b // g`` and the data dim's size. Level ``k``'s
    spatial steps ``spatial_ptr[k]`` .. ``spatial_ptr[k + 1] - 1``: a relation's step
    (``spatial_rel`` >= 0, on its dim a or b) or, with ``spatial_rel`` -1, a relevant dim's
    factor."""
    N, n = ends.shape
    R = rel_codes.shape[0]
    D = np.empty((N, n))
    zero = np.zeros(n, dtype=np.bool_)
    state = np.empty((R, 3))  # cumulative size of dim a, of dim b, previous extent
    for i in range(n):
        for r in range(R):
            state[r, 0] = 1.0
            state[r, 1] = 1.0
            state[r, 2] = 1.0
        cumulative = 1.0
        start = 0
        for k in range(N):
            per_level = 1.0
            end = ends[k, i]
            for p in range(start, end):
                code, size = ldim[i, p], lsize[i, p]
                if relevant_code[code]:
                    per_level = per_level * size
                if keep_code[code]:
                    continue
                for r in range(R):
                    is_a = code == rel_codes[r, 0]
                    if not (is_a or code == rel_codes[r, 1]):
                        continue
                    factor, extent = _pr_step(state, r, is_a, size, rel_figures)
                    per_level = per_level * factor
                    zero[i] = zero[i] or extent == 0
            for j in range(spatial_ptr[k], spatial_ptr[k + 1]):
                r = spatial_rel[j]
                factor = spatial_factor[j]
                if r < 0:
                    per_level = per_level * factor
                    continue
                x_r, extent = _pr_step(state, r, spatial_is_a[j], factor, rel_figures)
                per_level = per_level * x_r
                zero[i] = zero[i] or extent == 0
            cumulative = per_level if k == 0 else cumulative * per_level
            D[k, i] = np.rint(cumulative)
            start = end
    return D, zero


#: the one signature of :func:`word_accesses`: the flows' rows (read-only or not), the per-row
#: port figures, and the exactness flags it narrows in place
_ACCESS_SIGNATURE = (
    _array(types.float64, 2, True),  # data
    _array(types.float64, 2, True),  # count
    _array(types.bool_, 2, True),  # moving
    _array(types.bool_, 2, True),  # small
    _array(types.float64, 1, True),  # bw_min
    _array(types.float64, 1, True),  # ratio
    _array(types.float64, 1, True),  # instances
    _array(types.bool_, 1, False),  # exact
)


@njit([_ACCESS_SIGNATURE], cache=True, error_model="numpy")
def word_accesses(data, count, moving, small, bw_min, ratio, instances, exact):
    """Word accesses ``(R, n)`` of ``R`` flows (rows) for ``n`` candidates
    (``BatchCostModel._accesses``, docs/models/cost-model.md#data-movement): per row ``r`` and
    candidate ``i``, ``trunc(ceil(data / bw_min) * ratio * count * instances)`` where data moves
    (``moving``), else 0; ``exact[i]`` cleared where a row's bits leave the exact range (not
    ``small``) or its figure does (NaN included)."""
    R, n = data.shape
    value = np.empty((R, n))
    for r in range(R):
        for i in range(n):
            v = np.ceil(data[r, i] / bw_min[r]) * ratio[r] * count[r, i] * instances[r]
            v = np.trunc(v) if moving[r, i] else 0.0
            value[r, i] = v
            if not (small[r, i] and v < EXACT):
                exact[i] = False
    return value


#: the one signature of :func:`access_energies`: the word accesses' rows and where each
#: (operand, level, direction) reads them, the levels' read and write costs
_ENERGY_SIGNATURE = (
    _array(types.float64, 2, True),  # value
    _array(types.int64, 2, True),  # slots
    _array(types.float64, 1, True),  # r_cost
    _array(types.float64, 1, True),  # w_cost
)


@njit([_ENERGY_SIGNATURE], cache=True, error_model="numpy")
def access_energies(value, slots, r_cost, w_cost):
    """The memories' energy of ``n`` candidates (``model.access_energy`` before the MAC energy,
    docs/models/cost-model.md#energy): per (operand, level) ``l`` in order, ``(th x r + tl x r) +
    (fh x w + fl x w)`` added to the running sum, where ``slots[l]`` gives the rows of ``value``
    holding its th, tl, fh and fl accesses (-1: no accesses, 0.0)."""
    L = slots.shape[0]
    n = value.shape[1]
    energy = np.zeros(n)
    for i in range(n):
        total = 0.0
        for level in range(L):
            th, tl, fh, fl = slots[level, 0], slots[level, 1], slots[level, 2], slots[level, 3]
            r, w = r_cost[level], w_cost[level]
            e_th = (value[th, i] if th >= 0 else 0.0) * r
            e_tl = (value[tl, i] if tl >= 0 else 0.0) * r
            e_fh = (value[fh, i] if fh >= 0 else 0.0) * w
            e_fl = (value[fl, i] if fl >= 0 else 0.0) * w
            total = total + ((e_th + e_tl) + (e_fh + e_fl))
        energy[i] = total
    return energy
