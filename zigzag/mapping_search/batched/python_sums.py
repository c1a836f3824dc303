"""How the interpreter's built-in ``sum`` rounds, replayed on arrays: the scalar memory-level
assigner sums its operands' bits and costs with it, and the batched one
(:mod:`~zigzag.mapping_search.batched.memory_levels`, its compiled pass in
:mod:`~zigzag.mapping_search.batched.allocation_kernels`) must round as it does."""

from __future__ import annotations

import numpy as np

#: how this interpreter's built-in ``sum`` adds floats, which the scalar assigner uses for its
#: summed bits and costs: Python 3.12 and later compensate the rounding (Neumaier), older ones
#: add one by one; whether int items added to a float total are compensated too also varies
COMPENSATED_FLOATS = sum([0.1] * 10) == 1.0
COMPENSATED_INTS = sum([2.0**53, 1, -(2.0**53)]) == 1.0


def python_sum(items):
    """Vectorised built-in ``sum`` of ``(array, is_int)`` items, rounded as the interpreter
    rounds it for the same items as Python ints and floats (ints exact below 2**53)."""
    total, low, floating = 0.0, 0.0, False
    for value, is_int in items:
        if not floating:  # the int fast path, then the first float added to the int total
            total = total + value
            floating = not is_int
            continue
        if not (COMPENSATED_INTS if is_int else COMPENSATED_FLOATS):
            total = total + value
            continue
        new = total + value
        low = low + np.where(
            np.abs(total) >= np.abs(value), (total - new) + value, (value - new) + total
        )
        total = new
    if floating and COMPENSATED_FLOATS:
        total = np.where((low != 0) & np.isfinite(low), total + low, total)
    return total
