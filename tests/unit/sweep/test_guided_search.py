"""The surrogate-guided search (zigzag.sweep.guided) on synthetic grids: budget, seeds, feasibility, front."""

from __future__ import annotations

import itertools
import math

import pytest

from zigzag.sweep.guided import INFEASIBLE, guided_search, initial_design

SIZES = (6, 5, 4)


def synthetic(position: tuple[int, ...]) -> tuple[float, float, float]:
    """Energy, latency, area of a made-up accelerator: a buffer (axis 0) too small below index 2 fails;
    a larger buffer costs area and saves energy, a wider array (axis 1) trades latency for area."""
    buffer, array, bandwidth = position
    if buffer < 2:
        return (INFEASIBLE,) * 3
    energy = 100 / (1 + buffer) + 5 * bandwidth + 3 * array
    latency = 400 / (1 + array) + 50 / (1 + bandwidth) + 2 * buffer
    area = 10 * buffer + 8 * array + 3 * bandwidth
    return (energy, latency, area)


def volume_share(found: dict, grid: dict) -> float:
    """Hypervolume of what was found over the grid's, objectives scaled to the grid's range."""
    from zigzag.sweep.hypervolume import hypervolume, normalised

    ok = [v for v in grid.values() if v[0] < INFEASIBLE]
    lower = [min(v[i] for v in ok) for i in range(3)]
    upper = [max(v[i] for v in ok) for i in range(3)]
    mine = [v for v in found.values() if v[0] < INFEASIBLE]
    reference = (1.1, 1.1, 1.1)
    return hypervolume(normalised(mine, lower, upper), reference) / hypervolume(
        normalised(ok, lower, upper), reference
    )


def test_budget_batches_and_same_positions_for_a_seed():
    batches = []

    def evaluate(positions):
        batches.append(len(positions))
        return [synthetic(p) for p in positions]

    first = guided_search(SIZES, evaluate, 30, 6, seed=3)
    assert len(first) == 30 and batches == [6, 6, 6, 6, 6]
    assert len(set(first)) == 30  # never a position twice
    again = guided_search(SIZES, lambda ps: [synthetic(p) for p in ps], 30, 6, seed=3)
    assert list(again) == list(first)
    other = guided_search(SIZES, lambda ps: [synthetic(p) for p in ps], 30, 6, seed=4)
    assert list(other) != list(first)


def test_failures_are_learned_and_most_of_the_front_is_found():
    """A third of the grid fails: after the first batch the models steer away from it (a random
    draw would fail 6 of 18), and the front found beats random draws of the same size on average."""
    import random

    grid = {p: synthetic(p) for p in itertools.product(*(range(n) for n in SIZES))}
    draws = [random.Random(seed).sample(sorted(grid), 24) for seed in range(20)]
    random_share = sum(volume_share({p: grid[p] for p in d}, grid) for d in draws) / len(draws)
    shares = []
    for seed in range(3):
        found = guided_search(SIZES, lambda ps: [grid[p] for p in ps], 24, 6, seed=seed)
        assert sum(found[p][0] >= INFEASIBLE for p in list(found)[6:]) <= 6
        shares.append(volume_share(found, grid))
    assert sum(shares) / len(shares) > random_share + 0.03


def test_initial_design_spreads_every_axis():
    import random

    design = initial_design((8, 5, 3), 8, random.Random(0))
    assert len(design) == len(set(design)) == 8
    assert len({p[0] for p in design}) == 8 and len({p[1] for p in design}) == 5


def test_a_budget_larger_than_the_grid_evaluates_the_grid_once():
    found = guided_search(
        (3, 2), lambda ps: [(1.0 + p[0], 2.0 + p[1], 1.0) for p in ps], 100, 4, seed=0
    )
    assert sorted(found) == sorted(itertools.product(range(3), range(2)))


@pytest.mark.parametrize("sizes", [(2,), (9, 1, 1), (4, 4)])
def test_odd_grids(sizes):
    total = math.prod(sizes)
    found = guided_search(
        sizes, lambda ps: [(1.0 + sum(p), 10.0 - sum(p), 1.0) for p in ps], total, 3, seed=1
    )
    assert len(found) == total


