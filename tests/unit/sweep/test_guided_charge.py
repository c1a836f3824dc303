"""The guided search's budget with the feasibility screen's questions charged to it
(zigzag.sweep.guided's screen_charge), and the questions it spares: a verdict that follows by
monotonicity from the ones seen (zigzag.sweep.guided_pool._known_passing)."""

from __future__ import annotations

import numpy as np

from zigzag.sweep.guided import INFEASIBLE, guided_search
from zigzag.sweep.guided_pool import _Gate, _known_passing

SIZES = (6, 5, 4)


def _objectives(p):
    if p[0] + p[1] < 4:  # small buffers fail: monotone along both axes
        return (INFEASIBLE,) * 3
    return (10.0 / (1 + p[0]) + p[2], 8.0 / (1 + p[1]) + p[2], p[0] + p[1] + 0.1 * p[2])


def _search(charge: float, budget: int = 24):
    asked = []

    def screen(p):
        asked.append(p)
        return _objectives(p)[0] < INFEASIBLE

    found = guided_search(
        SIZES, lambda ps: [_objectives(p) for p in ps], budget, 6, 1, screen, charge
    )
    return found, asked


def test_the_charged_questions_and_the_evaluations_hold_within_the_budget():
    for charge in (0.1, 0.25, 0.5):
        found, asked = _search(charge)
        assert len(found) + charge * len(asked) <= 24
        assert len(found) >= 24 - charge * len(asked) - 1  # the rest of the budget is spent
    free, asked_free = _search(0.0)
    assert len(free) == 24 and len(asked_free) > 0


def test_a_charge_spares_questions_about_positions_likely_to_run():
    _, asked_free = _search(0.0, budget=30)
    _, asked_charged = _search(0.5, budget=30)
    assert len(asked_charged) < len(asked_free)


def test_a_verdict_that_follows_by_monotonicity_is_not_asked():
    gate = _Gate(lambda p: True)
    gate.passed.update({(2, 2), (3, 3)})
    gate.rejected.update({(0, 0), (1, 1)})
    pool = np.array([(4, 4), (2, 3), (1, 0), (0, 4)])
    known = _known_passing(gate, {}, {}, pool)
    assert known.tolist() == [True, True, False, False]
    assert not _known_passing(_Gate(None), {}, {}, pool).any()  # no screen: nothing to spare


def test_the_screens_rejections_teach_the_feasibility_models():
    """A rejection is a failure known for free: taught to the models, it keeps the later picks
    out of the failing region (seeds 0-3: 82 rejected questions, 129 when the models did not
    learn them)."""
    rejected = 0
    for seed in range(4):
        asked = []

        def screen(p, asked=asked):
            asked.append(p)
            return _objectives(p)[0] < INFEASIBLE

        guided_search(SIZES, lambda ps: [_objectives(p) for p in ps], 24, 6, seed, screen)
        rejected += sum(_objectives(p)[0] >= INFEASIBLE for p in asked)
    assert rejected < 100


def test_charged_questions_are_bounded_per_pick_where_the_screen_rejects_most_of_the_grid():
    """Only a corner runs (as on a ResNet-18 grid of buffers mostly too small): without a bound
    the first batch walked 71 questions from each rejected design position to its nearest
    runnable one, spending the budget on the charge; now at most QUESTIONS per pick are asked,
    the models learn the rejections, and evaluations that run are left."""
    from zigzag.sweep.guided import QUESTIONS

    def objectives(p):
        if p[0] < 5 or p[1] < 1:
            return (INFEASIBLE,) * 3
        return (1.0 + p[1] + 0.1 * p[2], 5.0 - p[1] + p[0], 1.0 + p[2] + p[0])

    for seed in (0, 8):
        asked = []

        def screen(p, asked=asked):
            asked.append(p)
            return objectives(p)[0] < INFEASIBLE

        found = guided_search(
            (7, 4, 4), lambda ps: [objectives(p) for p in ps], 18, 6, seed, screen, 0.25
        )
        assert len(asked) <= QUESTIONS * 18
        assert len(found) + 0.25 * len(asked) <= 18
        assert sum(v[0] < INFEASIBLE for v in found.values()) >= 5
