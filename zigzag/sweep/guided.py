"""A surrogate-guided multi-objective search over a grid of positions (one index per axis).

The search spends its budget in batches. The first holds a share of the budget (see
:func:`batch_sizes`) and is space-filling: a stratified design in which every axis' values run
evenly from its first to its last (both extremes of every axis are always tried), the most spread
of several seeded draws. The rest is spent in several rounds, smaller batches when the budget is
small, so the models learn from more than one batch. After each batch it fits, on what it has seen:

* a *feasibility* estimate, the geometric mean of three: the share of feasible points among the
  nearest evaluated positions (inverse-distance weights over the axes scaled to [0, 1]), a logistic
  regression on the axis values, and a conjunctive model (the product over the axes of the chance
  that the position's value is fine: one value too small is enough to fail) whose failures are
  blamed on the values most likely to cause them, so a region that failed (buffers too small, a
  bandwidth below a port's granularity) is not visited again, while a value that was only tried
  beside failing ones is not condemned with them: each value's prior is its neighbours' chance on
  the axis, so a value seen only in failures another axis explains keeps the chance of the values
  around it, and a value between failing ones inherits their doubt; along an axis whose failures
  look monotone (:mod:`zigzag.sweep.monotone`: a buffer too small fails, a larger one does not
  fail again) the values' chances are kept in order, and a position below a failing one on every
  monotone axis (equal on the others) counts as failing, one above a runnable one as running;
* an *objective model* per objective: a regression of the logarithm of the objective on one
  indicator per axis value (each axis' effect, multiplicative in the objective) whose prior holds
  successive values of an axis to a smooth trend (a value not seen yet continues its neighbours';
  a weak pull on the slope, :data:`SLOPE`, so a few evaluations still show an axis' trend),
  corrected by the mean residual of the nearest feasible evaluated positions (what the axes do
  together);

and picks the next batch among the positions not evaluated yet: by expected gain of hypervolume
(the predicted point's hypervolume improvement over the current front, objectives scaled linearly
to the range of the runnable positions seen and of the predictions for the candidates likely to
run, as a front's hypervolume is judged over the whole grid, times the feasibility estimate; any
position with a gain ranks above those predicted dominated, however doubtful it is), one at a
time, each pick added to the front as if its prediction were true so that the batch spreads along
the front; one position per batch of three or more is instead the feasible-looking position
farthest from everything evaluated (the models learn where they know least; a batch of one or two
spends its picks on the models' best guesses). The search switches between model-guided picks and
picks next to the front found (positions one value away on one axis from a front position, any
other value of an axis with no monotone order of failures such as an array shape, ranked by the
same score on predictions lowered by one standard deviation, :data:`OPTIMISM`: the regression's
posterior spread scaled by its measured leave-one-out error, so a neighbour whose axis value the
model has seen on few runnable positions may still extend the front) by how far the models can
be trusted: after a batch in
which a share ``s`` of the picks could not run, that share of the next batch's model picks is
taken next to the front, and the last batch, whose results no model will use, is taken there
whole (an exploitation pass: fronts of hardware grids are connected, so that is where the missing
front points are). With a feasibility screen
(``screen``), each pick is first shown to it and a rejected one replaced by the next
(:mod:`zigzag.sweep.guided_pool`; a pick whose verdict follows by monotonicity from the verdicts
and evaluations so far is not asked about), and its rejections teach the feasibility models as
failures. With a ``screen_charge``, each question costs that share of an evaluation of the budget,
and a pick is asked about only when it is more likely to fail than that. A position that ran
but broke a constraint (``evaluate`` gives its objectives as a
:class:`~zigzag.sweep.guided_constraints.Broke`) counts as one that cannot run, but its objectives
teach the objective model and a model of the constraints, whose chance multiplies the
feasibility estimate (:mod:`zigzag.sweep.guided_constraints`). Every random choice comes from
``random.Random(seed)``, so a seed gives the same positions whatever evaluates them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np

from zigzag.sweep import monotone
from zigzag.sweep.guided_constraints import Broke, within_chance
from zigzag.sweep.guided_pool import (
    INFEASIBLE,
    MIN_FEASIBLE,
    _front,
    _gains,
    _score,
    _allowed,
    _candidates,
    _farthest,
    _front_neighbours,
    _Gate,
    _grid_size,
    _known_failing,
    _implied_runs,
    _known_passing,
    initial_design,
)

NEIGHBOURS = 5
#: the objective model's prior: successive values of an axis follow a smooth trend (a penalty on
#: the second and, weaker, the first difference of their effects), plus a weak shrinkage
SMOOTHING = 1.0
#: the first difference's coefficient in that penalty (0.5, a quarter of the weight, shrank an
#: axis' trend to nothing with a few evaluations: 0.1, a hundredth)
SLOPE = 0.1
RIDGE = 0.01
#: share of the budget spent on the space-filling first batch (at least one more than the axes)
INITIAL_SHARE = 0.4
#: model rounds at least after the first batch: a small budget is spent in smaller batches
ROUNDS = 4
LOGISTIC_RIDGE = 0.03
EM_STEPS = 50  # expectation-maximisation steps of the conjunctive feasibility model
#: batches smaller than this spend no pick on exploration (too few picks left to learn from it)
EXPLORE_BATCH = 3
#: with questions to the screen charged to the budget, at most this many per pick of a batch (a
#: region the screen rejects is then learnt by the models, not walked question by question)
QUESTIONS = 2
#: the front's neighbours are judged on their predictions lowered by this many posterior standard
#: deviations (one: optimism where the model knows little, not a tuned value)
OPTIMISM = 1.0


class _Models:
    """Feasibility and objective models fitted on the evaluated positions."""

    def __init__(
        self,
        sizes: Sequence[int],
        positions: list[tuple[int, ...]],
        values: np.ndarray,
        measured: dict | None = None,
    ):
        self.sizes = sizes
        self.scale = np.array([max(n - 1, 1) for n in sizes], dtype=float)
        self.offsets = np.cumsum([0, *sizes[:-1]])
        self.coords = np.array(positions, dtype=float) / self.scale
        self.feasible = np.all(values < INFEASIBLE, axis=1)  # ran within the constraints
        # ran, within the constraints or not (``measured``: the objectives of those out of them):
        # the objective model learns from all of them
        measured = measured or {}
        self.ran = self.feasible | np.array([p in measured for p in positions], dtype=bool)
        self.signs = monotone.directions(np.array(positions, dtype=int), self.feasible)
        logs = np.log(np.maximum(values[self.feasible], 1e-300))
        self.lower = logs.min(axis=0) if len(logs) else np.zeros(values.shape[1])
        self.upper = logs.max(axis=0) if len(logs) else np.ones(values.shape[1])
        ran = np.array([measured.get(p, v) for p, v in zip(positions, values)]).reshape(
            values.shape
        )
        self.ran_logs = np.log(np.maximum(ran[self.ran], 1e-300))
        features = self._features(np.array(positions)[self.ran]) if len(logs) else None
        if features is not None:
            gram = features.T @ features + self._prior(features.shape[1])
            self.weights = np.linalg.solve(gram, features.T @ self.ran_logs)
            self.residual = self.ran_logs - features @ self.weights
            self.inverse = np.linalg.inv(gram)
            leverage = np.einsum("ij,jk,ik->i", features, self.inverse, features)
            loo = self.residual / np.maximum(1.0 - leverage, 1e-6)[:, None]
            # the error of a prediction, measured: each variant's leave-one-out residual
            self.noise = np.sqrt(np.mean(loo**2, axis=0))
        self.ran_coords = self.coords[self.ran]

    def _prior(self, width: int) -> np.ndarray:
        """The objective model's penalty: the squared second difference of the effects of each axis'
        successive values (a trend: a value seen on no runnable position continues the trend of
        the values around it, the far end of an axis included) and, at :data:`SLOPE` squared of its
        weight, the squared first difference (neighbouring values have similar effects), plus a
        weak ridge."""
        differences = np.zeros((sum(max(2 * n - 3, 0) for n in self.sizes), width))
        row = 0
        for offset, n in zip(self.offsets, self.sizes):
            for i in range(n - 1):
                differences[row, offset + i : offset + i + 2] = (SLOPE, -SLOPE)
                row += 1
            for i in range(n - 2):
                differences[row, offset + i : offset + i + 3] = (1.0, -2.0, 1.0)
                row += 1
        return SMOOTHING * differences.T @ differences + RIDGE * np.eye(width)

    def _features(self, positions: np.ndarray) -> np.ndarray:
        onehot = np.zeros((len(positions), sum(self.sizes) + 1))
        onehot[:, -1] = 1.0
        for axis, offset in enumerate(self.offsets):
            onehot[np.arange(len(positions)), offset + positions[:, axis]] = 1.0
        return onehot

    def _nearest(
        self, coords: np.ndarray, among: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        distance = np.abs(coords[:, None, :] - among[None, :, :]).sum(axis=2)
        k = min(k, among.shape[0])
        index = np.argsort(distance, axis=1, kind="stable")[:, :k]
        return index, np.take_along_axis(distance, index, axis=1)

    def feasibility(self, positions: np.ndarray) -> np.ndarray:
        """Probability that each position runs: a logistic regression on the axis values (which
        value of which axis fails), averaged with the share among the nearest evaluated positions."""
        coords = positions / self.scale
        index, distance = self._nearest(coords, self.coords, NEIGHBOURS)
        weight = 1.0 / (distance + 0.05)
        nearest = (weight * self.feasible[index]).sum(axis=1) / weight.sum(axis=1)
        if self.feasible.all() or not self.feasible.any():
            return nearest
        logistic = 1.0 / (1.0 + np.exp(-self._features(positions) @ self._logistic()))
        return np.cbrt(
            nearest * logistic * self._conjunctive(positions)
        )  # each model's doubt weighs

    def _conjunctive(self, positions: np.ndarray) -> np.ndarray:
        """Probability to run as the product over the axes of the chance that the position's value
        of that axis is fine ("one value too small is enough to fail"), fitted by expectation-
        maximisation: a failure is blamed on each of its values in proportion to how suspect the
        value is, so a value tried only beside values that fail is not condemned by them."""
        if not hasattr(self, "_ok"):
            seen = np.rint(self.coords * self.scale).astype(int)
            failed = seen[~self.feasible]
            ok = [np.full(n, 0.5) for n in self.sizes]
            runs = [
                np.bincount(seen[self.feasible][:, a], minlength=n)
                for a, n in enumerate(self.sizes)
            ]
            tried = [
                runs[a] + np.bincount(failed[:, a], minlength=n) + 1.0
                for a, n in enumerate(self.sizes)
            ]
            for _ in range(EM_STEPS):
                chance = np.stack([ok[a][failed[:, a]] for a in range(len(self.sizes))], axis=1)
                total = np.prod(chance, axis=1)
                blame_free = []  # P(value fine | the position failed), per failure and axis
                for a in range(len(self.sizes)):
                    others = total / np.maximum(chance[:, a], 1e-12)
                    blame_free.append(chance[:, a] * (1 - others) / np.maximum(1 - total, 1e-12))
                ok = [  # one pseudo-observation at the neighbouring values' chance (the prior)
                    (
                        runs[a]
                        + np.bincount(failed[:, a], weights=blame_free[a], minlength=n)
                        + _neighbour_mean(ok[a])
                    )
                    / (runs[a] + np.bincount(failed[:, a], minlength=n) + 1.0)
                    for a, n in enumerate(self.sizes)
                ]
                ok = [  # an axis along which failure is monotone keeps its chances in order
                    monotone.isotonic(ok[a], weight, self.signs[a])
                    for a, weight in enumerate(tried)
                ]
            self._ok = ok
        return np.prod([self._ok[a][positions[:, a]] for a in range(len(self.sizes))], axis=0)

    def _logistic(self) -> np.ndarray:
        if not hasattr(self, "_coef"):
            x = self._features(np.rint(self.coords * self.scale).astype(int))
            y = self.feasible.astype(float)
            coef = np.zeros(x.shape[1])
            for _ in range(25):  # Newton steps on the L2-penalised log-likelihood
                p = 1.0 / (1.0 + np.exp(-x @ coef))
                gradient = x.T @ (p - y) + LOGISTIC_RIDGE * coef
                hessian = (x * (p * (1 - p))[:, None]).T @ x + LOGISTIC_RIDGE * np.eye(x.shape[1])
                coef -= np.linalg.solve(hessian, gradient)
            self._coef = coef
        return self._coef

    def within(self, positions: np.ndarray) -> np.ndarray:
        """Chance that each position, if it runs, keeps the constraints (1 when no variant that
        ran broke one; :mod:`zigzag.sweep.guided_constraints`)."""
        if self.ran.sum() == self.feasible.sum() or not self.feasible.any():
            return np.ones(len(positions))
        return within_chance(self.ran_logs, self.feasible[self.ran], self.predict(positions))

    def predict(self, positions: np.ndarray) -> np.ndarray:
        """Predicted logarithms of the objectives (:meth:`linear` scales them)."""
        base = self._features(positions) @ self.weights
        index, distance = self._nearest(positions / self.scale, self.ran_coords, 3)
        weight = 1.0 / (distance + 0.05)
        correction = (weight[:, :, None] * self.residual[index]).sum(axis=1) / weight.sum(axis=1)[
            :, None
        ]
        return base + correction

    def spread(self, positions: np.ndarray) -> np.ndarray:
        """Standard deviation of each predicted log-objective: the regression's posterior spread
        at the position (large for axis values seen on few runnable variants), scaled by the
        model's measured leave-one-out error."""
        features = self._features(positions)
        variance = np.einsum("ij,jk,ik->i", features, self.inverse, features)
        return np.sqrt(np.maximum(variance, 0.0))[:, None] * self.noise[None, :]

    def widen(self, logs: np.ndarray) -> None:
        """Stretch the scale (:meth:`scaled`) to span the predicted ``logs`` too: with few runnable
        positions seen, their range is a sliver of the grid's, and predictions beyond it would
        count many times that range in a gain; the grid's range, on which a front is judged, is
        better estimated by the predictions for the positions likely to run."""
        if len(logs):
            self.lower = np.minimum(self.lower, logs.min(axis=0))
            self.upper = np.maximum(self.upper, logs.max(axis=0))

    def scaled(self, values: np.ndarray) -> np.ndarray:
        """Objectives scaled linearly to [0, 1] between the best and worst runnable values seen
        (and predicted, after :meth:`widen`): the scale on which a front's hypervolume is judged,
        so the gains are the same measure."""
        return self.linear(np.log(np.maximum(values, 1e-300)))

    def linear(self, logs: np.ndarray) -> np.ndarray:
        low, high = np.exp(self.lower), np.exp(self.upper)
        return (np.exp(logs) - low) / np.where(high > low, high - low, 1.0)


