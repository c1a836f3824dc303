"""Compiled loop of the batched memory allocation (numba; docs/performance.md#compiled-kernels):
the bits each candidate's operand needs for every take of loops into one memory level, and how
many takes fit, with the IEEE operations of the numpy steps it replaces in the same order (as
:mod:`~zigzag.mapping_search.batched.kernels`, whose helpers it shares), so the same bits."""

from __future__ import annotations

import numpy as np
from numba import njit, types

from zigzag.mapping_search.batched.kernels import _array, _maximum, _minimum

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


@njit([_FEASIBLE_SIGNATURE], cache=True, error_model="numpy")
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
                a = np.trunc(s[pr_dims[r, 0]])
                b = np.trunc(s[pr_dims[r, 1]])
                unique = a * b - _maximum(0.0, b - pr_figures[r, 0]) * (a - pr_figures[r, 1])
                extent = _minimum(pr_figures[r, 2], unique)
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


@njit([_CHEAPEST_SIGNATURE], cache=True, error_model="numpy")
def cheapest_takes(prefix, bits, pos, feasible, alive, total, takes):
    """The take of each of ``n`` candidates into a memory holding one operand that is not its top
    (``BatchLevelAssigner._single_take``): among the feasible takes ``t < takes`` of a live
    candidate, the last of the lowest costs ``(total / prefix[i, pos + t]) * bits[t, i]`` (a NaN
    cost makes the lowest NaN, then the last take); 0 where none is feasible."""
    length = prefix.shape[1] - 1
    n = pos.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if not alive[i]:
            continue
        last_take = min(takes, feasible[i])  # the takes below it are the valid ones
        if last_take <= 0:
            continue
        lowest = np.inf
        for t in range(last_take):
            cost = (total / prefix[i, min(pos[i] + t, length)]) * bits[t, i]
            lowest = _minimum(lowest, cost)
        out[i] = takes - 1
        for t in range(last_take - 1, -1, -1):
            cost = (total / prefix[i, min(pos[i] + t, length)]) * bits[t, i]
            if cost == lowest:
                out[i] = t
                break
    return out
