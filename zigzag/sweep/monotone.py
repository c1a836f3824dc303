"""Feasibility that follows from monotonicity: which grid positions must run or must fail.

A memory too small to hold a layer makes a variant fail whatever else it has, and a larger one
does not make it fail again: along a size axis, failure is *monotone*. When the positions seen so
far are consistent with each axis being monotone in a direction (or not monotone at all), a
position that is no larger than a failing one on every monotone axis, and equal to it on the
others, must fail too; one that is no smaller than a runnable one must run.

The directions are learnt from the positions seen: an axis' direction is the sign of how its
values order the runnable positions against the failing ones (the share of such pairs in which the
runnable one has the larger value, minus the share in which it has the smaller), kept only when
that share is at least :data:`EVIDENCE`; of those axes, the largest set whose directions no pair
seen contradicts (a runnable position below a failing one) is kept, the others count as not
monotone (a position then implies only positions with its exact value there).
"""

from __future__ import annotations

import itertools

import numpy as np

#: least net share of (runnable, failing) pairs ordered one way for an axis to count as monotone
EVIDENCE = 0.25


def directions(positions: np.ndarray, feasible: np.ndarray) -> tuple[int, ...]:
    """Per axis, +1 when larger values run more readily, -1 when smaller ones do, 0 when no
    direction is clear or one would contradict what was seen."""
    positions = np.asarray(positions).reshape(len(feasible), -1)
    runs, fails = positions[feasible], positions[~feasible]
    axes = positions.shape[1]
    if not len(runs) or not len(fails):
        return (0,) * axes
    order = np.sign(runs[:, None, :] - fails[None, :, :]).mean(axis=(0, 1))
    signs = np.where(np.abs(order) >= EVIDENCE, np.sign(order), 0).astype(int)
    candidates = [a for a in range(axes) if signs[a]]
    for size in range(len(candidates), 0, -1):
        best = None
        for chosen in itertools.combinations(candidates, size):
            kept = np.zeros(axes, dtype=int)
            kept[list(chosen)] = signs[list(chosen)]
            strength = float(np.abs(order[list(chosen)]).sum())
            if not _contradicted(runs, fails, kept) and (best is None or strength > best[0]):
                best = (strength, kept)
        if best is not None:
            return tuple(int(d) for d in best[1])
    return (0,) * axes


def _below(lower: np.ndarray, upper: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``[i, j]``: position ``lower[i]`` is at most ``upper[j]`` along every monotone axis (in its
    direction) and equal to it on the others."""
    scaled_lower, scaled_upper = lower * signs, upper * signs
    monotone = signs != 0
    le = np.all(scaled_lower[:, None, monotone] <= scaled_upper[None, :, monotone], axis=2)
    eq = np.all(lower[:, None, ~monotone] == upper[None, :, ~monotone], axis=2)
    return le & eq


def _contradicted(runs: np.ndarray, fails: np.ndarray, signs: np.ndarray) -> bool:
    return bool(_below(runs, fails, signs).any())


def implied(
    pool: np.ndarray, positions: np.ndarray, feasible: np.ndarray, signs: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Two masks over ``pool``: the positions that must fail (below a failing position seen) and
    those that must run (above a runnable one), by the axes' directions ``signs``."""
    pool = np.asarray(pool).reshape(-1, len(signs))
    positions = np.asarray(positions).reshape(len(feasible), -1)
    signs_array = np.array(signs, dtype=int)
    none = np.zeros(len(pool), dtype=bool)
    if not signs_array.any():
        return none, none.copy()
    fails, runs = positions[~feasible], positions[feasible]
    must_fail = _below(pool, fails, signs_array).any(axis=1) if len(fails) else none
    must_run = _below(runs, pool, signs_array).any(axis=0) if len(runs) else none.copy()
    return must_fail, must_run


def isotonic(values: np.ndarray, weights: np.ndarray, sign: int) -> np.ndarray:
    """The weighted least-squares fit of ``values`` that never decreases (``sign`` +1) or never
    increases (-1) along the axis (pool-adjacent-violators); ``sign`` 0 leaves them as they are."""
    if sign == 0 or len(values) < 2:
        return np.asarray(values, dtype=float)
    ordered = np.asarray(values, dtype=float)[::sign]
    blocks: list[list[float]] = []  # [weighted mean, weight, count]
    for value, weight in zip(ordered, np.asarray(weights, dtype=float)[::sign]):
        blocks.append([value, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            value_b, weight_b, count_b = blocks.pop()
            value_a, weight_a, count_a = blocks.pop()
            total = weight_a + weight_b
            blocks.append(
                [(value_a * weight_a + value_b * weight_b) / total, total, count_a + count_b]
            )
    fitted = np.concatenate([np.full(count, value) for value, _, count in blocks])
    return fitted[::sign]