def _neighbour_mean(chances: np.ndarray) -> np.ndarray:
    """Each value's prior chance to be fine: the mean of its neighbours' on the axis (an axis of
    one value keeps its own)."""
    if len(chances) < 2:
        return chances
    padded = np.concatenate([chances[1:2], chances, chances[-2:-1]])
    return (padded[:-2] + padded[2:]) / 2


def guided_search(
    sizes: Sequence[int],
    evaluate: Callable[[list[tuple[int, ...]]], list[Sequence[float]]],
    budget: int,
    batch: int,
    seed: int,
    screen: Callable[[tuple[int, ...]], bool] | None = None,
    screen_charge: float = 0.0,
) -> dict[tuple[int, ...], tuple[float, ...]]:
    """Evaluate at most ``budget`` positions of the grid ``sizes`` in batches of ``batch``;
    ``evaluate`` gives each position's objectives (all minimised; ``INFEASIBLE`` when it cannot
    run). ``screen(position)``: False when the position is known not to run (a feasibility
    screen, :mod:`zigzag.sweep.guided_screen`); asked about each position about to be picked,
    one it rejects is replaced by the next pick and never evaluated, its failure taught to the
    feasibility models. ``screen_charge``: what one question to the screen costs, in
    evaluations of the budget (the budget then holds the evaluations and the screening).
    Returns every evaluated position with its objectives, in evaluation order."""
    rng = random.Random(seed)
    gate = _Gate(screen)
    grid = _grid_size(sizes)
    budget = min(budget, grid)
    seen: dict[tuple[int, ...], tuple[float, ...]] = {}
    measured: dict[tuple[int, ...], tuple[float, ...]] = {}  # out of the constraints

    def run(positions: list[tuple[int, ...]]) -> None:
        for position, values in zip(positions, evaluate(positions)):
            seen[position] = tuple(float(v) for v in values)
            if isinstance(values, Broke):
                measured[position] = seen[position]
                seen[position] = (INFEASIBLE,) * len(values)

    def remaining(extra: float = 0.0) -> int:
        """Evaluations the budget still holds, after the screening paid so far (and ``extra``)."""
        return math.floor(budget - len(seen) - screen_charge * gate.asked - extra + 1e-9)

    first, step = batch_sizes(len(sizes), budget, batch)
    design = initial_design(sizes, first, rng)
    # a screen that rejects the whole grid: one variant evaluated all the same, to tell why
    if screen_charge > 0:  # charged questions: at most QUESTIONS per pick of each batch
        gate.limit = QUESTIONS * len(design)
    allowed = _allowed(design, sizes, gate, rng)
    run(allowed[: max(remaining(), 1)] if allowed else design[:1])
    trust = 1.0  # share of the last batch's picks that could run
    while remaining() >= 1:
        count = min(step, remaining())
        # evaluations after this batch (its screening counted at one question per pick)
        left = remaining(count * (1 + screen_charge))
        # the last batch next to the front whole; before it, as many as the models' misses
        local = count if left < 1 else round((1.0 - trust) * (count - 1))
        explore = left >= 1 and count >= EXPLORE_BATCH
        if screen_charge > 0:
            gate.limit = gate.asked + QUESTIONS * count
        picks = _next_batch(
            sizes,
            seen,
            count,
            rng,
            explore=explore,
            local=local,
            gate=gate,
            measured=measured,
            charge=screen_charge,
        )
        picks = picks[: max(remaining(), 0)]  # what the budget holds once they are screened
        if not picks:
            if gate.exhausted:  # this batch's questions all rejected: the next batch asks again
                continue
            break
        run(picks)
        trust = sum(seen[p][0] < INFEASIBLE for p in picks) / len(picks)
    return seen


