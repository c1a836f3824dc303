"""The compiled temporal levels (``movement_kernels.temporal_levels``) against the numpy expressions of
``BatchCostModel._temporal`` they replaced (kept here as the reference), on seeded random
candidates: masks, memory cuts, loop sizes whose products overflow to ``inf`` (then ``NaN``
quotients), every figure compared bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from zigzag.mapping_search.batched import movement_kernels
from zigzag.mapping_search.batched.candidates import prefix_products


def _numpy_temporal(irm, rm, cuts, prefix, n_levels):
    """The numpy steps ``_temporal`` took before it was compiled."""
    n, length = irm.shape
    rows = np.arange(n)
    nxt = np.empty((n, length + 1), dtype=np.int64)
    nxt[:, length] = length
    positions = np.arange(length)
    for p in range(length - 1, -1, -1):
        nxt[:, p] = np.where(irm[:, p], nxt[:, p + 1], positions[p])
    ends = [nxt[rows, cuts[:, k]] for k in range(n_levels - 1)]
    ends.append(np.full(n, length, dtype=np.int64))
    starts = [np.zeros(n, dtype=np.int64)] + ends[:-1]
    cabl = [prefix[rows, e] for e in ends]
    mac_st = prefix[rows, nxt[:, 0]]

    def run_start(mask):
        rs = np.empty((n, length + 1), dtype=np.int64)
        rs[:, 0] = 0
        for p in range(length):
            rs[:, p + 1] = np.where(mask[:, p], rs[:, p], p + 1)
        return rs

    top_r, top_ir = [], []
    rs_r, rs_ir = run_start(rm), run_start(irm)
    for e, s in zip(ends, starts):
        top_r.append(prefix[rows, e] / prefix[rows, np.maximum(rs_r[rows, e], s)])
        top_ir.append(prefix[rows, e] / prefix[rows, np.maximum(rs_ir[rows, e], s)])
    return ends, cabl, mac_st, top_r, top_ir


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_compiled_temporal_levels_are_the_numpy_ones(seed):
    rng = np.random.default_rng(seed)
    n, length, n_levels = (
        int(rng.integers(1, 300)),
        int(rng.integers(0, 14)),
        int(rng.integers(1, 5)),
    )
    if seed == 0:  # products past float64's range: inf / inf quotients
        length, n_levels = 12, 3
    irm = rng.random((n, length)) < 0.4
    rm = ~irm & (rng.random((n, length)) < 0.7)
    cuts = np.sort(rng.integers(0, length + 1, (n, n_levels - 1)), axis=1)
    weights = [0.2, 0.3, 0.2, 0.1, 0.15, 0.05] if seed else [0.1, 0.1, 0.1, 0.1, 0.1, 0.5]
    sizes = rng.choice([1.0, 2.0, 3.0, 7.0, 16.0, 1e200], (n, length), p=weights)
    with np.errstate(over="ignore", invalid="ignore"):
        prefix = prefix_products(sizes)  # a transposed view, as the model passes it
        expected = _numpy_temporal(irm, rm, cuts, prefix, n_levels)
    irm.setflags(write=False)
    got = movement_kernels.temporal_levels(irm, rm, cuts, prefix)
    for want, have in zip(expected, got):
        assert _same_bits(np.array(want), have)
    if seed == 0:
        assert np.isnan(got[3]).any() and np.isnan(got[4]).any()
