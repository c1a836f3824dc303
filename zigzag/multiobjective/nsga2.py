"""The NSGA-II loop every genetic search runs, with the problem's parts plugged in.

A (mu + lambda) scheme: the first population is evaluated, then each generation the problem's
``breed`` makes children from the population, they are evaluated, and ``survivors`` of parents +
children are kept by DEAP's ``selNSGA2``; DEAP's ``ParetoFront`` keeps every non-dominated
individual ever evaluated. The genome, the variation operators and their random generator stay
with the problem; :class:`Evaluations` computes the objectives of genomes once each, in this
process or in worker processes, in a fixed order (results do not depend on the worker count).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ProcessPoolExecutor

from deap import base, tools

from zigzag.interrupts import ignore_interrupts


@functools.cache
def _minimised(objectives: int) -> type:
    return type(f"Minimised{objectives}", (base.Fitness,), {"weights": (-1.0,) * objectives})


class Individual(list):
    """A genome (a list of genes) with its DEAP fitness: ``objectives`` values, all minimised."""

    def __init__(self, genes=(), objectives: int = 2):
        super().__init__(genes)
        self.fitness = _minimised(objectives)()


# ----- evaluations --------------------------------------------------------------------------------

_WORKER_FUNCTION: Callable | None = None


def _start_worker(function: Callable) -> None:
    global _WORKER_FUNCTION
    ignore_interrupts()
    _WORKER_FUNCTION = function


def _in_worker(genome):
    return _WORKER_FUNCTION(genome)


def one_per_task(todo: int, workers: int) -> int:
    """Pool chunk size: one genome per task (long evaluations of uneven length)."""
    return 1


def two_chunks_per_worker(todo: int, workers: int) -> int:
    """Pool chunk size: the genomes in about two chunks per worker (many short evaluations)."""
    return max(1, math.ceil(todo / (2 * workers)))


class Evaluations:
    """``function(genome)`` of genomes (tuples), memoised in ``memo``, computed in this process
    (``workers <= 1``) or in a pool of worker processes, each given ``function`` once (it must
    pickle). ``chunk(todo, workers)``: the pool's chunk size. Use as a context manager."""

    def __init__(
        self,
        function: Callable[[tuple], object],
        workers: int = 1,
        chunk: Callable[[int, int], int] = one_per_task,
    ):
        self.function, self.workers, self.chunk = function, max(1, int(workers)), chunk
        self.memo: dict[Hashable, object] = {}
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> "Evaluations":
        if self.workers > 1:
            self._pool = ProcessPoolExecutor(
                self.workers, initializer=_start_worker, initargs=(self.function,)
            )
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=exc[0] is not None)
            self._pool = None

    def __call__(self, genomes: Sequence[Sequence]) -> list:
        """The values of ``genomes``, in order (each distinct genome computed once, ever)."""
        todo = list(dict.fromkeys(tuple(g) for g in genomes if tuple(g) not in self.memo))
        if todo:
            if self._pool is None:
                values = [self.function(g) for g in todo]
            else:
                values = list(
                    self._pool.map(_in_worker, todo, chunksize=self.chunk(len(todo), self.workers))
                )
            self.memo.update(zip(todo, values))
        return [self.memo[tuple(g)] for g in genomes]


# ----- the loop -----------------------------------------------------------------------------------


def nsga2(
    population: list[Individual],
    generations: int,
    survivors: int,
    evaluate: Callable[[list[Individual]], Sequence[tuple[float, ...]]],
    breed: Callable[[list[Individual]], list[Individual]],
    *,
    exhausted: Callable[[], bool] | None = None,
    on_generation: Callable[[int, tools.ParetoFront], None] | None = None,
) -> tuple[tools.ParetoFront, int]:
    """Run the loop from ``population``; returns the front of every individual evaluated and the
    generation it stopped at (``generations``, or the one at whose start ``exhausted()`` held).

    ``evaluate(individuals)``: their objectives, in order; ``breed(population)``: the children
    of a generation (new individuals); ``on_generation(generation, front)``: called after the
    first population (generation 0) and after every generation."""
    front = tools.ParetoFront()
    _assign(population, evaluate)
    front.update(population)
    if on_generation is not None:
        on_generation(0, front)
    generation = 0
    for generation in range(1, generations + 1):
        if exhausted is not None and exhausted():
            break
        children = breed(population)
        _assign(children, evaluate)
        front.update(children)
        population = tools.selNSGA2(population + children, survivors)
        if on_generation is not None:
            on_generation(generation, front)
    return front, generation


def _assign(individuals: list[Individual], evaluate) -> None:
    for individual, values in zip(individuals, evaluate(individuals)):
        individual.fitness.values = values