def batch_sizes(axes: int, budget: int, batch: int) -> tuple[int, int]:
    """The first batch's size and the later batches' (each at most ``batch``): the first holds
    :data:`INITIAL_SHARE` of the budget and at least one more position than there are ``axes``, so
    every axis' effect can be estimated; the rest is spent in :data:`ROUNDS` batches or more, so
    that the models learn from several rounds even when the budget is a few batches."""
    first = min(batch, budget, max(axes + 1, round(INITIAL_SHARE * budget)))
    rest = budget - first
    return first, max(1, min(batch, -(-rest // ROUNDS)))


def _next_batch(
    sizes: Sequence[int],
    seen: dict,
    count: int,
    rng: random.Random,
    *,
    explore: bool = True,
    local: int = 0,
    gate: _Gate | None = None,
    measured: dict | None = None,
    charge: float = 0.0,
) -> list[tuple[int, ...]]:
    """The next ``count`` positions: by expected hypervolume gain, the first ``local`` of them
    among the neighbours of the front found (all of them when ``local`` is ``count``), plus
    (unless it is the last batch, whose results no model will use) the feasible-looking position
    farthest from all. A pick the ``gate``'s screen rejects is replaced by the next; with a
    ``charge`` per question, a pick is shown to the screen only when its chance to fail is
    larger than the charge (a failed evaluation costs one, a question the charge)."""
    gate = gate if gate is not None else _Gate(None)
    positions = list(seen)
    values = np.array([seen[p] for p in positions])
    pool = _candidates(sizes, seen, rng, gate.rejected)
    near = np.zeros(len(pool), dtype=bool)
    # the screen's rejections are failures known for free: the feasibility models learn them too
    rejected = sorted(gate.rejected - seen.keys())
    told = positions + rejected
    told_values = np.vstack([values, np.full((len(rejected), values.shape[1]), INFEASIBLE)])
    models = _Models(sizes, told, told_values, measured)
    if local:  # picks next to the front found (one value away on one axis from a front position)
        neighbours = {
            tuple(p) for p in _front_neighbours(sizes, positions, values, seen, models.signs)
        } - gate.rejected
        if local >= count and len(neighbours) >= count:
            pool = np.array(sorted(neighbours), dtype=int).reshape(-1, len(sizes))
        near = np.array([tuple(p) in neighbours for p in pool], dtype=bool)
    if not len(pool):
        return []
    runs = _implied_runs(models, told, pool)
    feasible = runs * models.within(pool)
    # rejected by the screen, or known to be (not asked)
    blocked = _known_failing(gate, seen, measured or {}, pool)
    certain = _known_passing(gate, seen, measured or {}, pool)  # not asked either

    unasked = certain | ((charge > 0) & (1.0 - runs <= charge))  # evaluated without a question

    def admitted(i: int) -> bool:
        if unasked[i]:
            return True
        if gate.exhausted:  # no question left: only the positions needing none remain
            np.logical_or(blocked, ~unasked, out=blocked)
            return False
        blocked[i] = not gate.passes(tuple(int(v) for v in pool[i]))
        return not blocked[i]

    if models.feasible.sum() < 2:  # nothing to model yet: spread out where failure is not known
        chosen: list[int] = []
        while len(chosen) < count:
            found = _farthest(models, pool, feasible, 1, index=True, skip=blocked, chosen=chosen)
            if not found:
                break
            if admitted(found[0]):
                chosen.append(found[0])
        return [tuple(int(v) for v in pool[i]) for i in chosen]
    logs = models.predict(pool)
    models.widen(logs[feasible >= MIN_FEASIBLE])  # the scale of the grid, as far as it is known
    predicted = models.linear(logs)
    if local:  # next to the front, a value the model knows little about may still add to it
        optimistic = models.linear(logs - OPTIMISM * models.spread(pool))
        predicted = np.where(near[:, None], optimistic, predicted)
    front = _front(models.scaled(values[models.feasible[: len(values)]]))
    reference = np.full(values.shape[1], 1.1)
    picks: list[int] = []
    explore_at = None
    while explore and count > 1 and explore_at is None:
        found = _farthest(models, pool, feasible, 1, index=True, skip=blocked)
        if not found:
            break
        explore_at = found[0] if admitted(found[0]) else None
    explore = explore_at
    while len(picks) < count - (explore is not None):
        gains = _gains(predicted, front, reference)
        score = _score(gains, feasible)
        score[feasible <= 0] -= 1e3  # must fail: only when nothing else is left
        score[picks] = -np.inf
        if len(picks) < local and near[score > -np.inf].any():
            score[~near] = -np.inf
        if explore is not None:
            score[explore] = -np.inf
        score[blocked] = -np.inf
        if not np.isfinite(score).any():
            break
        best = int(np.argmax(score))
        if not admitted(best):
            continue
        picks.append(best)
        if gains[best] > 0:
            front = _front(np.vstack([front, predicted[best]]))
    if explore is not None:
        picks.append(explore)
    return [tuple(int(v) for v in pool[i]) for i in picks]
