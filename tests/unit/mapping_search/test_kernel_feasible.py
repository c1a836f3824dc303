"""The compiled feasible takes (``allocation_kernels.feasible_takes``) against the numpy steps of
``BatchLevelAssigner._feasible_slices`` they replaced where every running size is an exact
integer (kept here as the reference), on seeded random candidates: relevant and pr dims, dims
without loops, spatial parts, memory sizes around the footprints, candidates already past
their loops; every figure, count, bound and ``alive`` flag compared bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from zigzag.mapping_search.batched import allocation_kernels


def _numpy_feasible(
    temporal, dim_number, part, relevant, pr_dims, pr_figures, pos, precision, size, steps, alive
):
    """The numpy steps the integral path of ``_feasible_slices`` took before it was compiled."""
    length = temporal.shape[0] - 1
    n = len(pos)
    rows = np.arange(n)
    sizes = []
    for number, p in zip(dim_number, part):
        if number < 0:
            sizes.append(np.full(temporal[:, 0].shape, float(p)))
        else:
            sizes.append(temporal[:, number] * p if p != 1 else temporal[:, number])
    count = None
    for j in relevant:
        count = sizes[j] if count is None else count * sizes[j]
    for (ja, jb), (coef_a, coef_b, pr_size) in zip(pr_dims, pr_figures):
        a, b = np.trunc(sizes[ja]), np.trunc(sizes[jb])
        unique = a * b - np.maximum(0.0, b - coef_a) * (a - coef_b)
        extent = np.minimum(pr_size, unique)
        count = extent if count is None else count * extent
    if count is not None:
        count = count[np.minimum(pos + np.arange(steps + 1)[:, None], length), rows]
    bits = np.broadcast_to((count if count is not None else 1.0) * precision, (steps + 1, n))
    valid = pos + np.arange(steps)[:, None] < length
    fits = bits <= size
    alive = alive & fits[0]
    chain = np.empty((steps + 1, n), dtype=bool)
    chain[0] = fits[0]
    np.logical_and(valid, fits[1:], out=chain[1:])
    feasible = np.logical_and.accumulate(chain, axis=0).sum(axis=0, dtype=np.int64)
    takes = np.arange(steps + 1)[:, None]
    stop = np.minimum(feasible, steps)
    ended = (feasible <= steps) & (
        (feasible == 0) | valid[np.clip(feasible - 1, 0, steps - 1), rows]
        if steps
        else feasible == 0
    )
    fitted = np.where(takes < feasible, bits, -np.inf).max(axis=0)
    failed = np.where(ended, bits[stop, rows], np.inf)
    return bits, feasible, fitted, failed, alive


@pytest.mark.parametrize("seed", range(30))
def test_feasible_takes_match_numpy(seed):
    rng = np.random.default_rng(seed)
    n, length, codes = int(rng.integers(1, 200)), int(rng.integers(1, 12)), int(rng.integers(1, 5))
    # per-dim prefix products of drawn orderings: each position multiplies one dim by a factor
    grows = np.ones((length, codes, n))
    dim_at = rng.integers(0, codes, (length, n))
    factor = rng.choice([2.0, 3.0, 4.0, 7.0], (length, n))
    for p in range(length):
        grows[p, dim_at[p], np.arange(n)] = factor[p]
    temporal = np.ones((length + 1, codes, n))
    for p in range(length):
        temporal[p + 1] = temporal[p] * grows[p]
    tracked = int(rng.integers(1, 5))
    dim_number = rng.integers(-1, codes, tracked).astype(np.int64)
    part = rng.choice([1.0, 2.0, 3.0, 16.0], tracked)
    relevant = rng.permutation(tracked)[: int(rng.integers(0, tracked + 1))].astype(np.int64)
    relations = int(rng.integers(0, 3)) if tracked > 1 else 0
    pr_dims = np.array(
        [rng.choice(tracked, 2, replace=False) for _ in range(relations)], dtype=np.int64
    ).reshape(-1, 2)
    pr_figures = np.array(
        [[rng.integers(1, 3), rng.integers(1, 3), rng.integers(3, 60)] for _ in range(relations)],
        dtype=np.float64,
    ).reshape(-1, 3)
    pos = rng.integers(0, length + 1, n).astype(np.int64)
    alive = rng.random(n) < 0.9
    steps = length - int(pos[alive].min()) if alive.any() else 0
    precision = rng.choice([8.0, 16.0, 24.0], n)
    size = float(rng.choice([8.0, 64.0, 512.0, 4096.0, 2.0**20]))
    given = (temporal, dim_number, part, relevant, pr_dims, pr_figures, pos, precision, size, steps)
    want = _numpy_feasible(*given, alive)
    got_alive = alive.copy()
    got = allocation_kernels.feasible_takes(*given, got_alive)
    for a, b in zip(got, want[:4]):
        assert a.shape == b.shape and a.tobytes() == b.tobytes()
    assert np.array_equal(got_alive, want[4])
