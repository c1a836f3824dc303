"""The guided search's model of constraints (:mod:`zigzag.sweep.guided`): which positions that run
are kept within a sweep's constraints (latency, area, energy at most a bound).

A variant out of its constraints still ran: its objectives are measured (:class:`Broke` carries
them). The search learns from them twice: the objective model is fitted on every variant that ran,
out or not, and the chance that a position is within the constraints is a logistic regression of
"within" on the logarithms of the objectives of the variants that ran, applied to the position's
predicted objectives (constraints are bounds on what the objectives measure, so a position
predicted slow or large is likely out). The regression holds its weights to a ridge, so a bound
seen between two variants is a slope, not a cliff, at the predictions' uncertainty. That chance
multiplies the search's feasibility estimate by position, which still counts a variant out of
its constraints as one that failed (a constraint on a measure that is not an objective, such as
utilisation, is learnt there only).
"""

from __future__ import annotations

import numpy as np

#: ridge of the constraint regression (on objectives scaled to unit spread)
RIDGE = 1.0
NEWTON_STEPS = 25


class Broke(tuple):
    """The measured objectives of a position that ran but broke a constraint (it counts as one
    that cannot run, and its objectives teach the models)."""


def within_chance(logs: np.ndarray, within: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Chance that positions with the ``predicted`` log-objectives keep the constraints, from
    the ``logs`` of the positions that ran and whether each kept them (``within``)."""
    if not len(logs) or within.all():
        return np.ones(len(predicted))
    if not within.any():
        return np.full(len(predicted), 0.5)
    centre, spread = logs.mean(axis=0), logs.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)

    def features(x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(x), 1)), (x - centre) / spread])

    x, y = features(logs), within.astype(float)
    penalty = RIDGE * np.eye(x.shape[1])
    penalty[0, 0] = 1e-6  # the intercept is free
    coef = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-x @ coef))
        gradient = x.T @ (p - y) + penalty @ coef
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        coef -= np.linalg.solve(hessian, gradient)
    return 1.0 / (1.0 + np.exp(-features(predicted) @ coef))
