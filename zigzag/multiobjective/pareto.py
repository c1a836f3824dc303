"""Non-dominated sets (Pareto fronts), by moocore's non-dominated sorting.

A point dominates another when it is no worse on every objective and better on one; equal
points do not dominate each other, so duplicates of a front point are all on the front.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _matrix(points, width: int | None = None) -> np.ndarray:
    values = np.asarray(points, dtype=float)
    return values.reshape(
        len(values), width if width is not None else (values.shape[1] if values.ndim > 1 else 1)
    )


def non_dominated(points, maximise: bool | Sequence[bool] = False) -> np.ndarray:
    """Boolean mask of ``points`` (one row per point, one column per objective) that no other
    point dominates; duplicates are all kept. ``maximise``: one flag, or one per objective
    (objectives are minimised by default)."""
    import moocore  # here, not at the top: ~30 ms (cffi), and most importers of the tables need no front

    values = _matrix(points)
    if not len(values):
        return np.zeros(0, dtype=bool)
    return np.asarray(
        moocore.is_nondominated(values, maximise=maximise, keep_weakly=True), dtype=bool
    )


def front_indices(
    rows: Sequence, columns: Sequence, maximise: bool | Sequence[bool] = False
) -> list[int]:
    """Indices (ascending) of the ``rows`` (mappings) on the front of ``columns``; a row missing
    one of them (absent or None) is left out."""
    complete = [i for i, row in enumerate(rows) if all(row.get(c) is not None for c in columns)]
    points = _matrix([[rows[i][c] for c in columns] for i in complete], len(columns))
    return [i for i, keep in zip(complete, non_dominated(points, maximise)) if keep]


def dominated_by(points, others) -> np.ndarray:
    """Boolean mask of ``points`` dominated by some point of ``others`` (all minimised)."""
    mine, theirs = _matrix(points), _matrix(others)
    if not len(mine) or not len(theirs):
        return np.zeros(len(mine), dtype=bool)
    no_worse = np.all(theirs[None, :, :] <= mine[:, None, :], axis=2)
    better = np.any(theirs[None, :, :] < mine[:, None, :], axis=2)
    return np.any(no_worse & better, axis=1)
