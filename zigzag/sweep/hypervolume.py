"""The hypervolume of a Pareto front (minimised objectives): the volume it dominates up to a
reference point. Exact, by slicing along the first objective (fronts of a few thousand points)."""

from __future__ import annotations

from collections.abc import Sequence


def _area(points: list[tuple[float, float]], reference: tuple[float, float]) -> float:
    """The 2-D area dominated by ``points`` up to ``reference``."""
    area, best = 0.0, reference[1]
    for y, z in sorted(points):
        if z < best:
            area += (reference[0] - y) * (best - z)
            best = z
    return area


def hypervolume(points: Sequence[Sequence[float]], reference: Sequence[float]) -> float:
    """The volume dominated by ``points`` (2 or 3 objectives, all minimised) and bounded by
    ``reference``; points not better than the reference in every objective add nothing."""
    inside = sorted(tuple(map(float, p)) for p in points if all(v < r for v, r in zip(p, reference)))
    if not inside:
        return 0.0
    if len(reference) == 2:
        return _area(inside, tuple(reference))
    if len(reference) != 3:
        raise ValueError("hypervolume: 2 or 3 objectives")
    volume = 0.0
    for i, point in enumerate(inside):
        upper = inside[i + 1][0] if i + 1 < len(inside) else reference[0]
        if upper > point[0]:
            volume += (upper - point[0]) * _area([p[1:] for p in inside[:i + 1]], tuple(reference[1:]))
    return volume


def normalised(points: Sequence[Sequence[float]], lower: Sequence[float], upper: Sequence[float]) -> list[tuple]:
    """Points scaled to [0, 1] per objective between ``lower`` and ``upper`` (e.g. the ideal and
    nadir points of a reference front), so each objective weighs the same in the hypervolume."""
    return [tuple((v - lo) / (hi - lo) if hi > lo else 0.0 for v, lo, hi in zip(p, lower, upper)) for p in points]
