"""The compiled word accesses (``movement_kernels.word_accesses``) against the numpy expression of
``BatchCostModel._accesses`` it replaced (kept here as the reference), on seeded random flows
(read from packed flows, as the model hands them over):
zero, huge, infinite and NaN bits and counts, ports of zero bandwidth, every figure and
exactness flag compared bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from zigzag.mapping_search.batched import movement_kernels
from zigzag.mapping_search.batched.candidates import EXACT


def _numpy_accesses(data, count, moving, small, bw_min, ratio, instances, exact):
    """The numpy steps ``_accesses`` took before it was compiled."""
    value = np.ceil(data / bw_min[:, None]) * ratio[:, None] * count * instances[:, None]
    value = np.where(moving, np.trunc(value), 0.0)
    return value, exact & (small & (value < EXACT)).all(axis=0)


def _drawn(rng, values, shape):
    """Floats of ``shape``: mostly drawn integers and fractions, some of ``values``."""
    out = np.where(rng.random(shape) < 0.5, rng.integers(0, 4096, shape), rng.random(shape) * 1e3)
    special = rng.random(shape) < 0.1
    return np.where(special, rng.choice(values, shape), out).astype(np.float64)


@pytest.mark.parametrize("seed", range(20))
def test_word_accesses_match_numpy(seed):
    rng = np.random.default_rng(seed)
    rows, n = int(rng.integers(1, 24)), int(rng.integers(1, 300))
    specials = [0.0, -0.0, 1.0, 2.0**60, np.inf, np.nan]
    amount = _drawn(rng, specials, (rows, n))
    precision = _drawn(rng, [0.0, 8.0, 24.0, 2.0**40], (rows, n))
    count = _drawn(rng, specials, (rows, n))
    with np.errstate(invalid="ignore"):
        data = amount * precision
    moving = (amount != 0) & (precision != 0)
    small = data < EXACT
    bw_min = _drawn(rng, [0.0, 1.0, 3.0, 1024.0], (rows,))
    ratio = rng.choice([1.0, 0.5, 0.25, 1 / 3], rows)
    instances = rng.choice([1.0, 16.0, 256.0, 1024.0], rows)
    exact = rng.random(n) < 0.9
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        want, want_exact = _numpy_accesses(
            data, count, moving, small, bw_min, ratio, instances, exact
        )
    # the rows' flows packed as the model packs them (its figures period, count, amount,
    # precision, bw_aver, window), in drawn slots among others
    flows = _drawn(rng, specials, (rows + 3, 6, n))
    slot = rng.permutation(rows + 3)[:rows]
    flows[slot, 1] = count
    flows[slot, 2] = amount
    flows[slot, 3] = precision
    got_exact = exact.copy()
    got = movement_kernels.word_accesses(flows, slot, bw_min, ratio, instances, got_exact)
    assert got.tobytes() == want.tobytes()
    assert np.array_equal(got_exact, want_exact)


with np.errstate(invalid="ignore"):
    #: the NaN the evaluator's arithmetic makes (``0 x inf``, ``inf - inf``): the processor's
    #: default NaN, the only one there, so which of two NaN operands a sum keeps is not seen (the
    #: compiled sum may take them in the other order); ``np.nan`` has the other sign
    _DEFAULT_NAN = float(np.float64(0.0) * np.float64(np.inf))


def _numpy_energy(accesses, costs):
    """The numpy steps ``access_energy`` took before it was compiled (without the MAC energy)."""
    energy = np.zeros(len(next(v for acc in accesses for v in acc.values())))
    for acc, (r_cost, w_cost) in zip(accesses, costs):
        e_th, e_fh = acc["th"] * r_cost, acc["fh"] * w_cost
        e_tl, e_fl = acc["tl"] * r_cost, acc["fl"] * w_cost
        energy = energy + ((e_th + e_tl) + (e_fh + e_fl))
    return energy


@pytest.mark.parametrize("seed", range(20))
def test_access_energies_match_numpy(seed):
    rng = np.random.default_rng(seed)
    levels, n = int(rng.integers(1, 12)), int(rng.integers(1, 300))
    specials = [0.0, 1.0, 2.0**60, np.inf, _DEFAULT_NAN]
    slots = np.full((levels, 4), -1, dtype=np.int64)
    present = rng.random((levels, 4)) < 0.6
    present[0, 0] = True  # one array at least, as the evaluator has
    slots[present] = np.arange(int(present.sum()))
    value = _drawn(rng, specials, (int(present.sum()), n))
    costs = [
        (rng.choice([0, 3, 2**40, 0.5, 1e300, np.inf]).item(), rng.choice([1, 7, 0.25]).item())
        for _ in range(levels)
    ]
    directions = ("th", "tl", "fh", "fl")
    accesses = [
        {d: (value[slots[l, c]] if slots[l, c] >= 0 else 0.0) for c, d in enumerate(directions)}
        for l in range(levels)
    ]
    with np.errstate(over="ignore", invalid="ignore"):
        want = _numpy_energy(accesses, costs)
    got = movement_kernels.access_energies(
        value,
        slots,
        np.array([float(r) for r, _ in costs]),
        np.array([float(w) for _, w in costs]),
    )
    assert got.tobytes() == want.tobytes()
