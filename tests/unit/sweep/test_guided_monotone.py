"""Monotone feasibility (zigzag.sweep.monotone) on tiny synthetic grids, and its use in the guided search."""

from __future__ import annotations

import itertools

import numpy as np

from zigzag.sweep import monotone


def buffer_fails(position) -> bool:
    """A buffer (axis 0) below index 2 fails; axis 1 (a port) below 1 fails; axis 2 is a shape."""
    return position[0] < 2 or position[1] < 1


def test_directions_follow_the_failures_and_leave_an_unordered_axis_alone():
    seen = np.array([(0, 1, 0), (1, 3, 2), (3, 0, 1), (5, 2, 2), (2, 4, 0), (4, 1, 1), (4, 3, 2)])
    feasible = ~np.array([buffer_fails(p) for p in seen])
    signs = monotone.directions(seen, feasible)
    assert signs[0] == 1 and signs[2] == 0
    # the same failures seen with the axis reversed: the direction turns round
    flipped = seen.copy()
    flipped[:, 0] = 5 - flipped[:, 0]
    assert monotone.directions(flipped, feasible)[0] == -1


def test_a_direction_that_a_pair_contradicts_is_dropped():
    """Axis 0 looks monotone (more runs at larger values) but a runnable position sits below a
    failing one with the same other values: axis 0 cannot be monotone."""
    seen = np.array([(0, 0), (1, 0), (3, 0), (4, 0), (2, 1), (3, 1)])
    feasible = np.array([False, False, True, True, True, False])
    assert monotone.directions(seen[:5], feasible[:5])[0] == 1
    assert monotone.directions(seen, feasible) == (0, 0)  # (2, 1) runs, (3, 1) fails


def test_positions_below_a_failure_must_fail_and_above_a_run_must_run():
    seen = np.array([(1, 2, 0), (3, 1, 0), (2, 0, 1)])
    feasible = np.array([False, True, False])
    pool = np.array([(0, 1, 0), (0, 2, 0), (4, 2, 0), (3, 1, 1), (1, 3, 0), (0, 0, 1)])
    must_fail, must_run = monotone.implied(pool, seen, feasible, (1, 1, 0))
    # (0, 1, 0) and (0, 2, 0) lie below (1, 2, 0) with the same shape; (0, 0, 1) below (2, 0, 1)
    assert list(must_fail) == [True, True, False, False, False, True]
    # (4, 2, 0) lies above (3, 1, 0); (3, 1, 1) has another shape (no order on axis 2)
    assert list(must_run) == [False, False, True, False, False, False]
    none_fail, none_run = monotone.implied(pool, seen, feasible, (0, 0, 0))
    assert not none_fail.any() and not none_run.any()


def test_inference_on_a_whole_tiny_grid_is_never_wrong_for_a_monotone_failure():
    """Whatever positions of a grid whose failures are monotone were seen, what the directions
    learnt from them imply holds on the grid."""
    import random

    sizes = (5, 3, 3)
    grid = list(itertools.product(*(range(n) for n in sizes)))
    for seed in range(20):
        seen = np.array(random.Random(seed).sample(grid, 8))
        feasible = ~np.array([buffer_fails(p) for p in seen])
        signs = monotone.directions(seen, feasible)
        pool = np.array(grid)
        must_fail, must_run = monotone.implied(pool, seen, feasible, signs)
        truth = np.array([buffer_fails(p) for p in grid])
        if signs[0] >= 0 and signs[1] >= 0:  # the directions were learnt right
            assert not (must_fail & ~truth).any() and not (must_run & truth).any()


def test_isotonic_keeps_chances_in_order_along_the_axis():
    values, weights = np.array([0.1, 0.5, 0.3, 0.9]), np.ones(4)
    assert np.allclose(monotone.isotonic(values, weights, 1), [0.1, 0.4, 0.4, 0.9])
    assert np.allclose(monotone.isotonic(values, weights, -1), [0.45] * 4)
    assert np.allclose(monotone.isotonic(values, np.array([1, 1, 3, 1]), 1), [0.1, 0.35, 0.35, 0.9])
    assert np.allclose(monotone.isotonic(values, weights, 0), values)


def test_the_search_does_not_pick_a_position_that_must_fail():
    """A buffer seen failing at index 3 with port 1 and shape 0: every smaller buffer with port 1
    or less and that shape must fail, and the next batch holds none of them."""
    import random

    from zigzag.sweep.guided import INFEASIBLE, _next_batch

    sizes = (6, 3, 2)

    def value(p):
        if p[0] < 4 or p[1] < 1:
            return (INFEASIBLE,) * 3
        return (100.0 / (1 + p[0]) + 3 * p[2], 50.0 / (1 + p[1]) + p[2], 10.0 * p[0] + 4 * p[1])

    start = [(3, 1, 0), (5, 2, 0), (4, 1, 1), (0, 0, 1), (5, 0, 0), (2, 2, 1), (4, 2, 0)]
    seen = {p: value(p) for p in start}
    picks = _next_batch(sizes, seen, 6, random.Random(0), explore=False)
    forbidden = {(b, port, 0) for b in range(4) for port in range(2)}
    assert len(picks) == 6 and not set(picks) & forbidden


def test_an_unordered_axis_counts_every_value_as_a_neighbour_of_the_front():
    """Along an axis with a monotone order of failures a front position's neighbours are one value
    away; along one without (an array shape) every other value is a neighbour."""
    from zigzag.sweep.guided import _front_neighbours

    seen = {(2, 1, 0): (1.0, 1.0, 1.0)}
    values = np.array(list(seen.values()))
    ordered = {tuple(p) for p in _front_neighbours((5, 3, 4), list(seen), values, seen, (1, 1, 1))}
    assert ordered == {(1, 1, 0), (3, 1, 0), (2, 0, 0), (2, 2, 0), (2, 1, 1)}
    shape = {tuple(p) for p in _front_neighbours((5, 3, 4), list(seen), values, seen, (1, 1, 0))}
    assert shape == ordered | {(2, 1, 2), (2, 1, 3)}


def test_a_batch_of_one_or_two_spends_nothing_on_exploration(monkeypatch):
    """With batches of 4 in a budget of 8 the search spends 4, then four batches of one: none of
    them holds the farthest position (exploration), each is the models' best pick; batches of 6
    keep one exploring pick but for the last."""
    from zigzag.sweep import guided

    explored: list = []
    original = guided._next_batch

    def spy(*args, **kwargs):
        explored.append(kwargs["explore"])
        return original(*args, **kwargs)

    monkeypatch.setattr(guided, "_next_batch", spy)

    def evaluate(positions):
        return [(1.0 + sum(p), 9.0 - p[0], 1.0 + p[1]) for p in positions]

    guided.guided_search((6, 5, 4), evaluate, 8, 4, 0)
    assert explored == [False] * 4
    explored.clear()
    guided.guided_search((6, 5, 4), evaluate, 30, 6, 0)
    assert explored == [True, True, True, False]
