"""The compiled footprints, partial-sum flags and flows (``movement_kernels.plain_footprints``,
``psum_flags``, ``operand_flows``) against the numpy steps of ``BatchCostModel._footprints``,
``_psum`` and ``_movement`` they replaced (kept here as the reference), on seeded random
candidates: integral and fractional figures, zeros of both signs, products past float64's range
(``inf``, ``NaN``), where numpy's ``floor_divide`` has its own rules; every figure compared bit
for bit."""

from __future__ import annotations

import numpy as np
import pytest

from zigzag.mapping_search.batched import movement_kernels
from zigzag.mapping_search.batched.candidates import prefix_products

DIRECTIONS = ("fh", "tl", "fl", "th")


def _numpy_footprints(spatial_factors, starts, ends, rm, lsize, n_levels):
    """The numpy steps ``_footprints`` took (an operand without pr dims) before it was compiled;
    ``spatial_factors[k]``: the relevant spatial factors of level ``k``."""
    rows = np.arange(len(lsize))
    D = [np.ones(len(lsize))]
    pr = prefix_products(np.where(rm, lsize, 1.0))
    cumulative = None
    for k in range(n_levels):
        per_level = pr[rows, ends[k]] / pr[rows, starts[k]]
        for factor in spatial_factors[k]:
            per_level = per_level * factor
        cumulative = per_level if cumulative is None else cumulative * per_level
        D.append(np.rint(cumulative))
    return D


def _numpy_psum(spatial_ir, starts, ends, irm, lsize, n_levels):
    """The numpy steps ``_psum`` took before it was compiled."""
    n = len(lsize)
    rows = np.arange(n)
    counts = np.zeros((n, irm.shape[1] + 1))
    np.cumsum(irm & (lsize > 1), axis=1, out=counts[:, 1:])
    has_ir = [np.full(n, spatial_ir[0])]
    for k in range(n_levels):
        temporal = counts[rows, ends[k]] > counts[rows, starts[k]]
        has_ir.append(temporal | spatial_ir[k + 1])
    psum = []
    for k in range(n_levels):
        flag = np.zeros(n, dtype=bool)
        for a in range(k + 1, n_levels + 1):
            flag = flag | has_ir[a]
        psum.append(flag)
    psum.append(np.zeros(n, dtype=bool))
    return psum


def _numpy_movement(D, psum, top_r, top_ir, cabl, mac_st, boost, total, is_output, use_mac, p):
    """The numpy steps ``_movement`` took before it was compiled: ``(bits, eff_bits, flows)``,
    the flows per level a dict direction -> the six figures (None: no data ever moves there)."""
    n_lv = len(cabl)
    top_r, top_ir = [1.0, *top_r], [1.0, *top_ir]
    if is_output:
        p_o, p_of = p
        prec = [np.where(psum[a], p_o, p_of) for a in range(n_lv + 1)]
        c = [1.0, *cabl]
    else:
        prec = [p] * (n_lv + 1)
        c = [mac_st if use_mac else 1.0, *cabl]
    bits = [D[a] * prec[a] for a in range(n_lv + 1)]
    eff_bits = [np.floor_divide(bits[a], top_r[a]) for a in range(n_lv + 1)]
    low = [bits[a] / c[a] for a in range(n_lv + 1)]
    high = [low[a] * boost[a] for a in range(n_lv + 1)]
    flows = []
    for k in range(n_lv):
        t_low, t_high = c[k], c[k + 1]
        n_low, n_high = np.floor_divide(total, t_low), np.floor_divide(total, t_high)
        w_low = np.trunc(np.divide(t_low, top_ir[k]))
        w_high = np.trunc(np.divide(t_high, top_ir[k + 1]))
        if is_output:
            fl = (t_low, n_low, np.trunc(D[k] * boost[k]), prec[k], np.trunc(high[k]), w_low)
            tl = tuple(np.where(psum[k], v, 0.0) for v in fl)
            th = (t_high, n_high, D[k + 1], prec[k + 1], np.trunc(low[k + 1]), w_high)
            fh = tuple(np.where(psum[k + 1], v, 0.0) for v in th)
        else:
            tl = (t_low, n_low, D[k] * boost[k], p, np.trunc(high[k]), w_low)
            fh = (t_high, n_high, D[k + 1], p, np.trunc(low[k + 1]), w_high)
            fl = th = None
        if k == n_lv - 1:
            fh = th = None
        flows.append({"fh": fh, "tl": tl, "fl": fl, "th": th})
    return bits, eff_bits, flows


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _figures(rng, shape, integral: bool):
    """Drawn floats: integers mostly, with fractions, zeros of both signs, huge values and
    infinities where not ``integral``."""
    values = rng.integers(1, 5000, shape).astype(np.float64)
    if integral:
        return values
    special = rng.choice([0.0, -0.0, 0.5, 3.25, 1e300, np.inf, 2.0**60], shape)
    return np.where(rng.random(shape) < 0.25, special, values)


