"""Compiled loops of the batched evaluator (numba): one pass over the candidates where numpy
would make a call per step on arrays of a few hundred (docs/performance.md#compiled-kernels).

Each candidate goes through the same IEEE operations, in the same order, as the numpy
expressions they replace went through element by element (``+ - * /``, ``ceil``, ``trunc``,
``rint``, comparisons; no fast-math, no transcendental function), so every figure has the same
bits.
``error_model="numpy"``: a division by zero gives ``inf`` or ``NaN`` as numpy's does.
Compiled once and kept in numba's cache, in a folder per version of the kernels' sources
(:mod:`zigzag.mapping_search.batched.kernel_cache`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, objmode, types

from zigzag.mapping_search.batched.kernel_cache import cached_njit
from zigzag.cost.model.latency import PortActivity, marked_slots
from zigzag.mapping_search.batched.candidates import EXACT


@njit(inline="always")
def _maximum(a, b):
    """``np.maximum`` of two floats: a NaN wins, and of equal values (``0.0``, ``-0.0``) ``b``."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a > b else b


@njit(inline="always")
def _minimum(a, b):
    """``np.minimum`` of two floats (as :func:`_maximum`)."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a < b else b


@njit(inline="always")
def pr_extent(size_a, size_b, figures, r):
    """The extent of pr relation ``r``'s data dim when its two dims have the cumulative sizes
    ``size_a`` and ``size_b`` (``DimRelation.unique_count`` of their truncations, at most the
    data dim's size): ``figures[r]`` the reduced coefficients and that size."""
    a, b = np.trunc(size_a), np.trunc(size_b)
    unique = a * b - _maximum(0.0, b - figures[r, 0]) * (a - figures[r, 1])
    return _minimum(figures[r, 2], unique)


@cached_njit(error_model="numpy")
def reduce_balanced(current, minima, m, surplus, order):
    """``zigzag.cost.model.reduce_balanced`` on the first ``m`` entries of ``current`` (in place):
    the largest first (stable on ties, a NaN last), each step by the float operations of the
    scalar model; a surplus that is not above 0 (or NaN) leaves them as they are. ``order``: room
    for ``m`` indices."""
    if not surplus > 0:
        return
    for i in range(m):  # insertion sort of -current, stable, NaN last (numpy's argsort)
        key = -current[i]
        j = i
        while j > 0:
            other = -current[order[j - 1]]
            if key < other or (other != other and key == key):
                order[j] = order[j - 1]
                j -= 1
            else:
                break
        order[j] = i
    for i in range(m):
        j = order[i]
        step = current[j] - minima[j]
        capacity = step * (i + 1)
        stop = surplus < capacity
        if stop:
            step = surplus / (i + 1)
        for prev in range(i + 1):
            current[order[prev]] = current[order[prev]] - step
        if stop:
            return
        surplus = surplus - capacity


def timeline_union(periods, allowed, horizon) -> int:
    """Slots of ``[0, horizon)`` marked by windows of ``allowed`` slots every ``periods`` (the
    scalar model's ``marked_slots``, kept per pattern): the rare case of a port whose activities'
    windows all fall short of their periods."""
    key = (tuple(zip(periods.tolist(), allowed.tolist())), int(horizon))
    value = _SLOTS.get(key)
    if value is None:
        acts = [PortActivity("", 0, "", 0, a, p, 0) for p, a in key[0]]
        value = marked_slots(acts, key[1])
        if len(_SLOTS) > 100_000:
            _SLOTS.clear()
        _SLOTS[key] = value
    return value


_SLOTS: dict = {}


@njit(inline="always")
def _same_row(figures, k):
    """Whether row ``k`` of ``figures`` equals row ``k - 1`` (then so do the figures made of it)."""
    for j in range(figures.shape[1]):
        if not figures[k, j] == figures[k - 1, j]:
            return False
    return True


@njit(inline="always")
def _same_flags(flags, a, b):
    """Whether rows ``a`` and ``b`` of ``flags`` are equal."""
    for j in range(flags.shape[1]):
        if flags[a, j] != flags[b, j]:
            return False
    return True


@cached_njit(error_model="numpy")
def _allowed(
    i,
    k,
    eff_bits,
    level_row,
    sizes,
    group_ptr,
    group_idx,
    share_ptr,
    share_idx,
    duty_buf,
    ceil_period,
    ceil_window,
    eff,
    eff_sh,
    db,
    allowed,
):
    """Candidate ``i``'s double buffering under set ``k``'s sizes (the effective utilisations of
    every (operand, level), summed over sharing groups, rule 2 adding to the linked levels as it
    goes) and the allowed cycles of every duty, into ``allowed``."""
    L = level_row.shape[0]
    for l in range(L):
        eff[l] = eff_bits[level_row[l], i] / sizes[k, l]
        eff_sh[l] = eff[l]
    for g in range(group_ptr.shape[0] - 1):
        e = eff[group_idx[group_ptr[g]]]
        for j in range(group_ptr[g] + 1, group_ptr[g + 1]):
            e = e + eff[group_idx[j]]
        for j in range(group_ptr[g], group_ptr[g + 1]):
            eff_sh[group_idx[j]] = e
    for l in range(L):
        rule1 = eff_sh[l] <= 0.5
        rule2 = (not rule1) and eff[l] <= 1 - eff_sh[l]
        db[l] = rule1 or rule2
        if rule2:
            for j in range(share_ptr[l], share_ptr[l + 1]):
                eff_sh[share_idx[j]] = eff_sh[share_idx[j]] + eff[l]
    for d in range(duty_buf.shape[0]):
        buffered = duty_buf[d] >= 0 and db[duty_buf[d]]
        allowed[d] = ceil_period[d] if buffered else ceil_window[d]


def _array(dtype, ndim: int, readonly: bool):
    return types.Array(dtype, ndim, "C", readonly=readonly)


#: the one signature :func:`latencies` is called with (:mod:`~zigzag.mapping_search.batched.latency`
#: hands it read-only views of the candidates' packed movement, fresh per-set arrays and the
#: read-only rows and tables):
#: given here, it is compiled (or read from the cache) when this module is imported, so the
#: workflow's job server does it once for every job it forks
_LATENCIES_SIGNATURE = (
    _array(types.float64, 3, True),  # flows
    _array(types.float64, 2, True),  # bits
    _array(types.float64, 2, True),  # eff_bits
    _array(types.float64, 3, True),  # frac
    types.Tuple((_array(types.int64, 1, True),) * 3),  # rows
    _array(types.float64, 2, False),  # sizes
    _array(types.float64, 2, False),  # duty_bw
    _array(types.float64, 2, False),  # port_bw
    _array(types.int64, 1, False),  # bw_first
    types.Tuple(
        (*[_array(types.int64, 1, True)] * 6, _array(types.bool_, 1, True))
        + (_array(types.int64, 1, True),) * 10
    ),
    types.Tuple((types.float64, types.float64, types.float64, types.boolean)),
)


@cached_njit([_LATENCIES_SIGNATURE], error_model="numpy")
def latencies(
    flows, bits, eff_bits, frac, rows, sizes, duty_bw, port_bw, bw_first, tables, scalars
):
    """``(latency_total2, exact)`` of ``n`` candidates under each of ``K`` memory sets, arrays
    ``(K, n)`` (docs/models/cost-model.md#latency), as ``zigzag.cost.model`` computes them for one.

    The candidates' packed movement (``model.Packed``): ``flows`` the integer variant's flows,
    ``bits`` its bits, ``eff_bits`` the fractional variant's ``bits // top_r``, ``frac`` its flows
    (read by the bandwidth-bound model only). ``rows`` (``BatchCostModel.latency_rows``): per
    port duty ``d`` (``BatchCostModel.duties``) the slot of its flow and the row of its operand's
    innermost footprint, per (operand, memory level) ``l`` the row of its bits. Per set ``k``:
    ``sizes[k, l]``, ``duty_bw[k, d]`` (0 in every set where one set has none: no transfer
    cycles then), ``port_bw[k, p]`` (0: none), ``bw_first[k]`` the first set whose ``duty_bw``
    and ``port_bw`` rows have the same bits (a set with the bandwidths and the double buffering
    of an earlier one has its figures). ``tables``:
    :func:`zigzag.mapping_search.batched.latency.latency_tables`; ``scalars``: the cycles per
    operation, the ideal cycles (total cycles x CPO), their ceiling, and whether the
    bandwidth-bound floor applies."""
    (
        duty_buf,
        duty_slot,
        port_duty_ptr,
        port_duty_idx,
        port_load_ptr,
        port_load_idx,
        port_shared,
        group_ptr,
        group_idx,
        share_ptr,
        share_idx,
        on_ptr,
        on_a,
        on_b,
        off_a,
        off_b,
        counts,
    ) = tables
    flow_slot, bits_row, level_row = rows
    cpo, lat_base, tcc_base, bound_model = scalars
    n_slots, n_inputs = counts[0], counts[1]
    K = sizes.shape[0]
    D = flow_slot.shape[0]
    n = flows.shape[2]
    L = level_row.shape[0]
    P = port_bw.shape[1]
    latency = np.zeros((K, n))
    exact = np.ones((K, n), dtype=np.bool_)
    code = np.empty(D, dtype=np.int64)
    count = np.empty(D)
    real_all = np.empty((K, D))
    db_all = np.empty((K, L), dtype=np.bool_)
    allowed = np.empty(D)
    eff = np.empty(L)
    eff_sh = np.empty(L)
    db = np.empty(L, dtype=np.bool_)
    acts = np.empty(port_duty_idx.shape[0], dtype=np.int64)
    act_ptr = np.zeros(P + 1, dtype=np.int64)
    once = np.empty(port_load_idx.shape[0], dtype=np.int64)
    once_ptr = np.zeros(P + 1, dtype=np.int64)
    repeated = np.empty(port_load_idx.shape[0], dtype=np.int64)
    rep_ptr = np.zeros(P + 1, dtype=np.int64)
    bw_req = np.empty(P)
    current = np.empty(port_load_idx.shape[0])
    minima = np.empty(port_load_idx.shape[0])
    order = np.empty(port_load_idx.shape[0], dtype=np.int64)
    periods = np.empty(port_duty_idx.shape[0], dtype=np.int64)
    windows_of = np.empty(port_duty_idx.shape[0], dtype=np.int64)
    slot_cycles = np.empty(n_slots + 1)
    slot_shared = np.empty(n_slots + 1, dtype=np.bool_)
    slot_set = np.empty(n_slots + 1, dtype=np.bool_)
    indiv = np.empty(max(n_inputs, 1))
    half = np.empty(max(n_inputs, 1))
    shared = np.empty(max(n_inputs, 1))
    data = np.empty(D)
    ceil_period = np.empty(D)
    ceil_window = np.empty(D)
    ceil_bw_aver = np.empty(D)
    for i in range(n):
        # what reads no memory figure: per duty, the structure of the candidate's transfers
        # (0 = none, 1 = once, 2 = repeated), the bits moved, the periods and windows in cycles
        data_ok = True
        for d in range(D):  # the flow's figures: model.FLOW_FIGURES
            f = flow_slot[d]
            count[d] = flows[f, 1, i]
            code[d] = int(count[d]) if count[d] < 2.0 else 2
            data[d] = flows[f, 2, i] * flows[f, 3, i]
            if duty_bw[0, d] != 0:  # 0 for all sets or for none
                data_ok = data_ok and data[d] < EXACT
            ceil_period[d] = np.ceil(flows[f, 0, i] * cpo)
            ceil_window[d] = np.ceil(flows[f, 5, i] * cpo)
            ceil_bw_aver[d] = np.ceil(flows[f, 4, i] / cpo)
        # per port: the duties moving data (its activities), the loading duties moving data
        # once and those moving it repeatedly (with the bandwidth these take)
        for p in range(P):
            at = act_ptr[p]
            for j in range(port_duty_ptr[p], port_duty_ptr[p + 1]):
                if code[port_duty_idx[j]] != 0:
                    acts[at] = port_duty_idx[j]
                    at += 1
            act_ptr[p + 1] = at
            at_once, at_rep = once_ptr[p], rep_ptr[p]
            bw_req[p] = 0.0
            for j in range(port_load_ptr[p], port_load_ptr[p + 1]):
                d = port_load_idx[j]
                if code[d] == 1:
                    once[at_once] = d
                    at_once += 1
                elif code[d] != 0:
                    repeated[at_rep] = d
                    at_rep += 1
                    bw_req[p] = bw_req[p] + ceil_bw_aver[d]
            once_ptr[p + 1], rep_ptr[p + 1] = at_once, at_rep
        for k in range(K):
            ok = data_ok
            # real transfer cycles, once per distinct set of bandwidths
            b = bw_first[k]
            if b == k:
                for d in range(D):
                    real_all[k, d] = np.ceil(data[d] / duty_bw[k, d]) if duty_bw[k, d] != 0 else 0.0
            real = real_all[b]
            # double buffering (effective utilisations, sharing groups), allowed cycles (as the
            # set before when the sizes are)
            if k == 0 or not _same_row(sizes, k):
                _allowed(
                    i,
                    k,
                    eff_bits,
                    level_row,
                    sizes,
                    group_ptr,
                    group_idx,
                    share_ptr,
                    share_idx,
                    duty_buf,
                    ceil_period,
                    ceil_window,
                    eff,
                    eff_sh,
                    db,
                    allowed,
                )
            # an earlier set with the same bandwidths and double buffering has the same figures
            for l in range(L):  # (a loop: a slice assignment compiles seconds longer)
                db_all[k, l] = db[l]
            same = -1
            for e in range(b, k):
                if bw_first[e] == b and _same_flags(db_all, e, k):
                    same = e
                    break
            if same >= 0:
                latency[k, i] = latency[same, i]
                exact[k, i] = exact[same, i]
                continue
            # stall or slack per port
            ss_comb = 0.0
            for p in range(P):
                na = act_ptr[p + 1] - act_ptr[p]
                if na == 0:
                    continue
                first = act_ptr[p]
                if na == 1:
                    d = acts[first]
                    ss = (real[d] - allowed[d]) * (count[d] - 1)
                else:
                    union = 0.0
                    found = False
                    for t in range(first, first + na):
                        d = acts[t]
                        if ceil_period[d] == allowed[d]:
                            union = ceil_period[d] * count[d]
                            found = True
                            break
                    if not found:
                        longest = first
                        for t in range(first, first + na):
                            periods[t - first] = int(ceil_period[acts[t]])
                            windows_of[t - first] = int(allowed[acts[t]])
                            if ceil_period[acts[t]] > ceil_period[acts[longest]]:
                                longest = t
                        pattern_p = periods[:na].copy()
                        pattern_a = windows_of[:na].copy()
                        horizon = int(ceil_period[acts[longest]])
                        with objmode(marked="int64"):
                            marked = timeline_union(pattern_p, pattern_a, horizon)
                        union = marked * count[acts[longest]]
                    positive = 0.0
                    negative = 0.0
                    windows = 0.0
                    for t in range(first, first + na):
                        d = acts[t]
                        s = (real[d] - allowed[d]) * (count[d] - 1)
                        positive = positive + (s if s > 0 else 0.0)
                        negative = negative + (0.0 if s > 0 else s)
                        windows = windows + allowed[d] * (count[d] - 1)
                    ss = positive + _maximum(0.0, negative + windows - union)
                    ok = ok and positive < EXACT and -negative < EXACT
                    ok = ok and windows < EXACT and union < EXACT
                ok = ok and abs(ss) < EXACT
                ss_comb = _maximum(ss_comb, ss)
            # per-port loading records: repeated transfers as they are, whole-tensor ones
            # shortened by the port's spare bandwidth during computation
            tcc = tcc_base + ss_comb
            for j in range(n_slots + 1):  # the last: an entry no duty records
                slot_set[j] = False
            for p in range(P):
                for j in range(rep_ptr[p], rep_ptr[p + 1]):
                    d = repeated[j]
                    slot_cycles[duty_slot[d]] = real[d]
                    slot_shared[duty_slot[d]] = port_shared[p]
                    slot_set[duty_slot[d]] = True
                no = once_ptr[p + 1] - once_ptr[p]
                if no:
                    bw_max = port_bw[k, p]
                    for t in range(no):
                        d = once[once_ptr[p] + t]
                        current[t] = real[d]
                        minima[t] = np.ceil(bits[bits_row[d], i] / bw_max)
                    surplus = ((bw_max - bw_req[p]) / bw_max) * tcc
                    reduce_balanced(current, minima, no, surplus, order)
                    for t in range(no):
                        d = once[once_ptr[p] + t]
                        slot_cycles[duty_slot[d]] = current[t]
                        slot_shared[duty_slot[d]] = port_shared[p]
                        slot_set[duty_slot[d]] = True
            # on-loading (the inputs' ports in parallel) and off-loading (in series)
            missing = False
            for q in range(n_inputs):
                indiv[q] = 0.0
                half[q] = 0.0
                shared[q] = 0.0
                for j in range(on_ptr[q], on_ptr[q + 1]):
                    a, b = on_a[j], on_b[j]
                    if not (slot_set[a] and slot_set[b]):
                        missing = True
                        break
                    longest_cycles = _maximum(slot_cycles[a], slot_cycles[b])
                    if not slot_shared[a] and not slot_shared[b]:
                        indiv[q] = indiv[q] + longest_cycles
                    elif slot_shared[a] and slot_shared[b]:
                        shared[q] = shared[q] + longest_cycles
                    else:
                        half[q] = longest_cycles
            offload = 0.0
            for j in range(off_a.shape[0]):
                a, b = off_a[j], off_b[j]
                if not (slot_set[a] and slot_set[b]):
                    missing = True
                    break
                offload = offload + _maximum(slot_cycles[a], slot_cycles[b])
            if missing:  # a loading table without an expected entry: left to the scalar model
                ok = False
                lat = 0.0
            else:
                if n_inputs == 0:
                    onload = 0.0
                elif n_inputs == 1:
                    onload = indiv[0]
                else:
                    p1 = shared[0] + _maximum(shared[1] + half[1] + indiv[1], half[0] + indiv[0])
                    p2 = shared[1] + _maximum(shared[0] + half[0] + indiv[0], half[1] + indiv[1])
                    onload = _minimum(p1, p2)
                lat = ((lat_base + ss_comb) + onload) + offload
                ok = ok and abs(lat) < EXACT
            if bound_model:  # the bandwidth-conserving floor (docs/models/cost-model.md#a-bandwidth-conserving-latency)
                bound = 0.0
                for p in range(P):
                    if port_bw[k, p] == 0:
                        continue
                    moved = 0.0
                    for j in range(port_duty_ptr[p], port_duty_ptr[p + 1]):
                        f = flow_slot[port_duty_idx[j]]
                        moved = moved + frac[f, 1, i] * frac[f, 2, i] * frac[f, 3, i]
                    ok = ok and moved < EXACT
                    bound = _maximum(bound, np.ceil(moved / port_bw[k, p]))
                if bound > lat:
                    lat = lat + (bound - lat)
            latency[k, i] = lat
            exact[k, i] = ok
    return latency, exact
