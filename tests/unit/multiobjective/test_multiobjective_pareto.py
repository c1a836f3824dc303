"""The shared non-dominated set (zigzag.multiobjective.pareto): against the definition on random
points with many ties and duplicates, directions, rows with missing values, and cross-set dominance."""

from __future__ import annotations

import random

import numpy as np
import pytest

from zigzag.multiobjective.pareto import dominated_by, front_indices, non_dominated


def naive_front(points, signs):
    """Indices no other point dominates, by the definition (signs: +1 minimise, -1 maximise)."""

    def dominates(a, b):
        a, b = [s * x for s, x in zip(signs, a)], [s * x for s, x in zip(signs, b)]
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return [i for i, p in enumerate(points) if not any(dominates(q, p) for q in points)]


@pytest.mark.parametrize("objectives", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(5))
def test_front_is_the_definition_with_ties_and_duplicates(objectives, seed):
    rng = random.Random(seed)
    points = [
        tuple(rng.randrange(5) for _ in range(objectives)) for _ in range(40)
    ]  # small range: many ties
    points += points[:6]  # exact duplicates, some on the front
    expected = naive_front(points, [1] * objectives)
    assert list(np.flatnonzero(non_dominated(points))) == expected
    maximise = [rng.random() < 0.5 for _ in range(objectives)]
    expected = naive_front(points, [-1 if m else 1 for m in maximise])
    assert list(np.flatnonzero(non_dominated(points, maximise=maximise))) == expected


def test_duplicates_of_a_front_point_are_all_kept():
    assert non_dominated([(1, 2), (1, 2), (2, 1), (2, 2)]).tolist() == [True, True, True, False]
    assert non_dominated([(1, 2), (1, 2), (2, 1), (2, 2)], maximise=True).tolist() == [
        False,
        False,
        False,
        True,
    ]
    assert non_dominated([]).tolist() == []


def test_front_indices_leave_out_rows_missing_a_column():
    rows = [
        {"e": 1, "l": 5},
        {"e": None, "l": 0},
        {"e": 2, "l": 2},
        {"l": 1},
        {"e": 3, "l": 2},
        {"e": 2, "l": 2},
    ]
    assert front_indices(rows, ("e", "l")) == [0, 2, 5]
    assert front_indices(rows, ("e", "l"), maximise=[False, True]) == [0]
    assert front_indices([{"e": None}], ("e",)) == [] and front_indices([], ("e", "l")) == []


def test_dominated_by_another_set():
    ours = [(1, 5), (3, 3), (5, 1), (2, 2)]
    theirs = [(2, 2), (5, 0)]
    assert dominated_by(ours, theirs).tolist() == [
        False,
        True,
        True,
        False,
    ]  # (2, 2) does not dominate itself
    assert (
        dominated_by(ours, []).tolist() == [False] * 4 and dominated_by([], theirs).tolist() == []
    )