def _case(seed: int):
    """Drawn candidates of one operand: masks, sizes, level ends, spatial steps."""
    rng = np.random.default_rng(seed)
    n, length, n_levels = (
        int(rng.integers(1, 250)),
        int(rng.integers(0, 12)),
        int(rng.integers(1, 5)),
    )
    irm = rng.random((n, length)) < 0.4
    rm = ~irm & (rng.random((n, length)) < 0.7)
    weights = [0.25, 0.3, 0.2, 0.1, 0.1, 0.05] if seed % 3 else [0.1, 0.1, 0.1, 0.1, 0.1, 0.5]
    lsize = rng.choice([1.0, 2.0, 3.0, 7.0, 0.5, 1e200], (n, length), p=weights)
    cuts = np.sort(rng.integers(0, length + 1, (n, n_levels - 1)), axis=1)
    ends = np.concatenate([cuts.T, np.full((1, n), length)]).astype(np.int64)
    starts = np.concatenate([np.zeros((1, n), dtype=np.int64), ends[:-1]])
    factors = [
        list(rng.choice([1.0, 2.0, 4.0, 1.5, 16.0], int(rng.integers(0, 3))))
        for _ in range(n_levels)
    ]
    spatial_ir = rng.random(n_levels + 1) < 0.3
    return rng, n, n_levels, irm, rm, lsize, ends, starts, factors, spatial_ir


@pytest.mark.parametrize("seed", range(10))
def test_compiled_footprints_and_psum_are_the_numpy_ones(seed):
    rng, n, n_levels, irm, rm, lsize, ends, starts, factors, spatial_ir = _case(seed)
    with np.errstate(all="ignore"):
        want_d = _numpy_footprints(factors, starts, ends, rm, lsize, n_levels)
        want_psum = _numpy_psum(spatial_ir, starts, ends, irm, lsize, n_levels)
    ptr = np.cumsum([0] + [len(f) for f in factors]).astype(np.int64)
    flat = np.array([f for level in factors for f in level], dtype=np.float64)
    got_d = movement_kernels.plain_footprints(ends, rm, lsize, ptr, flat)
    got_psum = movement_kernels.psum_flags(ends, irm, lsize, spatial_ir)
    assert _same_bits(np.array(want_d), got_d)
    assert _same_bits(np.array(want_psum), got_psum)


def _flows_case(seed: int):
    """The numpy steps' ``(bits, eff_bits, flows)`` and the compiled ones of a drawn operand."""
    rng, n, n_levels, *_ = _case(seed)
    integral = seed % 4 == 0  # the integer fast path of floor_divide only
    D = _figures(rng, (n_levels + 1, n), integral)
    D[0] = 1.0
    top_r, top_ir = _figures(rng, (n_levels, n), integral), _figures(rng, (n_levels, n), integral)
    cabl, mac_st = _figures(rng, (n_levels, n), integral), _figures(rng, (n,), integral)
    psum = rng.random((n_levels + 1, n)) < 0.5
    psum[-1] = False
    boost = rng.choice([1.0, 2.0, 16.0], n_levels + 1)
    total = float(rng.choice([1.0, 7.0, 2.0**40, 1e300]))
    is_output, use_mac = bool(seed % 2), bool(seed % 3)
    p = (24.0, 8.0) if is_output else float(rng.choice([8.0, 16.0]))
    with np.errstate(all="ignore"):
        want = _numpy_movement(
            D, psum, top_r, top_ir, cabl, mac_st, boost, total, is_output, use_mac, p
        )
    bits, eff = np.empty((n_levels + 1, n)), np.empty((n_levels + 1, n))
    # every (level, direction) a slot of its own, in a drawn order, but where no data ever moves
    moving = [
        (k, d)
        for k in range(n_levels)
        for d, direction in enumerate(DIRECTIONS)
        if not (not is_output and direction in ("fl", "th"))
        and not (k == n_levels - 1 and direction in ("fh", "th"))
    ]
    slots = np.full((n_levels, 4), -1, dtype=np.int64)
    for slot, (k, d) in zip(rng.permutation(len(moving)), moving):
        slots[k, d] = slot
    flows = np.full((len(moving) + 1, 6, n), np.nan)
    p_o, p_of = p if is_output else (0.0, 0.0)
    movement_kernels.operand_flows(
        D,
        psum if is_output else np.zeros((0, 0), dtype=bool),
        top_r,
        top_ir,
        cabl,
        mac_st,
        boost,
        total,
        is_output,
        use_mac,
        p_o if is_output else p,
        p_of,
        bits,
        eff,
        flows,
        slots,
    )
    assert np.isnan(flows[-1]).all()  # a slot no flow has: not written
    return want, (bits, eff, flows, slots)


@pytest.mark.parametrize("seed", range(16))
def test_compiled_flows_are_the_numpy_ones(seed):
    (want_bits, want_eff, want_flows), (bits, eff, flows, slots) = _flows_case(seed)
    n = bits.shape[1]
    assert _same_bits(np.array(want_bits), bits)
    assert _same_bits(np.array(want_eff), eff)
    for k, level in enumerate(want_flows):
        for d, direction in enumerate(DIRECTIONS):
            want = level[direction]
            assert (want is None) == (slots[k, d] < 0)  # no slot where no data ever moves
            for f, value in enumerate(want or ()):
                figures = flows[slots[k, d], f]
                assert _same_bits(np.broadcast_to(value, (n,)).astype(np.float64), figures)


def test_drawn_flows_reach_numpys_floor_divide_rules():
    """The cases above meet infinities, NaNs and signed zeros in ``floor_divide``'s results
    (``bits // top_r`` and ``total // period``)."""
    met = set()
    for seed in range(16):
        (_, want_eff, want_flows), _ = _flows_case(seed)
        counts = [flow[1] for level in want_flows for flow in level.values() if flow is not None]
        for values in (*want_eff, *counts):
            values = np.asarray(values)
            met |= {"nan"} if np.isnan(values).any() else set()
            met |= {"inf"} if np.isinf(values).any() else set()
            met |= {"-0"} if np.signbit(values[values == 0]).any() else set()
    assert met == {"nan", "inf", "-0"}
