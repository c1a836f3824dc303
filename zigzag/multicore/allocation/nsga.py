"""NSGA-II over allocations, seeded: the shared loop (:mod:`zigzag.multiobjective.nsga2`, DEAP's
selection) with this problem's genome (a core per gene), variation operators and schedules as
fitness, evaluated in worker processes.

The loop is DEAP's (mu + lambda) scheme as Stream runs it (docs/models/multi-core.md#allocation-search): ``lambda =
individuals`` offspring per generation, each a crossover of two parents (probability 0.3) or a
mutation of one (0.7); survivors ``mu = individuals // 2`` chosen by DEAP's ``selNSGA2`` from
parents + offspring; DEAP's ``ParetoFront`` keeps every non-dominated allocation ever evaluated.
The budget is Stream's: at most ``individuals * (generations + 1)`` schedules. Differences from
Stream, on purpose:

* all random draws come from one ``random.Random(seed)`` owned by the search (DEAP's own
  operators draw from the global generator, so the variation operators are ours): same seed,
  same front, whatever the number of workers;
* the initial population starts with heuristic allocations (:mod:`.heuristics`: blocks of
  consecutive layers along linked cores), at most three quarters of it, the rest random;
* every child is an allocation not evaluated before (mutated again until it is, a bounded number
  of times), so no schedule of the budget is spent twice;
* crossover is always two-point, position-wise, so every gene keeps one of its own valid cores
  (Stream switches to ``cxOrdered`` above 10 genes, a permutation operator that treats core ids
  as positions); one gene: uniform crossover;
* a mutation is one of: point (each gene with probability 1/length, at least one, to another
  valid core; Stream's only point mutation), segment (a short run of consecutive genes to one
  core), shift (a border between two runs moves by one gene), swap (two genes exchange cores,
  only where valid for both; Stream may swap a core into a gene that cannot use it).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zigzag.multiobjective.nsga2 import Evaluations, Individual, two_chunks_per_worker
from zigzag.multiobjective.nsga2 import nsga2 as nsga2_loop
from zigzag.multicore.allocation.genes import AllocationProblem
from zigzag.multicore.allocation.heuristics import seed_allocations

CROSSOVER_PROBABILITY = 0.3
MUTATION_PROBABILITY = 0.7
SEGMENT_LENGTH = 3  # mean length of a segment mutation
RETRIES = 20  # mutations tried to turn a child into an allocation not yet seen


def _individual(cores=()) -> Individual:
    """One allocation (a core per gene) with its fitness: energy and latency, both minimised."""
    return Individual(cores, objectives=2)


@dataclass(frozen=True)
class FrontPoint:
    """One Pareto-optimal allocation: ``cores`` in gene order."""

    energy: float
    latency: float
    cores: tuple[int, ...]


@dataclass(frozen=True)
class SearchStats:
    """What a search did: generations run, distinct allocations scheduled, seconds spent scheduling."""

    generations: int
    evaluations: int
    seconds: float


# ----- variation ----------------------------------------------------------------------------------


def _crossover(a: list[int], b: list[int], rng: random.Random) -> None:
    """Two-point crossover in place (uniform for one gene): genes keep their position."""
    size = len(a)
    if size < 2:
        if size and rng.random() < 0.5:
            a[0], b[0] = b[0], a[0]
        return
    i, j = sorted(rng.sample(range(size + 1), 2))
    a[i:j], b[i:j] = b[i:j], a[i:j]


def _point(ind: list[int], valid: Sequence[tuple[int, ...]], rng: random.Random) -> None:
    """Each gene with probability 1/length (at least one) to another of its valid cores."""
    size = len(ind)
    picked = [k for k in range(size) if rng.random() < 1 / size] or [rng.randrange(size)]
    for k in picked:
        others = sorted(set(valid[k]) - {ind[k]})
        if others:
            ind[k] = rng.choice(others)


def _segment(ind: list[int], valid: Sequence[tuple[int, ...]], rng: random.Random) -> None:
    """A short run of consecutive genes (mean length SEGMENT_LENGTH) all to one core valid for each."""
    size = len(ind)
    length = min(size, 1 + int(rng.expovariate(1 / SEGMENT_LENGTH)))
    start = rng.randrange(size - length + 1)
    common = sorted(set.intersection(*(set(valid[k]) for k in range(start, start + length))))
    if common:
        core = rng.choice(common)
        ind[start : start + length] = [core] * length


def _shift(ind: list[int], valid: Sequence[tuple[int, ...]], rng: random.Random) -> None:
    """Move one border between two runs of genes on different cores by one gene."""
    borders = [k for k in range(len(ind) - 1) if ind[k] != ind[k + 1]]
    if borders:
        k = rng.choice(borders)
        into, source = (k, k + 1) if rng.random() < 0.5 else (k + 1, k)
        if ind[source] in valid[into]:
            ind[into] = ind[source]


def _swap(ind: list[int], valid: Sequence[tuple[int, ...]], rng: random.Random) -> None:
    """Exchange the cores of two genes, if each core is valid for the other gene."""
    i, j = rng.sample(range(len(ind)), 2)
    if ind[j] in valid[i] and ind[i] in valid[j]:
        ind[i], ind[j] = ind[j], ind[i]


MUTATIONS = (_point, _segment, _shift, _swap)


def _mutate(ind: list[int], valid: Sequence[tuple[int, ...]], rng: random.Random) -> None:
    """One mutation drawn uniformly from :data:`MUTATIONS` (point only for a single gene)."""
    if len(ind) < 2:
        _point(ind, valid, rng)
    else:
        rng.choice(MUTATIONS)(ind, valid, rng)


def _fresh(child: Individual, seen: set, valid, rng: random.Random) -> Individual:
    """``child``, mutated again (at most RETRIES times) while it is an allocation already seen."""
    for _ in range(RETRIES):
        if tuple(child) not in seen:
            break
        _mutate(child, valid, rng)
    seen.add(tuple(child))
    return child


def _offspring(
    population: list[Individual], count: int, valid, seen: set, rng: random.Random
) -> list[Individual]:
    """``count`` children: a crossover (first child kept) or a mutation, each a new allocation
    where :func:`_fresh` finds one."""
    children = []
    for _ in range(count):
        if rng.random() < CROSSOVER_PROBABILITY:
            a, b = (_individual(p) for p in rng.sample(population, 2))
            _crossover(a, b, rng)
            child = a
        else:
            child = _individual(rng.choice(population))
            _mutate(child, valid, rng)
        children.append(_fresh(child, seen, valid, rng))
    return children


def _initial(
    problem: AllocationProblem, individuals: int, valid, seen: set, rng: random.Random
) -> list[Individual]:
    """The heuristic allocations (at most three quarters of the population), then random ones."""
    population = [
        _individual(a) for a in seed_allocations(problem)[: individuals - individuals // 4]
    ]
    seen.update(tuple(p) for p in population)
    while len(population) < individuals:
        child = _individual(rng.choice(cores) for cores in valid)
        for _ in range(RETRIES):
            if tuple(child) not in seen:
                break
            child = _individual(rng.choice(cores) for cores in valid)
        seen.add(tuple(child))
        population.append(child)
    return population


# ----- the search ---------------------------------------------------------------------------------


def nsga2(
    problem: AllocationProblem,
    individuals: int,
    generations: int,
    seed: int = 0,
    workers: int = 1,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
) -> tuple[list[FrontPoint], SearchStats]:
    """The Pareto front (lowest energy first) of a (mu + lambda) NSGA-II search.

    ``individuals`` is the population and the offspring count per generation (``mu`` = half of
    it survives): at most ``individuals * (generations + 1)`` schedules.
    ``progress(generation, front)`` is called after every generation.
    """
    valid = [g.cores for g in problem.genes]
    rng = random.Random(seed)
    begin = time.perf_counter()
    with Evaluations(problem.fitness, workers, two_chunks_per_worker) as evaluate:
        if not valid:
            energy, latency = evaluate([()])[0]
            return [FrontPoint(energy, latency, ())], SearchStats(0, 1, time.perf_counter() - begin)
        if individuals < 2:
            raise ValueError("the allocation search needs at least 2 individuals")
        seen: set[tuple[int, ...]] = set()
        front, _ = nsga2_loop(
            _initial(problem, individuals, valid, seen, rng),
            generations,
            individuals // 2,
            evaluate,
            lambda population: _offspring(population, individuals, valid, seen, rng),
            on_generation=None if progress is None else lambda g, f: progress(g, _points(f)),
        )
        stats = SearchStats(generations, len(evaluate.memo), time.perf_counter() - begin)
    return _points(front), stats


def _points(front) -> list[FrontPoint]:
    points = {tuple(ind): FrontPoint(*ind.fitness.values, tuple(ind)) for ind in front}
    return sorted(points.values(), key=lambda p: (p.energy, p.latency, p.cores))


def print_generation(generation: int, front: list[FrontPoint], stream=sys.stderr) -> None:
    """One progress line: generation, front size, its lowest energy and lowest latency."""
    print(
        f"generation {generation}: front of {len(front)}, min energy {min(p.energy for p in front):.6g} pJ, "
        f"min latency {min(p.latency for p in front):.6g} cycles",
        file=stream,
        flush=True,
    )
