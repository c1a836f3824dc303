"""The hypervolume of a Pareto front (minimised objectives): the volume it dominates up to a
reference point, computed by the moocore library (exact)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def hypervolume(points: Sequence[Sequence[float]], reference: Sequence[float]) -> float:
    """The volume dominated by ``points`` (all objectives minimised) and bounded by ``reference``;
    points not better than the reference in every objective add nothing."""
    import moocore

    inside = np.array(
        [tuple(map(float, p)) for p in points if all(v < r for v, r in zip(p, reference))]
    )
    if not len(inside):
        return 0.0
    return float(moocore.hypervolume(inside, ref=np.asarray(reference, dtype=float)))


def normalised(
    points: Sequence[Sequence[float]], lower: Sequence[float], upper: Sequence[float]
) -> list[tuple]:
    """Points scaled to [0, 1] per objective between ``lower`` and ``upper`` (e.g. the ideal and
    nadir points of a reference front), so each objective weighs the same in the hypervolume."""
    return [
        tuple((v - lo) / (hi - lo) if hi > lo else 0.0 for v, lo, hi in zip(p, lower, upper))
        for p in points
    ]
