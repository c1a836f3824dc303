"""Compiled loop of the batched memory allocation (numba; docs/performance.md#compiled-kernels):
the bits each candidate's operand needs for every take of loops into one memory level, and how
many takes fit, with the IEEE operations of the numpy steps it replaces in the same order (as
:mod:`~zigzag.mapping_search.batched.kernels`, whose helpers it shares), so the same bits."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from zigzag.mapping_search.batched.kernel_cache import cached_njit
from zigzag.mapping_search.batched.kernels import _array, _maximum, _minimum, pr_extent

#: the one signature of :func:`feasible_takes`: the loops' per-dim prefix products, the operand's
#: footprint tables, the candidates' positions and precisions, and ``alive`` (narrowed in place)
_FEASIBLE_SIGNATURE = (
    _array(types.float64, 3, True),  # temporal
    _array(types.int64, 1, True),  # dim_number
    _array(types.float64, 1, True),  # part
    _array(types.int64, 1, True),  # relevant
    _array(types.int64, 2, True),  # pr_dims
    _array(types.float64, 2, True),  # pr_figures
    _array(types.int64, 1, True),  # pos
    _array(types.float64, 1, True),  # precision
    types.float64,  # size
    types.int64,  # steps
    _array(types.bool_, 1, False),  # alive
)


@cached_njit([_FEASIBLE_SIGNATURE], error_model="numpy")
def feasible_takes(
    temporal, dim_number, part, relevant, pr_dims, pr_figures, pos, precision, size, steps, alive
):
    """``(bits, feasible, fitted, failed)`` of one operand entering a memory of ``size`` bits
    (``BatchLevelAssigner._feasible_slices`` where every running size is an exact integer),
    for ``n`` candidates: ``bits[t, i]`` the footprint after taking the next ``t`` loops
    (``0 .. steps``) times the precision; ``feasible[i]`` how many takes fit, counting from the
    first, while there is a loop to take; ``fitted[i]`` the largest bits of those takes
    (``-inf``: none) and ``failed[i]`` the bits of the take that ended the run by not fitting
    (``inf``: none); ``alive[i]`` cleared where not even take 0 fits.

    ``temporal[p, c, i]``: the product of the loop sizes of dim code ``c`` among the first ``p``
    loops. Per tracked dim ``j``: its code ``dim_number[j]`` (-1: no loops) and spatial part
    ``part[j]``. The footprint multiplies the tracked dims listed in ``relevant``, then per pr
    relation ``r`` (tracked dims ``pr_dims[r]``, figures ``pr_figures[r]``: the reduced
    coefficients and the data dim's size) its extent."""
    length = temporal.shape[0] - 1
    n = pos.shape[0]
    J = dim_number.shape[0]
    R = pr_dims.shape[0]
    bits = np.empty((steps + 1, n))
    feasible = np.zeros(n, dtype=np.int64)
    fitted = np.empty(n)
    failed = np.empty(n)
    s = np.empty(J)
    for i in range(n):
        running = True
        fitted[i] = -np.inf
        for t in range(steps + 1):
            p = min(pos[i] + t, length)
            for j in range(J):
                if dim_number[j] < 0:
                    s[j] = part[j]
                elif part[j] != 1.0:
                    s[j] = temporal[p, dim_number[j], i] * part[j]
                else:
                    s[j] = temporal[p, dim_number[j], i]
            count = 1.0
            first = True
            for j in relevant:
                count = s[j] if first else count * s[j]
                first = False
            for r in range(R):
                extent = pr_extent(s[pr_dims[r, 0]], s[pr_dims[r, 1]], pr_figures, r)
                count = extent if first else count * extent
                first = False
            value = count * precision[i]
            bits[t, i] = value
            fits = value <= size
            if t == 0:
                alive[i] = alive[i] and fits
            elif pos[i] + t - 1 >= length:  # no loop left to take
                fits = False
            if running and fits:
                feasible[i] = t + 1
                fitted[i] = _maximum(fitted[i], value)
            else:
                running = False
        f = feasible[i]
        if steps == 0:
            ended = f == 0
        else:
            ended = f <= steps and (f == 0 or pos[i] + min(max(f - 1, 0), steps - 1) < length)
        failed[i] = bits[min(f, steps), i] if ended else np.inf
    return bits, feasible, fitted, failed


#: the one signature of :func:`cheapest_takes`: the loops' prefix products (a transposed view)
#: and the bits per take (a broadcast view where every take needs the same), so layout "A"
_CHEAPEST_SIGNATURE = (
    types.Array(types.float64, 2, "A", readonly=True),  # prefix
    types.Array(types.float64, 2, "A", readonly=True),  # bits
    _array(types.int64, 1, True),  # pos
    _array(types.int64, 1, True),  # feasible
    _array(types.bool_, 1, True),  # alive
    types.float64,  # total
    types.int64,  # takes
)


@cached_njit([_CHEAPEST_SIGNATURE], error_model="numpy")
def cheapest_takes(prefix, bits, pos, feasible, alive, total, takes):
    """The take of each of ``n`` candidates into a memory holding one operand that is not its top
    (``BatchLevelAssigner._single_take``): among the feasible takes ``t < takes`` of a live
    candidate, the last of the lowest costs ``(total / prefix[i, pos + t]) * bits[t, i]`` (a NaN
    cost makes the lowest NaN, then the last take); 0 where none is feasible."""
    length = prefix.shape[1] - 1
    n = pos.shape[0]
    out = np.zeros(n, dtype=np.int64)
    costs = np.empty(max(takes, 0))
    for i in range(n):
        if not alive[i]:
            continue
        last_take = min(takes, feasible[i])  # the takes below it are the valid ones
        if last_take <= 0:
            continue
        lowest = np.inf
        for t in range(last_take):
            costs[t] = (total / prefix[i, min(pos[i] + t, length)]) * bits[t, i]
            lowest = _minimum(lowest, costs[t])
        out[i] = takes - 1
        for t in range(last_take - 1, -1, -1):
            if costs[t] == lowest:
                out[i] = t
                break
    return out


@njit(inline="always")
def _add(total, low, floating, value, is_int, compensated_ints, compensated_floats):
    """One item of ``python_sums.python_sum`` for one candidate: ``(total, low, floating)``
    after adding ``value`` (an int of the scalar assigner where ``is_int``)."""
    if not floating:
        return total + value, low, not is_int
    if not (compensated_ints if is_int else compensated_floats):
        return total + value, low, floating
    new = total + value
    if abs(total) >= abs(value):
        low = low + ((total - new) + value)
    else:
        low = low + ((value - new) + total)
    return new, low, floating


@njit(inline="always")
def _summed(total, low, floating, compensated_floats):
    """The end of ``python_sums.python_sum``: the compensation added where there is one."""
    if floating and compensated_floats and low != 0.0 and np.isfinite(low):
        return total + low
    return total


#: the one signature of :func:`combined_takes`
_COMBINED_SIGNATURE = (
    _array(types.float64, 3, True),  # bits
    _array(types.int64, 2, True),  # pos
    _array(types.int64, 2, True),  # feasible
    _array(types.bool_, 1, True),  # is_top
    _array(types.bool_, 1, True),  # bits_int
    _array(types.int64, 1, True),  # free
    _array(types.int64, 1, True),  # shape
    types.Array(types.float64, 2, "A", readonly=True),  # prefix
    types.float64,  # total
    types.float64,  # size
    _array(types.bool_, 1, False),  # alive
    _array(types.bool_, 1, True),  # entered
    types.boolean,  # bound
    types.int64,  # block
    types.boolean,  # compensated_ints
    types.boolean,  # compensated_floats
)


@cached_njit([_COMBINED_SIGNATURE], error_model="numpy")
def combined_takes(
    bits,
    pos,
    feasible,
    is_top,
    bits_int,
    free,
    shape,
    prefix,
    total,
    size,
    alive,
    entered,
    bound,
    block,
    compensated_ints,
    compensated_floats,
):
    """``(takes, fitted, failed)`` of ``J`` operands entering one memory together, for ``n``
    candidates (``BatchLevelAssigner._best_takes``, not an even mapping): a top operand takes
    all its feasible takes; the free ones (``free``, each with ``shape[f]`` takes to try) take
    the combination of lowest summed cost among those that are feasible and fit together (the
    last of equal costs; combinations in ``itertools.product`` order, compared in blocks of
    ``block`` as the numpy steps did, a NaN cost winning its block), 0 where none; ``alive[i]``
    cleared where the combination taking least does not fit. Bits and costs are summed as the
    interpreter's ``sum`` (``python_sums.python_sum``). With ``bound``: ``fitted[i]`` the
    largest summed bits compared that fit, ``failed[i]`` the smallest that did not (of the
    feasible combinations, where ``entered``).

    ``bits[j, t, i]``: operand ``j``'s bits after ``t`` takes; ``pos[j]``, ``feasible[j]``: its
    position and number of feasible takes; ``bits_int[j]``: whether the scalar assigner's bits
    are ints; a take's cost is ``(total / prefix[i, pos + t]) * bits``."""
    J, _, n = bits.shape
    F = free.shape[0]
    length = prefix.shape[1] - 1
    count = 1
    for f in range(F):
        count *= shape[f]
    takes = np.zeros((J, n), dtype=np.int64)
    fitted = np.full(n, -np.inf)
    failed = np.full(n, np.inf)
    digits = np.zeros(F, dtype=np.int64)
    widest = 0
    for f in range(F):
        widest = max(widest, shape[f])
    take_cost = np.empty((F, widest))  # a candidate's cost of each take of each free operand
    scratch = min(block, count)
    costs = np.empty(scratch)
    valids = np.empty(scratch, dtype=np.bool_)
    for i in range(n):
        has_best = False
        best_cost = 0.0
        best_combo = 0
        live = alive[i]
        for f in range(F):
            j = free[f]
            for t in range(shape[f]):
                take_cost[f, t] = (total / prefix[i, min(pos[j, i] + t, length)]) * bits[j, t, i]
        for start in range(0, count, block):
            stop = min(start + block, count)
            lowest = np.inf
            any_valid = False
            for c in range(start, stop):
                rest = c  # the combination's takes, the last free operand's fastest
                for f in range(F - 1, -1, -1):
                    digits[f] = rest % shape[f]
                    rest //= shape[f]
                valid = True
                for f in range(F):
                    if digits[f] >= feasible[free[f], i]:
                        valid = False
                b_total, b_low, b_float = 0.0, 0.0, False
                c_total, c_low, c_float = 0.0, 0.0, False
                f = 0
                for j in range(J):
                    if is_top[j]:
                        t = max(feasible[j, i] - 1, 0)
                    else:
                        t = digits[f]
                        f += 1
                    value = bits[j, t, i]
                    b_total, b_low, b_float = _add(
                        b_total,
                        b_low,
                        b_float,
                        value,
                        bits_int[j],
                        compensated_ints,
                        compensated_floats,
                    )
                    if not is_top[j]:
                        c_total, c_low, c_float = _add(
                            c_total,
                            c_low,
                            c_float,
                            take_cost[f - 1, t],
                            bits_int[j],
                            compensated_ints,
                            compensated_floats,
                        )
                summed = _summed(b_total, b_low, b_float, compensated_floats)
                cost = _summed(c_total, c_low, c_float, compensated_floats) if F else 0.0
                over = summed > size
                if bound and valid and entered[i]:
                    if over:
                        failed[i] = _minimum(failed[i], summed)
                    else:
                        fitted[i] = _maximum(fitted[i], summed)
                if c == 0:
                    live = live and not over
                valid = valid and live and not over
                costs[c - start] = cost
                valids[c - start] = valid
                if valid:
                    any_valid = True
                    lowest = _minimum(lowest, cost)
            last = stop - start - 1
            for c in range(stop - start - 1, -1, -1):
                if valids[c] and costs[c] == lowest:
                    last = c
                    break
            if any_valid and (not has_best or lowest <= best_cost):
                best_cost = lowest
                best_combo = start + last
                has_best = True
        alive[i] = live
        if not has_best:
            continue
        rest = best_combo
        for f in range(F - 1, -1, -1):
            digits[f] = rest % shape[f]
            rest //= shape[f]
        f = 0
        for j in range(J):
            if is_top[j]:
                takes[j, i] = max(feasible[j, i] - 1, 0)
            else:
                takes[j, i] = digits[f]
                f += 1
    return takes, fitted, failed