def test_a_value_tried_only_beside_failing_values_is_not_condemned():
    """Axis 0 below 2 fails (a buffer too small); axis 1's value 3 was tried three times, only with
    such buffers, as buffers 0 and 1 were tried three times each: the same record (no run), but
    the buffers also fail beside array values that run elsewhere, so the failures are blamed on
    them. (The last round's share of runs per value, 0.5 / 4 for all three, condemned array value
    3 as much as the buffers, and the search never tried it again.)"""
    import numpy as np

    from zigzag.sweep.guided import _Models

    positions = [(0, 3, 0), (1, 3, 1), (0, 3, 2), (0, 0, 1), (1, 1, 0), (4, 0, 0), (5, 1, 2)]
    positions += [(3, 2, 1), (2, 0, 2), (1, 2, 2)]
    models = _Models(SIZES, positions, np.array([synthetic(p) for p in positions]))
    # the same three positions but for one value: array value 3, buffer 0, buffer 1 the doubtful one
    array_3, buffer_0, buffer_1 = models._conjunctive(np.array([(3, 3, 1), (0, 2, 1), (1, 2, 1)]))
    assert array_3 > 1.3 * max(buffer_0, buffer_1)
    chance = models.feasibility(np.array([(4, 3, 1), (1, 0, 1)]))
    assert chance[0] > 2 * chance[1]


def test_picks_move_next_to_the_front_when_the_models_miss():
    """``local`` picks come from the neighbours of the front found (one value away on one axis);
    the search takes the last batch there whole, and before it as many as the last batch's misses."""
    import random

    import numpy as np

    from zigzag.sweep.guided import _front_neighbours, _next_batch
    from zigzag.sweep.monotone import directions

    grid = {p: synthetic(p) for p in itertools.product(*(range(n) for n in SIZES))}
    seen = {p: grid[p] for p in [(2, 0, 0), (5, 4, 3), (3, 2, 1), (4, 1, 2), (2, 3, 3), (0, 1, 1)]}
    positions = list(seen)
    near = {
        tuple(p)
        for p in _front_neighbours(SIZES, positions, np.array([seen[p] for p in positions]), seen)
    }
    whole = _next_batch(SIZES, seen, 4, random.Random(0), explore=False, local=4)
    assert set(whole) <= near and len(whole) == 4
    part = _next_batch(SIZES, seen, 4, random.Random(0), explore=True, local=2)
    assert set(part[:2]) <= near and len(set(part)) == 4

    states = []

    def evaluate(positions):  # every pick of the first model batch fails: the next goes local
        states.append((list(positions), dict(found)))
        values = [(INFEASIBLE,) * 3 if len(states) == 2 else grid[p] for p in positions]
        found.update(zip(positions, values))
        return values

    found: dict = {}
    guided_search(SIZES, evaluate, 24, 6, seed=0)
    third, before = states[2]
    ran = [p for p in before if before[p][0] < INFEASIBLE]
    values = np.array([before[p] for p in before])
    signs = directions(np.array(list(before)), values[:, 0] < INFEASIBLE)  # as the search sees them
    near = {tuple(p) for p in _front_neighbours(SIZES, list(before), values, before, signs)}
    # batches of 6, then 5 (four rounds for the 18 left): (1 - 0 runs of 5) x (5 - 1) picks
    assert ran and len(third) == 5 and sum(p in near for p in third) >= 4


@pytest.mark.parametrize("sizes", [(8, 5, 3), (2, 6, 1, 4, 6), (7, 3, 5)])
@pytest.mark.parametrize("count", [2, 3, 5, 9])
def test_initial_design_holds_both_extremes_of_every_axis(sizes, count):
    import random

    design = initial_design(sizes, count, random.Random(count))
    for axis, n in enumerate(sizes):
        assert {0, n - 1} <= {p[axis] for p in design}
    assert initial_design(sizes, count, random.Random(count)) == design  # seeded


def test_a_small_budget_is_spent_in_several_rounds():
    from zigzag.sweep.guided import batch_sizes

    assert batch_sizes(3, 30, 6) == (6, 6)  # a budget of five batches keeps its batches
    assert batch_sizes(3, 8, 4) == (4, 1)  # 4 left: four rounds of one
    assert batch_sizes(3, 16, 8) == (6, 3)  # 40 % first, 10 left in four rounds of 3 or fewer
    assert batch_sizes(5, 10, 8) == (6, 1)  # one more than the axes first
    batches = []

    def evaluate(positions):
        batches.append(len(positions))
        return [synthetic(p) for p in positions]

    found = guided_search(SIZES, evaluate, 16, 8, seed=5)
    assert len(found) == 16 and batches == [6, 3, 3, 3, 1]
    assert list(guided_search(SIZES, lambda ps: [synthetic(p) for p in ps], 16, 8, 5)) == list(
        found
    )


