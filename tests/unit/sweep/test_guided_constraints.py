"""The guided search's model of constraints (zigzag.sweep.guided_constraints), the measured
objectives of variants out of their constraints (hardware_search.measured), and the screen's
verdicts told by monotonicity (guided_pool._known_failing)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from zigzag.sweep.guided import INFEASIBLE, guided_search
from zigzag.sweep.guided_constraints import Broke, within_chance
from zigzag.sweep.guided_pool import _Gate, _known_failing
from zigzag.sweep.hardware_search import WORST, measured
from zigzag.sweep.hypervolume import hypervolume, normalised

SIZES = (8, 6, 5)


def objectives(p: tuple[int, ...]) -> tuple[float, float, float]:
    """Energy, latency, area of a made-up grid: a larger axis 0 saves energy and costs area, a
    larger axis 1 saves latency and costs area and energy, axis 2 costs energy and latency."""
    energy = 10.0 / (1 + p[0]) + p[2] + 0.3 * p[1]
    latency = 8.0 / (1 + p[1]) + 0.5 * p[2] + 1
    area = p[0] + p[1] + 0.1 * p[2] + 1
    return (energy, latency, area)


def within(p: tuple[int, ...]) -> bool:
    """The constraints: latency at most 4, area at most 10 (60 of the 240 variants keep both)."""
    _, latency, area = objectives(p)
    return latency <= 4 and area <= 10


def test_the_chance_to_keep_a_bound_follows_the_predicted_objectives():
    rng = np.random.default_rng(0)
    logs = rng.normal(size=(30, 3))
    kept = logs[:, 1] < 0  # a bound on the second objective
    chance = within_chance(logs, kept, np.array([[0.0, -2.0, 0.0], [0.0, 2.0, 0.0]]))
    assert chance[0] > 0.8 and chance[1] < 0.2
    assert within_chance(logs, np.ones(30, dtype=bool), logs[:2]).tolist() == [1.0, 1.0]
    assert within_chance(logs, np.zeros(30, dtype=bool), logs[:2]).tolist() == [0.5, 0.5]


@pytest.mark.slow  # eight searches, ~5 s
def test_measured_objectives_of_variants_out_of_their_constraints_spare_evaluations():
    """Told the objectives of the variants out of the constraints, the search evaluates fewer of
    them than told only that they failed, and still finds the constrained front."""
    good = [objectives(p) for p in itertools.product(*map(range, SIZES)) if within(p)]
    lower = [min(v[i] for v in good) for i in range(3)]
    upper = [max(v[i] for v in good) for i in range(3)]
    whole = hypervolume(normalised(good, lower, upper), (1.1,) * 3)
    out = {}
    for marked in (False, True):

        def evaluate(positions, marked=marked):
            return [
                objectives(p)
                if within(p)
                else (Broke(objectives(p)) if marked else (INFEASIBLE,) * 3)
                for p in positions
            ]

        out[marked] = []
        for seed in range(4):
            found = guided_search(SIZES, evaluate, 36, 6, seed)
            assert len(found) == 36
            assert all(v[0] < INFEASIBLE for p, v in found.items() if within(p))
            assert all(v[0] == INFEASIBLE for p, v in found.items() if not within(p))
            out[marked].append(sum(not within(p) for p in found))
            mine = [v for v in found.values() if v[0] < INFEASIBLE]
            if marked:
                assert hypervolume(normalised(mine, lower, upper), (1.1,) * 3) / whole >= 0.95
    assert sum(out[True]) < sum(out[False])


def test_a_variant_out_of_its_constraints_is_told_with_its_measured_objectives():
    row = {"energy_pJ": 2.0, "latency_cycles": 30.0, "area_mm2": 1.5}
    told = measured([{**row, "status": "ok"}, {**row, "status": "out"}])
    assert isinstance(told, Broke) and told == (4.0, 60.0, 1.5)
    assert measured([{**row, "status": "ok"}]) == (2.0, 30.0, 1.5)
    assert not isinstance(measured([{**row, "status": "ok"}]), Broke)
    assert measured([{"status": "infeasible", "area_mm2": None}]) == (WORST,) * 3


def test_the_screen_is_not_asked_about_positions_its_verdicts_show_must_fail():
    """Failure grows below index 2 of axis 0 (monotone); axis 1 shows no direction, so a
    verdict tells only positions with its value there."""
    rejected, passed = [(1, 0), (1, 3), (0, 2)], [(2, 0), (3, 3), (2, 2)]
    gate = _Gate(lambda p: p[0] >= 2)
    for p in rejected + passed:
        gate.passes(p)
    pool = np.array(list(itertools.product(range(4), range(4))))
    known = {tuple(int(v) for v in p) for p in pool[_known_failing(gate, {}, {}, pool)]}
    assert known == {(0, 0), (1, 0), (0, 3), (1, 3), (0, 2)}
    assert not _known_failing(_Gate(None), {}, {}, pool).any()  # no screen: nothing to spare
