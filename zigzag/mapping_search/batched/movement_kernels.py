"""Compiled loops of the batched data movement (numba; docs/performance.md#compiled-kernels):
every operand's temporal levels, the pr-decoupling walk and the word accesses, candidate by candidate, with the
IEEE operations of the numpy steps they replace in the same order (as
:mod:`~zigzag.mapping_search.batched.kernels`, whose helpers they share), so the same bits."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from zigzag.mapping_search.batched.kernel_cache import cached_njit
from zigzag.mapping_search.batched.candidates import EXACT
from zigzag.mapping_search.batched.kernels import _array, pr_extent


#: the one signature of :func:`temporal_levels`: the candidates' ir and r masks over their loop
#: positions, their memory cuts and their prefix products (a transposed view, so layout "A")
_TEMPORAL_SIGNATURE = (
    _array(types.bool_, 2, True),  # irm
    _array(types.bool_, 2, True),  # rm
    types.Array(types.int64, 2, "A", readonly=True),  # cuts
    types.Array(types.float64, 2, "A", readonly=True),  # prefix
)


@cached_njit([_TEMPORAL_SIGNATURE], error_model="numpy")
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
    extent = pr_extent(state[r, 0], state[r, 1], rel_figures, r)
    factor = extent / state[r, 2]
    state[r, 2] = extent
    return factor, extent


@cached_njit([_PR_SIGNATURE], error_model="numpy")
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
    """``(D, zero)``: the footprints ``D[k, i]`` (levels ``0..N``, level 0 the array's 1) of an
    operand with partially relevant dims for ``n`` candidates (``BatchCostModel._footprints``,
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
    D = np.empty((N + 1, n))
    zero = np.zeros(n, dtype=np.bool_)
    state = np.empty((R, 3))  # cumulative size of dim a, of dim b, previous extent
    for i in range(n):
        for r in range(R):
            state[r, 0] = 1.0
            state[r, 1] = 1.0
            state[r, 2] = 1.0
        cumulative = 1.0
        start = 0
        D[0, i] = 1.0
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
            D[k + 1, i] = np.rint(cumulative)
            start = end
    return D, zero


#: the one signature of :func:`word_accesses`: the packed flows (read-only or not), the rows'
#: flows and port figures, and the exactness flags it narrows in place
_ACCESS_SIGNATURE = (
    _array(types.float64, 3, True),  # flows
    _array(types.int64, 1, True),  # slot
    _array(types.float64, 1, True),  # bw_min
    _array(types.float64, 1, True),  # ratio
    _array(types.float64, 1, True),  # instances
    _array(types.bool_, 1, False),  # exact
)


@cached_njit([_ACCESS_SIGNATURE], error_model="numpy")
def word_accesses(flows, slot, bw_min, ratio, instances, exact):
    """Word accesses ``(R, n)`` of ``R`` flows (rows) for ``n`` candidates
    (``accesses.word_accesses``, docs/models/cost-model.md#data-movement): row ``r`` reads the
    flow ``flows[slot[r]]`` (figures as :func:`operand_flows` writes them); per candidate
    ``i``, with ``data = amount x precision``,
    ``trunc(ceil(data / bw_min) * ratio * count * instances)`` where data moves (amount and
    precision not 0), else 0; ``exact[i]`` cleared where a row's bits leave the exact range or
    its figure does (NaN included)."""
    R = slot.shape[0]
    n = flows.shape[2]
    value = np.empty((R, n))
    for r in range(R):
        flow = flows[slot[r]]
        for i in range(n):
            amount, precision = flow[2, i], flow[3, i]
            data = amount * precision
            v = np.ceil(data / bw_min[r]) * ratio[r] * flow[1, i] * instances[r]
            v = np.trunc(v) if amount != 0 and precision != 0 else 0.0
            value[r, i] = v
            if not (data < EXACT and v < EXACT):
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


@cached_njit([_ENERGY_SIGNATURE], error_model="numpy")
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


@njit(inline="always")
def _put(flows, slot, i, kept, period, count, amount, precision, bw_aver, window):
    """Candidate ``i``'s figures of the flow in ``slot`` (none: -1), or 0 where not ``kept``
    (no partial sums move there)."""
    if slot < 0:
        return
    if kept:
        flows[slot, 0, i] = period
        flows[slot, 1, i] = count
        flows[slot, 2, i] = amount
        flows[slot, 3, i] = precision
        flows[slot, 4, i] = bw_aver
        flows[slot, 5, i] = window
    else:
        for f in range(6):
            flows[slot, f, i] = 0.0


#: floats below this are integers exactly, when integral
_INTEGERS = 2.0**53


@njit(inline="always")
def _floor_divide(a, b):
    """``np.floor_divide`` of two floats by numpy's own steps (its ``npy_floor_divide``: ``fmod``,
    the quotient of the difference, the sign correction, ``floor`` and the snap), so the same
    bits at infinities, NaNs and signed zeros too (numba's ``floor_divide`` differs there).
    Positive integers with ``a + b`` below 2**53 (the common case) take ``floor(a / b)``
    instead: those steps give the exact quotient's floor for them, and so does it (``a / b``
    cannot round up to the next integer, which is at least ``1 / b`` away, more than half its
    spacing); ``fmod`` is slow when ``a`` is much larger than ``b``."""
    if a > 0.0 and b >= 1.0 and a + b < _INTEGERS and a == np.floor(a) and b == np.floor(b):
        return np.floor(a / b)
    if b == 0.0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div = div - 1.0
    if div != 0.0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv = floordiv + 1.0
        return floordiv
    return np.copysign(0.0, a / b)


#: the one signature of :func:`operand_flows`
_FLOWS_SIGNATURE = (
    _array(types.float64, 2, True),  # D
    _array(types.bool_, 2, True),  # psum
    _array(types.float64, 2, True),  # top_r
    _array(types.float64, 2, True),  # top_ir
    _array(types.float64, 2, True),  # cabl
    _array(types.float64, 1, True),  # mac_st
    _array(types.float64, 1, True),  # boost
    types.float64,  # total
    types.boolean,  # is_output
    types.boolean,  # use_mac
    types.float64,  # p
    types.float64,  # p_of
    _array(types.float64, 2, False),  # bits
    _array(types.float64, 2, False),  # eff_bits
    _array(types.float64, 3, False),  # flows
    _array(types.int64, 2, True),  # slots
)


@cached_njit([_FLOWS_SIGNATURE], error_model="numpy")
def operand_flows(
    D,
    psum,
    top_r,
    top_ir,
    cabl,
    mac_st,
    boost,
    total,
    is_output,
    use_mac,
    p,
    p_of,
    bits,
    eff_bits,
    flows,
    slots,
):
    """One operand's ``N`` memory levels for ``n`` candidates (``BatchCostModel._movement``,
    docs/models/cost-model.md#data-held-per-level), written into ``bits`` and ``eff_bits``
    ``(N + 1, n)``: per level ``a`` (0 the array) the bits held ``D x precision`` and
    ``bits // top_r``; and ``flows``: per memory level ``k`` and direction ``d`` (fh, tl, fl,
    th) that may move data, the flow's period, count, amount, precision, average bandwidth and
    window in ``flows[slots[k, d], figure, i]`` (all 0 where the output's partial sums do not
    move; ``slots[k, d]`` -1, nothing written: no data ever moves there, as an input's fl and
    th and the top level's fh and th).

    ``D``: the footprints ``(N + 1, n)``; ``psum``: the output's partial-sum flags ``(N + 1, n)``
    (the precision ``p`` where set, else ``p_of``; an input's precision is ``p``);
    ``top_r``, ``top_ir``, ``cabl``: the levels' top-loop products and the products below their
    ends ``(N, n)``; the cycles below the array are ``mac_st`` (an input, ``use_mac``) or 1;
    ``boost``: the spatial boost of each level ``(N + 1,)``; ``total``: the temporal cycles."""
    N1, n = D.shape
    N = N1 - 1
    periods = np.empty(N1)  # per level: the cycles below it, their count in the total, the window
    counts = np.empty(N1)
    windows = np.empty(N1)
    precisions = np.full(N1, p)  # per level: the precision of its data
    for i in range(n):
        for a in range(N1):
            if is_output:
                precisions[a] = p if psum[a, i] else p_of
            value = D[a, i] * precisions[a]
            bits[a, i] = value
            eff_bits[a, i] = _floor_divide(value, top_r[a - 1, i] if a > 0 else 1.0)
            if a > 0:
                period, top = cabl[a - 1, i], top_ir[a - 1, i]
            else:
                period, top = (mac_st[i] if use_mac and not is_output else 1.0), 1.0
            periods[a] = period
            counts[a] = _floor_divide(total, period)
            windows[a] = np.trunc(period / top)
        for k in range(N):
            low = bits[k, i] / periods[k]
            high = low * boost[k]
            low_above = bits[k + 1, i] / periods[k + 1]
            p_low, p_high = precisions[k], precisions[k + 1]
            if is_output:
                amount = np.trunc(D[k, i] * boost[k])
                to_low, to_high = psum[k, i], psum[k + 1, i]
            else:
                amount = D[k, i] * boost[k]
                to_low, to_high = True, True
            bw_low, bw_high = np.trunc(high), np.trunc(low_above)
            # fh, tl, fl, th
            at = slots[k]
            _put(flows, at[1], i, to_low, periods[k], counts[k], amount, p_low, bw_low, windows[k])
            _put(flows, at[2], i, True, periods[k], counts[k], amount, p_low, bw_low, windows[k])
            above = (periods[k + 1], counts[k + 1], D[k + 1, i], p_high, bw_high, windows[k + 1])
            for direction, kept in ((0, to_high), (3, True)):
                _put(
                    flows,
                    at[direction],
                    i,
                    kept,
                    above[0],
                    above[1],
                    above[2],
                    above[3],
                    above[4],
                    above[5],
                )


#: the one signature of :func:`plain_footprints`
_PLAIN_SIGNATURE = (
    types.Array(types.int64, 2, "A", readonly=True),  # ends
    _array(types.bool_, 2, True),  # rm
    _array(types.float64, 2, True),  # lsize
    _array(types.int64, 1, True),  # spatial_ptr
    _array(types.float64, 1, True),  # spatial_factor
)


@cached_njit([_PLAIN_SIGNATURE], error_model="numpy")
def plain_footprints(ends, rm, lsize, spatial_ptr, spatial_factor):
    """The footprints ``D[a, i]`` (levels ``0 .. N``, level 0 the array's 1) of an operand without
    partially relevant dims for ``n`` candidates (``BatchCostModel._footprints``): per level the
    quotient of the prefix products of its relevant loop sizes (``rm``) at its end and start,
    times its relevant spatial factors (``spatial_factor[spatial_ptr[k]:spatial_ptr[k + 1]]``), the
    levels' running product rounded (``rint``)."""
    N, n = ends.shape
    length = rm.shape[1]
    D = np.empty((N + 1, n))
    prefix = np.empty(length + 1)
    for i in range(n):
        D[0, i] = 1.0
        prefix[0] = 1.0
        for p in range(length):
            prefix[p + 1] = prefix[p] * (lsize[i, p] if rm[i, p] else 1.0)
        cumulative = 1.0
        start = 0
        for k in range(N):
            end = ends[k, i]
            per_level = prefix[end] / prefix[start]
            for j in range(spatial_ptr[k], spatial_ptr[k + 1]):
                per_level = per_level * spatial_factor[j]
            cumulative = per_level if k == 0 else cumulative * per_level
            D[k + 1, i] = np.rint(cumulative)
            start = end
    return D


#: the one signature of :func:`psum_flags`
_PSUM_SIGNATURE = (
    types.Array(types.int64, 2, "A", readonly=True),  # ends
    _array(types.bool_, 2, True),  # irm
    _array(types.float64, 2, True),  # lsize
    _array(types.bool_, 1, True),  # spatial_ir
)


@cached_njit([_PSUM_SIGNATURE], error_model="numpy")
def psum_flags(ends, irm, lsize, spatial_ir):
    """The output's partial-sum flags ``(N + 1, n)`` (``BatchCostModel._movement``): level ``k`` holds
    partial sums where a level above it (``k + 1 .. N``, ``N`` the last memory level) has an
    irrelevant loop of size above 1 or an irrelevant spatial unrolling above 1
    (``spatial_ir[a]``); the top level's flags are False."""
    N, n = ends.shape
    psum = np.zeros((N + 1, n), dtype=np.bool_)
    for i in range(n):
        flag = False
        for k in range(N - 1, -1, -1):
            start = ends[k - 1, i] if k > 0 else 0
            above = spatial_ir[k + 1]
            for p in range(start, ends[k, i]):
                above = above or (irm[i, p] and lsize[i, p] > 1.0)
            flag = flag or above
            psum[k, i] = flag
    return psum