def test_the_exploitation_pass_proposes_only_unevaluated_grid_neighbours_of_the_front():
    import random

    import numpy as np

    from zigzag.sweep.guided import _front_neighbours, _next_batch
    from zigzag.sweep.monotone import directions

    grid = {p: synthetic(p) for p in itertools.product(*(range(n) for n in SIZES))}
    for seed in range(3):
        seen = {p: grid[p] for p in random.Random(seed).sample(sorted(grid), 12)}
        positions = list(seen)
        values = np.array([seen[p] for p in positions])
        # an axis with no monotone order of failures counts every other value as one step
        signs = directions(np.array(positions), values[:, 0] < INFEASIBLE)
        near = {tuple(p) for p in _front_neighbours(SIZES, positions, values, seen, signs)}
        assert near and not near & set(seen)
        assert all(0 <= v < n for p in near for v, n in zip(p, SIZES))
        picks = _next_batch(SIZES, seen, 3, random.Random(seed), explore=False, local=3)
        assert len(set(picks)) == 3 and set(picks) <= near


def test_the_feasibility_prior_of_a_value_is_its_neighbours():
    """A value's prior chance to run is the mean of its neighbours' on the axis (an end value takes
    its one neighbour's), so a value seen only in failures explained by another axis keeps the
    chance of the values around it, and a value between two failing ones inherits their doubt."""
    import numpy as np

    from zigzag.sweep.guided import _neighbour_mean

    assert np.allclose(_neighbour_mean(np.array([0.2, 0.4, 1.0, 0.6])), [0.4, 0.6, 0.5, 1.0])
    assert np.allclose(_neighbour_mean(np.array([0.3])), [0.3])


def test_a_value_seen_only_in_explained_failures_keeps_its_neighbours_chance():
    """Bandwidth 3 (axis 2) was tried once, with buffer 0, which fails beside every other value:
    its failure is the buffer's, so bandwidth 3 keeps about the chance of bandwidths 1 and 2, which
    run; buffer 1, never tried, sits between buffer 0 (fails) and buffer 2 (runs) and is doubtful."""
    import numpy as np

    from zigzag.sweep.guided import _Models

    positions = [(0, 1, 3), (0, 0, 1), (0, 2, 2), (2, 0, 1), (3, 2, 2), (4, 1, 1), (5, 3, 2)]
    models = _Models(SIZES, positions, np.array([synthetic(p) for p in positions]))
    bandwidth_3, buffer_1 = models._conjunctive(np.array([(4, 1, 3), (1, 1, 1)]))
    assert bandwidth_3 > 0.75 and buffer_1 < 0.75 * bandwidth_3


def test_a_likely_failure_with_a_gain_ranks_above_a_dominated_position():
    """A position predicted to extend the front but unlikely to run still ranks above one predicted
    dominated, whatever its chance; among dominated ones a likely failure ranks last."""
    import numpy as np

    from zigzag.sweep.guided import _score

    gains = np.array([0.2, -0.01, -0.01, 0.2])
    feasible = np.array([0.3, 1.0, 0.3, 0.9])
    score = _score(gains, feasible)
    assert list(np.argsort(-score)) == [3, 0, 1, 2]


def test_a_value_never_seen_continues_the_trend_of_its_axis():
    """Every objective halves with each step of axis 2 on the values seen (0, 1, 2); its last value
    (3) was never seen on a runnable position: the objective model continues the trend there (a
    lower prediction than at value 2), rather than copying its neighbour's effect."""
    import numpy as np

    from zigzag.sweep.guided import _Models

    def halving(p):
        return tuple(float(2.0 ** (p[0] - p[2] + k)) for k in range(3))

    positions = [(a, b, c) for a in range(0, 6, 2) for b in (0, 2, 4) for c in range(3)]
    models = _Models(SIZES, positions, np.array([halving(p) for p in positions]))
    at_2, at_3 = models.predict(np.array([(2, 2, 2), (2, 2, 3)]))
    assert np.all(at_3 < at_2)


