"""The compiled pr-decoupling walk (``movement_kernels.pr_footprints``, through
``BatchCostModel._pr_footprints``) against the numpy steps it replaced (kept here as the
reference), on seeded random operands: relations with strides, relevant and kept dims drawn,
dims without loops, fractional spatial factors, sizes below 1 (extents of 0) and past float64's
range; every footprint and zero-extent flag compared bit for bit."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from zigzag.mapping_search.batched.candidates import unique_count
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.workload.layer import DimRelation

DIMS = ["OX", "FX", "OY", "FY", "K", "C"]


def _numpy_pr_footprints(self, info, spatial_levels, starts, ends, ctx, ldim):
    """The numpy steps ``BatchCostModel._pr_footprints`` took before it was compiled."""
    n, length, rows, lsize, prefix = ctx
    relevant = info.operand.relevant_dec
    rels = info.relations
    # decoupling state per relation: [cumulative size of dim_a, of dim_b, previous extent,
    # previous reuse]
    state = [[np.ones(n), np.ones(n), np.ones(n), np.ones(n)] for _ in rels]
    D = [np.ones(n)]
    cumulative = None
    zero = np.zeros(n, dtype=bool)  # an extent of 0: the scalar model divides by zero there
    for k in range(info.n):
        per_level = np.ones(n)
        # the temporal loops of stationary level k: positions starts[k] .. ends[k] - 1
        for p in range(int(starts[k].min()), int(ends[k].max())):
            active = (starts[k] <= p) & (p < ends[k])
            if not active.any():
                continue
            codes, size = ldim[:, p], lsize[:, p]
            per_level = np.where(active & info.relevant_code[codes], per_level * size, per_level)
            decoupled = active & ~info.keep_code[codes]
            for st, rel in zip(state, rels):
                is_a = codes == info.code_of(rel.dim_a)
                hit = decoupled & (is_a | (codes == info.code_of(rel.dim_b)))
                if hit.any():
                    factor = _pr_step(st, rel, hit, is_a, size, self.pr_sizes[rel.data_dim])
                    per_level = np.where(hit, per_level * factor, per_level)
                    zero |= hit & (st[2] == 0)
        # then the spatial unrollings of level k (the same for every candidate)
        for dim, factor in spatial_levels[k]:
            matched = False
            if dim not in info.keep:
                for st, rel in zip(state, rels):
                    if dim in (rel.dim_a, rel.dim_b):
                        matched = True
                        everywhere = np.ones(n, dtype=bool)
                        x_r = _pr_step(
                            st,
                            rel,
                            everywhere,
                            np.full(n, dim == rel.dim_a),
                            factor,
                            self.pr_sizes[rel.data_dim],
                        )
                        per_level = per_level * x_r
                        zero |= st[2] == 0
            if not matched and dim in relevant:
                per_level = per_level * factor
        cumulative = per_level if cumulative is None else cumulative * per_level
        D.append(np.rint(cumulative))
    return D, zero


def _pr_step(st, rel, hit, is_a, size, pr_size):
    """One pr loop of the decoupling walk where ``hit``: grows the cumulative size of its dim,
    updates the state ``[cum_a, cum_b, previous extent, previous reuse]`` and returns the
    ``X_R`` factor ``extent / previous extent`` (meaningful where ``hit``)."""
    cum_a = np.where(hit & is_a, st[0] * size, st[0])
    cum_b = np.where(hit & ~is_a, st[1] * size, st[1])
    extent = np.minimum(float(pr_size), unique_count(rel, np.trunc(cum_a), np.trunc(cum_b)))
    reuse = (cum_a * cum_b) / extent
    factor = extent / st[2]
    st[0], st[1] = cum_a, cum_b
    st[2] = np.where(hit, extent, st[2])
    st[3] = np.where(hit, reuse, st[3])
    return factor


def _case(seed: int):
    """A drawn operand (``_OperandInfo``'s fields), its spatial levels and candidates."""
    rng = np.random.default_rng(seed)
    rels = [
        DimRelation("IX", "OX", int(rng.integers(1, 4)), "FX", int(rng.integers(1, 3))),
        DimRelation("IY", "OY", int(rng.integers(1, 4)), "FY", int(rng.integers(1, 3))),
    ][: int(rng.integers(1, 3))]
    looped = [d for d in DIMS if d != "FY" or rng.random() < 0.7]  # FY: sometimes without loops
    codes = {d: c for c, d in enumerate(looped)}
    keep = {"C", "K"} | ({"OY"} if rng.random() < 0.2 else set())
    relevant = {"C"} | ({"OX"} if rng.random() < 0.3 else set())
    info = SimpleNamespace(
        n=int(rng.integers(1, 5)),
        operand=SimpleNamespace(relevant_dec=relevant),
        relations=rels,
        keep=keep,
        relevant_code=np.array([d in relevant for d in looped] + [False]),
        keep_code=np.array([d in keep for d in looped] + [False]),
        code_of=lambda dim: codes.get(dim, -1),
    )
    spatial_levels = [
        [
            (str(rng.choice(DIMS)), rng.choice([1, 2, 4, 1.5, 16]).item())
            for _ in range(int(rng.integers(0, 3)))
        ]
        for _ in range(info.n + 1)
    ]
    n, length = int(rng.integers(1, 200)), int(rng.integers(1, 12))
    ldim = rng.integers(0, len(looped), (n, length))
    weights = [0.03, 0.2, 0.3, 0.2, 0.2, 0.07] if seed % 2 else [0.0, 0.2, 0.3, 0.25, 0.25, 0.0]
    lsize = rng.choice([0.5, 1.0, 2.0, 3.0, 7.0, 1e120], (n, length), p=weights)
    cuts = np.sort(rng.integers(0, length + 1, (n, info.n - 1)), axis=1)
    ends = [*cuts.T, np.full(n, length)]
    starts = [np.zeros(n, dtype=np.int64), *ends[:-1]]
    ctx = (n, length, np.arange(n), lsize, None)
    pr_sizes = {"IX": int(rng.integers(1, 40)), "IY": int(rng.integers(1, 40))}
    return info, spatial_levels, starts, ends, ctx, ldim, pr_sizes


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _compiled(model, info, spatial_levels, ends, ctx, ldim):
    """The model's footprints of levels 0 .. N (the compiled walk; level 0 the array's 1)."""
    return BatchCostModel._pr_footprints(model, info, spatial_levels, np.array(ends), ctx[3], ldim)


@pytest.mark.parametrize("seed", range(12))
def test_compiled_pr_footprints_are_the_numpy_ones(seed):
    info, spatial_levels, starts, ends, ctx, ldim, pr_sizes = _case(seed)
    model = SimpleNamespace(pr_sizes=pr_sizes, _zero_extent=np.zeros(ctx[0], dtype=bool))
    with np.errstate(all="ignore"):
        expected, zero = _numpy_pr_footprints(model, info, spatial_levels, starts, ends, ctx, ldim)
    got = list(_compiled(model, info, spatial_levels, ends, ctx, ldim))
    assert len(got) == len(expected) == info.n + 1
    for want, have in zip(expected, got):
        assert _same_bits(want, have)
    assert _same_bits(zero, model._zero_extent)


def test_drawn_cases_reach_zero_extents_and_nan():
    zero_met = nan_met = False
    for seed in range(1, 12, 2):
        info, spatial_levels, starts, ends, ctx, ldim, pr_sizes = _case(seed)
        model = SimpleNamespace(pr_sizes=pr_sizes, _zero_extent=np.zeros(ctx[0], dtype=bool))
        got = _compiled(model, info, spatial_levels, ends, ctx, ldim)
        zero_met |= bool(model._zero_extent.any())
        nan_met |= bool(np.isnan(np.array(got)).any())
    assert zero_met and nan_met
