"""The shared NSGA-II loop and its memoised evaluations (zigzag.multiobjective.nsga2), on a toy
problem: two objectives of an integer vector whose exact front is known."""

from __future__ import annotations

import itertools
import random

from zigzag.multiobjective.nsga2 import Evaluations, Individual, nsga2, two_chunks_per_worker
from zigzag.multiobjective.pareto import non_dominated

SIZE, VALUES = 3, 4


def toy(genome) -> tuple[float, float]:
    """Sum of the genes and sum of their distances to the top value: a trade-off on every gene."""
    return float(sum(genome)), float(sum(VALUES - 1 - g for g in genome) ** 2)


def run(seed: int, workers: int = 1, generations: int = 6, exhausted=None):
    rng = random.Random(seed)
    seen = set()

    def breed(population):
        children = []
        for _ in range(len(population)):
            child = Individual(rng.choice(population), objectives=2)
            child[rng.randrange(SIZE)] = rng.randrange(VALUES)
            seen.add(tuple(child))
            children.append(child)
        return children

    start = [
        Individual([rng.randrange(VALUES) for _ in range(SIZE)], objectives=2) for _ in range(6)
    ]
    generations_seen = []
    with Evaluations(toy, workers, two_chunks_per_worker) as evaluations:
        front, stopped = nsga2(
            start,
            generations,
            6,
            evaluations,
            breed,
            exhausted=exhausted,
            on_generation=lambda g, f: generations_seen.append((g, len(f))),
        )
        memo = dict(evaluations.memo)
    return (
        sorted((tuple(ind), ind.fitness.values) for ind in front),
        stopped,
        generations_seen,
        memo,
    )


def test_front_holds_every_non_dominated_genome_evaluated():
    front, stopped, progress, memo = run(seed=1)
    assert stopped == 6 and [g for g, _ in progress] == list(range(7))
    genomes = list(memo)
    keep = non_dominated([memo[g] for g in genomes])
    best_values = {memo[g] for g, k in zip(genomes, keep) if k}
    assert {values for _, values in front} == best_values  # the front of everything evaluated
    everything = [toy(g) for g in itertools.product(range(VALUES), repeat=SIZE)]
    assert all(v in everything for v in best_values)


def test_seeded_and_the_same_with_two_workers():
    assert run(seed=3) == run(seed=3) == run(seed=3, workers=2)


def test_exhausted_stops_at_the_start_of_a_generation():
    calls = []
    front, stopped, progress, _ = run(seed=2, exhausted=lambda: calls.append(1) or len(calls) > 2)
    assert stopped == 3 and [g for g, _ in progress] == [0, 1, 2]


def test_evaluations_compute_each_genome_once():
    computed = []

    def counted(genome):
        computed.append(genome)
        return (float(sum(genome)),)

    with Evaluations(counted) as evaluations:
        assert evaluations([(1, 2), [1, 2], (0, 0)]) == [(3.0,), (3.0,), (0.0,)]
        assert evaluations([(0, 0), (2, 2)]) == [(0.0,), (4.0,)]
    assert computed == [(1, 2), (0, 0), (2, 2)] and len(evaluations.memo) == 3


def test_individual_fitness_is_minimised():
    a, b = Individual([0], objectives=3), Individual([1], objectives=3)
    a.fitness.values, b.fitness.values = (1, 2, 3), (1, 2, 4)
    assert a.fitness.dominates(b.fitness) and not b.fitness.dominates(a.fitness)
    assert len(Individual([0], objectives=2).fitness.weights) == 2