def test_gains_are_judged_on_the_scale_of_the_predictions_likely_to_run(monkeypatch):
    """Two runnable positions seen whose latencies differ by about 1.5 %: scaled to their range alone,
    predictions for the rest of the grid would lie many ranges beyond it and a gain would count
    that many times. The scale is stretched to the predictions of the positions likely to run,
    so those predictions lie within [0, 1], as the grid's variants do when a front is judged."""
    import random

    import numpy as np

    from zigzag.sweep import guided, guided_pool

    captured = []
    original = guided._gains

    def spy(predicted, front, reference):
        captured.append((predicted.copy(), front.copy()))
        return original(predicted, front, reference)

    monkeypatch.setattr(guided, "_gains", spy)
    seen = {p: synthetic(p) for p in [(4, 3, 1), (5, 3, 1), (0, 0, 0), (1, 4, 3), (0, 3, 2)]}
    picks = guided._next_batch(SIZES, seen, 2, random.Random(0), explore=False)
    assert len(set(picks)) == 2 and not set(picks) & set(seen)
    predicted, front = captured[0]
    positions = list(seen)
    models = guided._Models(SIZES, positions, np.array([seen[p] for p in positions]))
    pool = guided._candidates(SIZES, seen, random.Random(0))
    likely = guided_pool._implied_feasibility(models, positions, pool) >= guided.MIN_FEASIBLE
    assert likely.sum() > 10
    assert np.all(predicted[likely] >= -1e-9) and np.all(predicted[likely] <= 1 + 1e-9)
    assert np.all((front >= -1e-9) & (front <= 1 + 1e-9))
    # without the stretch, the same predictions span far more than the two runnable ones' range
    unstretched = models.linear(models.predict(pool[likely]))
    assert np.ptp(unstretched, axis=0).max() > 5


def test_the_spread_of_a_prediction_is_largest_where_the_model_has_seen_least():
    """The objective model's spread (its posterior at a position, scaled by its measured
    leave-one-out error) is larger at an axis value no runnable position has shown (axis 1,
    value 4) than at values seen, and far smaller for objectives the model's form reproduces
    (products of one factor per axis) than for the synthetic ones, whose axes interact."""
    import numpy as np

    from zigzag.sweep.guided import _Models

    positions = [(a, b, c) for a in range(2, 6) for b in range(4) for c in (0, 3)]
    values = np.array([synthetic(p) for p in positions])
    models = _Models(SIZES, positions, values)
    seen, unseen = models.spread(np.array([(3, 2, 0), (3, 4, 0)]))
    assert np.all(unseen > seen) and np.all(seen > 0)
    exact = np.array([[2.0 ** (a - c), 3.0**b, 1.5 ** (a + b)] for a, b, c in positions])
    exact_spread = _Models(SIZES, positions, exact).spread(np.array([(3, 4, 0)]))[0]
    assert np.all(exact_spread < unseen / 5)


def test_the_exploitation_pass_judges_the_fronts_neighbours_optimistically(monkeypatch):
    """Picks next to the front are ranked on predictions lowered by one spread (a neighbour
    the model knows little about may still extend the front); other positions, and model picks
    of a batch with no local share, on the predictions themselves."""
    import random

    import numpy as np

    from zigzag.sweep import guided, guided_pool

    captured = []
    original = guided._gains

    def spy(predicted, front, reference):
        captured.append(predicted.copy())
        return original(predicted, front, reference)

    monkeypatch.setattr(guided, "_gains", spy)
    seen = {
        p: synthetic(p) for p in [(2, 0, 0), (5, 4, 3), (3, 2, 1), (4, 1, 2), (2, 3, 3), (3, 4, 0)]
    }
    positions = list(seen)
    values = np.array([seen[p] for p in positions])
    models = guided._Models(SIZES, positions, values)
    pool = guided._candidates(SIZES, seen, random.Random(0))
    logs = models.predict(pool)
    models.widen(logs[guided_pool._implied_feasibility(models, positions, pool) >= 0.5])
    plain = models.linear(logs)
    near = {
        tuple(p) for p in guided._front_neighbours(SIZES, positions, values, seen, models.signs)
    }
    mask = np.array([tuple(p) in near for p in pool])
    guided._next_batch(SIZES, seen, 3, random.Random(0), explore=False, local=2)
    judged = captured[0]
    assert np.all(judged[mask] <= plain[mask] + 1e-12) and np.any(judged[mask] < plain[mask])
    assert np.allclose(judged[~mask], plain[~mask])
    captured.clear()
    guided._next_batch(SIZES, seen, 3, random.Random(0), explore=False, local=0)
    assert np.allclose(captured[0], plain)
