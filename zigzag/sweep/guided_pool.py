"""Where the guided search's picks come from (:mod:`zigzag.sweep.guided`): the first batch's
space-filling design, the candidate pool, the neighbours of the front found, the positions
farthest from all evaluated ones, the gate of the feasibility screen
(:mod:`zigzag.sweep.guided_screen`), which replaces a pick it rejects, and the picks' rank
(predicted hypervolume gain weighed by the chance to run)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence

import numpy as np

from zigzag.multiobjective.pareto import non_dominated
from zigzag.sweep import monotone
from zigzag.sweep.hypervolume import hypervolume

#: objectives of a position that cannot run (any objective at or above it counts as infeasible)
INFEASIBLE = 1e299
#: candidates scored per pick when the grid is too large to score whole
POOL = 4000
DESIGNS = 64  # space-filling draws for the first batch
RISK = 3  # a gain is weighed by (probability to run) ** RISK: an evaluation that fails is lost
#: positions less likely than this to run are picked only when nothing else is left
MIN_FEASIBLE = 0.5


def _stratified(sizes: Sequence[int], count: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``count`` positions, each axis' values spread evenly over them from its first value to its
    last (a Latin-hypercube-like draw that always holds both extremes of every axis)."""
    columns = []
    for n in sizes:
        if count > 1:
            cells = [round(i * (n - 1) / (count - 1)) for i in range(count)]
        else:
            cells = [rng.randrange(n)]
        rng.shuffle(cells)
        columns.append(cells)
    return [tuple(col[i] for col in columns) for i in range(count)]


def _spread(points: np.ndarray) -> float:
    if len(points) < 2:
        return 0.0
    d = np.abs(points[:, None, :] - points[None, :, :]).sum(axis=2)
    return float(d[np.triu_indices(len(points), 1)].min())


def initial_design(sizes: Sequence[int], count: int, rng: random.Random) -> list[tuple[int, ...]]:
    """The most spread (largest smallest distance) of :data:`DESIGNS` stratified draws, duplicates removed."""
    scale = np.array([max(n - 1, 1) for n in sizes], dtype=float)
    best, best_spread = None, -1.0
    for _ in range(DESIGNS):
        design = list(dict.fromkeys(_stratified(sizes, count, rng)))
        spread = _spread(np.array(design, dtype=float) / scale)
        if len(design) > (len(best) if best else 0) or (
            best and len(design) == len(best) and spread > best_spread
        ):
            best, best_spread = design, spread
    return best or []


def _grid_size(sizes: Sequence[int]) -> int:
    return math.prod(sizes)


class _Gate:
    """The screen's verdicts asked so far (``rejected``: the positions it said cannot run;
    ``asked``: how many questions were put to it; past ``limit`` questions, a position not yet
    judged is refused without asking)."""

    def __init__(self, screen: Callable[[tuple[int, ...]], bool] | None):
        self.screen = screen
        self.rejected: set[tuple[int, ...]] = set()
        self.passed: set[tuple[int, ...]] = set()
        self.asked = 0  # questions put to the screen
        self.limit: int | None = None  # no more questions than this (the position then fails)

    @property
    def exhausted(self) -> bool:
        """Whether no question is left (``limit`` reached)."""
        return self.limit is not None and self.asked >= self.limit

    def passes(self, position: tuple[int, ...]) -> bool:
        if self.screen is None or position in self.passed:
            return True
        if position in self.rejected:
            return False
        if self.exhausted:
            return False  # not asked, so not known to fail either
        self.asked += 1
        if self.screen(position):
            self.passed.add(position)
            return True
        self.rejected.add(position)
        return False


def _known_failing(gate: _Gate, seen: dict, measured: dict, pool: np.ndarray) -> np.ndarray:
    """Which positions of ``pool`` must fail by monotonicity (:mod:`zigzag.sweep.monotone`)
    learnt from the screen's verdicts and the evaluations: the screen would reject them, so it is
    not asked (a failure that is monotone, such as a buffer too small, is told once per region)."""
    if not gate.rejected:
        return np.zeros(len(pool), dtype=bool)
    return _known(gate, seen, measured, pool)[0]


def _known_passing(gate: _Gate, seen: dict, measured: dict, pool: np.ndarray) -> np.ndarray:
    """Which positions of ``pool`` the screen must pass by the same monotonicity (no smaller on
    every monotone axis than one it passed or that ran): it is not asked about them either."""
    return _known(gate, seen, measured, pool)[1]


def _known(gate: _Gate, seen: dict, measured: dict, pool: np.ndarray) -> tuple:
    none = np.zeros(len(pool), dtype=bool)
    if gate.screen is None or not len(pool):
        return none, none.copy()
    known = {p: True for p in gate.passed}
    known.update({p: False for p in gate.rejected})
    known.update({p: v[0] < INFEASIBLE or p in measured for p, v in seen.items()})
    if not known:
        return none, none.copy()
    positions = np.array(list(known), dtype=int)
    ran = np.array(list(known.values()), dtype=bool)
    return monotone.implied(pool, positions, ran, monotone.directions(positions, ran))


