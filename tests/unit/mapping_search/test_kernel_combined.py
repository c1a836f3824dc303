"""The compiled choice of takes of several operands entering one memory
(``allocation_kernels.combined_takes``) against the numpy steps of
``BatchLevelAssigner._best_takes`` it replaced (kept here as the reference), on seeded random
bits and positions: top and free operands, int and float bits (the interpreter's compensated
sums), ties, NaN and infinite bits, blocks of combinations of every size; every take, alive flag
and size bound compared bit for bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from zigzag.mapping_search.batched import allocation_kernels
from zigzag.mapping_search.batched.python_sums import (
    COMPENSATED_FLOATS,
    COMPENSATED_INTS,
    python_sum,
)


def _numpy_best_takes(bits, pos, feasible, is_top, bits_int, prefix, total, size, alive, block):
    """The numpy steps ``_best_takes`` took (not an even mapping) before they were compiled:
    ``(takes, fitted, failed)``, the bounds as the blocks narrowed them (-inf, inf: none)."""
    J, _, n = bits.shape
    length = prefix.shape[1] - 1
    rows = np.arange(n)
    top_take = [np.maximum(f - 1, 0) for f in feasible]
    free = [j for j in range(J) if not is_top[j]]
    shape = [int(feasible[j][alive].max()) if alive.any() else 1 for j in free]
    free_bits, free_cost = {}, {}
    for j, takes in zip(free, shape):
        free_bits[j] = bits[j][:takes]
        above = prefix[rows, np.minimum(pos[j] + np.arange(takes)[:, None], length)]
        free_cost[j] = (total / above) * free_bits[j]
    top_bits = {j: bits[j][top_take[j], rows] for j in range(J) if is_top[j]}
    combos = np.array(list(itertools.product(*map(range, shape))), dtype=np.int64)
    combos = combos.reshape(len(combos), len(free))
    best_cost, has_best = np.zeros(n), np.zeros(n, dtype=bool)
    best_combo = np.zeros(n, dtype=np.int64)
    low, high = np.full(n, -np.inf), np.full(n, np.inf)
    entered = alive.copy()
    for first in range(0, len(combos), block):
        part = combos[first : first + block]
        bit_terms, cost_terms = [], []
        valid = np.ones((len(part), n), dtype=bool)
        for j in range(J):
            if is_top[j]:
                bit_terms.append((top_bits[j], bits_int[j]))
                continue
            k = part[:, free.index(j)]
            bit_terms.append((free_bits[j][k], bits_int[j]))
            cost_terms.append((free_cost[j][k], bits_int[j]))
            valid &= k[:, None] < feasible[j]
        summed = python_sum(bit_terms)
        cost = python_sum(cost_terms) if cost_terms else 0.0
        over = np.broadcast_to(summed > size, valid.shape)
        compared = valid & entered
        totals = np.broadcast_to(summed, valid.shape)
        low = np.maximum(low, np.where(compared & ~over, totals, -np.inf).max(axis=0))
        high = np.minimum(high, np.where(compared & over, totals, np.inf).min(axis=0))
        if first == 0:
            alive &= ~over[0]
        valid &= alive & ~over
        cost = np.broadcast_to(cost, valid.shape)
        lowest = np.where(valid, cost, np.inf).min(axis=0)
        last = len(part) - 1 - np.argmax((valid & (cost == lowest))[::-1], axis=0)
        better = valid.any(axis=0) & (~has_best | (lowest <= best_cost))
        best_cost = np.where(better, lowest, best_cost)
        best_combo = np.where(better, first + last, best_combo)
        has_best |= better
    takes = list(top_take)
    for f, j in enumerate(free):
        takes[j] = combos[best_combo, f]
    return np.array([np.where(has_best, take, 0) for take in takes]), low, high


@pytest.mark.parametrize("seed", range(24))
def test_compiled_combined_takes_are_the_numpy_ones(seed):
    rng = np.random.default_rng(seed)
    J, n, length = int(rng.integers(2, 4)), int(rng.integers(1, 120)), int(rng.integers(1, 9))
    steps = int(rng.integers(0, length + 1))
    is_top = rng.random(J) < 0.35
    bits_int = rng.random(J) < 0.5
    ints = rng.integers(0, 64, (J, steps + 1, n)).astype(np.float64) * 8
    bits = np.where(bits_int[:, None, None], ints, rng.random((J, steps + 1, n)) * 500)
    bits = np.sort(bits, axis=1)  # more loops, more bits (mostly)
    if seed % 3 == 0:  # NaN and infinite bits
        special = rng.choice([np.nan, np.inf], (J, steps + 1, n))
        bits = np.where(rng.random(bits.shape) < 0.05, special, bits)
    pos = rng.integers(0, length + 1, (J, n))
    feasible = rng.integers(0, steps + 2, (J, n))
    sizes = rng.choice([1.0, 2.0, 3.0, 5.0, 0.1], (n, length), p=[0.3, 0.3, 0.2, 0.1, 0.1])
    prefix = np.concatenate([np.ones((n, 1)), np.cumprod(sizes, axis=1)], axis=1)
    total = float(prefix[0, -1] * 3)
    size = float(rng.choice([200.0, 500.0, 1000.0, 1e9]))
    alive = rng.random(n) < 0.9
    block = int(rng.choice([1, 2, 5, 1 << 20]))
    with np.errstate(all="ignore"):
        want, want_low, want_high = _numpy_best_takes(
            bits, pos, feasible, is_top, bits_int, prefix, total, size, alive.copy(), block
        )
        want_alive = alive.copy()
        _numpy_best_takes(
            bits, pos, feasible, is_top, bits_int, prefix, total, size, want_alive, block
        )
    free = np.array([j for j in range(J) if not is_top[j]], dtype=np.int64)
    shape = np.array(
        [int(feasible[j][alive].max()) if alive.any() else 1 for j in free], dtype=np.int64
    )
    got_alive = alive.copy()
    takes, low, high = allocation_kernels.combined_takes(
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
        got_alive,
        alive.copy(),
        True,
        block,
        COMPENSATED_INTS,
        COMPENSATED_FLOATS,
    )
    assert takes.tobytes() == want.astype(np.int64).tobytes()
    assert np.array_equal(got_alive, want_alive)
    if np.prod(shape):  # the numpy steps narrowed the bounds only where they compared
        assert low.tobytes() == want_low.tobytes() and high.tobytes() == want_high.tobytes()