def _allowed(
    design: list[tuple[int, ...]], sizes: Sequence[int], gate: _Gate, rng: random.Random
) -> list[tuple[int, ...]]:
    """The design with each position the screen rejects replaced by the nearest one it passes,
    not taken yet (scaled L1 distance, the first in grid order on a tie), skipping those its
    verdicts so far show must fail."""
    if gate.screen is None:
        return design
    scale = np.array([max(n - 1, 1) for n in sizes], dtype=float)
    taken: set[tuple[int, ...]] = set()
    chosen = []
    pool = None
    for p in design:
        if p in taken or not gate.passes(p):
            if pool is None:
                pool = _candidates(sizes, {}, rng)
            distance = np.abs((pool - np.array(p)) / scale).sum(axis=1)
            known = _known_failing(gate, {}, {}, pool)  # not asked
            for i in np.argsort(distance, kind="stable"):
                q = tuple(int(v) for v in pool[i])
                if q not in taken and not known[i] and gate.passes(q):
                    p = q
                    break
            else:
                continue
        taken.add(p)
        chosen.append(p)
    return chosen


def _implied_feasibility(models, positions: list, pool: np.ndarray) -> np.ndarray:
    """:func:`_implied_runs` times the chance to keep the constraints."""
    return _implied_runs(models, positions, pool) * models.within(pool)


def _implied_runs(models, positions: list, pool: np.ndarray) -> np.ndarray:
    """The models' chance to run, set to 0 for positions that must fail and to 1 for those that
    must run by the monotonicity seen (:mod:`zigzag.sweep.monotone`)."""
    feasible = models.feasibility(pool)
    seen = np.array(positions, dtype=int).reshape(len(positions), -1)
    must_fail, must_run = monotone.implied(pool, seen, models.feasible, models.signs)
    return np.where(must_run, 1.0, np.where(must_fail, 0.0, feasible))


def _candidates(
    sizes: Sequence[int], seen: dict, rng: random.Random, excluded: frozenset = frozenset()
) -> np.ndarray:
    if _grid_size(sizes) <= 4 * POOL:
        pool = [
            p
            for p in itertools.product(*(range(n) for n in sizes))
            if p not in seen and p not in excluded
        ]
    else:
        found: set[tuple[int, ...]] = set()
        while len(found) < min(POOL, _grid_size(sizes) - len(seen) - len(excluded)):
            p = tuple(rng.randrange(n) for n in sizes)
            if p not in seen and p not in excluded:
                found.add(p)
        pool = sorted(found)
    return np.array(pool, dtype=int).reshape(-1, len(sizes))


def _front_neighbours(
    sizes: Sequence[int],
    positions: list,
    values: np.ndarray,
    seen: dict,
    signs: Sequence[int] | None = None,
) -> np.ndarray:
    """Positions one step (one axis, one value) from a position of the current front, not
    evaluated; along an axis whose ``signs`` entry is 0 (no monotone order of failures, such as
    an array shape) every other value counts as one step."""
    feasible = np.all(values < INFEASIBLE, axis=1)
    ok = values[feasible]
    front = [
        p
        for p, keep in zip((q for q, f in zip(positions, feasible) if f), non_dominated(ok))
        if keep
    ]
    near = set()
    for p in front:
        for axis, n in enumerate(sizes):
            steps = (-1, 1) if signs is None or signs[axis] else range(-p[axis], n - p[axis])
            for step in steps:
                if step and 0 <= p[axis] + step < n:
                    q = p[:axis] + (p[axis] + step,) + p[axis + 1 :]
                    if q not in seen:
                        near.add(q)
    return np.array(sorted(near), dtype=int).reshape(-1, len(sizes))


def _farthest(
    models,
    pool: np.ndarray,
    feasible: np.ndarray,
    count: int,
    index: bool = False,
    skip: np.ndarray | None = None,
    chosen: Sequence[int] = (),
) -> list:
    """Positions farthest from every evaluated one (``models``: the fitted models, their
    ``coords`` and ``scale``) and from the ``chosen`` ones, among those that look feasible,
    ``skip`` left out."""
    coords = pool / models.scale
    picked = list(chosen)
    chosen = []
    reference = np.vstack([models.coords, coords[picked]]) if picked else models.coords
    for _ in range(min(count, len(pool))):
        distance = np.abs(coords[:, None, :] - reference[None, :, :]).sum(axis=2).min(axis=1)
        score = distance * np.where(feasible >= 0.5, 1.0, np.where(feasible > 0, 0.1, 1e-3))
        score[picked + chosen] = -np.inf
        if skip is not None:
            score[skip] = -np.inf
        if not np.isfinite(score).any():
            break
        best = int(np.argmax(score))
        chosen.append(best)
        reference = np.vstack([reference, coords[best]])
    return chosen if index else [tuple(int(v) for v in pool[i]) for i in chosen]


# ----- ranking ------------------------------------------------------------------------------------


def _front(points: np.ndarray) -> np.ndarray:
    return points[non_dominated(points)]


def _volume(points: np.ndarray, reference: np.ndarray) -> float:
    return hypervolume(points, reference)


def _gains(predicted: np.ndarray, front: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Hypervolume improvement of each predicted point over ``front`` (0 when dominated), and,
    for dominated ones, minus the distance by which they miss the front (to rank them)."""
    base = _volume(front, reference) if len(front) else 0.0
    gains = np.empty(len(predicted))
    for i, p in enumerate(predicted):
        if len(front) and np.any(np.all(front <= p, axis=1)):
            gains[i] = -float(np.min(np.max(p - front, axis=1)))
        else:
            gains[i] = (
                _volume(np.vstack([front, p]) if len(front) else p[None, :], reference) - base
            )
    return gains


def _score(gains: np.ndarray, feasible: np.ndarray) -> np.ndarray:
    """A pick's rank: a gain counts as much as the position is likely to run (to the power
    :data:`RISK`); any position with a gain ranks above those predicted dominated (which can add
    nothing to the front), among which a likely failure ranks last."""
    return np.where(gains > 0, feasible**RISK * gains, gains - 10.0 * (feasible < MIN_FEASIBLE))
