"""The allocation search as found: the NSGA-II front, the chosen point and its schedule.

:class:`AllocationSearch` is what :func:`zigzag.multicore.pipeline.allocate` gives for a
:class:`~zigzag.multicore.pipeline.GeneticSearch` run: the whole Pareto front, the chosen point
(Stream's choice: the lowest latency) and its schedule; the run folder's writer
(:mod:`zigzag.multicore.pipeline.folder`) saves ``front.csv``, ``allocation.yaml`` (the chosen
allocation as a fixed mapping) and ``summary.json`` + ``schedule.csv`` of that fixed mapping,
exactly what ``zigzag multicore run`` gives for ``allocation.yaml``.

The search's fitness is Stream's (CNs placed by the search run ``int(latency_total1)`` cycles, as
in Stream's genetic algorithm), but a fixed mapping runs its CNs ``latency_total2`` cycles (Stream's
fixed-allocation rule). So every figure the search *reports* (``front.csv``'s ``energy`` and
``latency``, the chosen point, ``summary.json``) is its allocation scheduled again as a fixed
mapping, with the same prefetched operands: exactly what ``zigzag multicore run`` of
``allocation.yaml`` gives. The fitness the search ranked by stays in ``front.csv``
(``search_energy``, ``search_latency``) and in ``summary.json`` (``search``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from zigzag.multiobjective.pareto import dominated_by
from zigzag.multicore.allocation.front import distinct_points
from zigzag.multicore.allocation.genes import AllocationProblem, Gene
from zigzag.multicore.allocation.nsga import FrontPoint, SearchStats
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.schedule.adapter import problem_from_cn_graph
from zigzag.multicore.schedule.costs import cn_costs
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.scheduler import schedule


@dataclass
class AllocationSearch:
    """A finished search: the front (lowest energy first), the chosen point and its schedule."""

    graph: CNGraph
    accelerator: MultiCoreAccelerator
    table: CostTable
    problem: AllocationProblem
    mapping_path: str
    front: list[FrontPoint]
    stats: SearchStats
    choose: str = "latency"
    prefetch: tuple[str, ...] = ()
    _runs: dict[tuple[int, ...], ScheduleResult] = field(default_factory=dict, repr=False)

    @property
    def genes(self) -> tuple[Gene, ...]:
        return self.problem.genes

    @property
    def chosen(self) -> FrontPoint:
        """The point picked from the front by its figures as run (:meth:`as_run`): lowest latency
        (Stream), lowest energy, or lowest EDP; ties go to the search's own ranking."""
        key = {
            "latency": lambda e, l: (l, e),
            "energy": lambda e, l: (e, l),
            "edp": lambda e, l: (e * l, l),
        }[self.choose]
        return min(self.front, key=lambda p: (*key(*self.figures(p)), *key(p.energy, p.latency)))

    def figures(self, point: FrontPoint) -> tuple[float, float]:
        """``(energy, latency)`` of ``point``'s allocation as run (what ``zigzag multicore run`` gives)."""
        result = self.as_run(point)
        return float(result.energy), float(result.latency)

    def as_run(self, point: FrontPoint | None = None) -> ScheduleResult:
        """``point``'s allocation (default: the chosen one) scheduled as a fixed mapping, with the
        search's prefetched operands: what ``zigzag multicore run`` gives for its ``allocation.yaml``."""
        cores = tuple((point or self.chosen).cores)
        if cores not in self._runs:
            core = self.problem.problem(cores).core
            costs = cn_costs(self.graph, self.table, cores=core)
            self._runs[cores] = schedule(
                problem_from_cn_graph(
                    self.graph,
                    self.accelerator,
                    costs,
                    cores=core,
                    prefetch=self.prefetch,
                    name=self.problem.base.name,
                    latency_model=self.problem.base.latency_model,
                )
            )
        return self._runs[cores]

    @property
    def front_size(self) -> int:
        """How many distinct (energy, latency) points, as run, the front has (rows of ``front.csv``)."""
        return len(distinct_points(self.front, self.figures))

    def allocation(self, point: FrontPoint | None = None) -> dict[tuple[int, int], int]:
        """``{(layer, group): core}`` of ``point`` (default: the chosen one)."""
        point = point or self.chosen
        return {(g.layer, g.group): c for g, c in zip(self.genes, point.cores)}

    def search_schedule(self, point: FrontPoint | None = None) -> ScheduleResult:
        """The schedule the search evaluated for ``point`` (Stream's GA result for the chosen one)."""
        return self.problem.schedule((point or self.chosen).cores)

    def fixed_schedule(self) -> ScheduleResult:
        """The chosen allocation run as a fixed mapping (what ``zigzag multicore run`` gives for it)."""
        return self.as_run()

    def search_summary(self) -> dict:
        """The ``search`` section of the run's ``summary.json``: the chosen point as run and in the
        search's fitness, the front's size and the search's effort."""
        fixed = self.fixed_schedule()
        return {
            "energy": float(fixed.energy),
            "latency": float(fixed.latency),
            "choose": self.choose,
            "search_energy": self.chosen.energy,
            "search_latency": self.chosen.latency,
            "front_size": self.front_size,
            "front_allocations": len(self.front),
            "genes": len(self.genes),
            "generations": self.stats.generations,
            "evaluations": self.stats.evaluations,
            "seconds": round(self.stats.seconds, 3),
        }


def dominated_share(
    ours: Sequence[tuple[float, float]], theirs: Sequence[tuple[float, float]]
) -> float:
    """Share of ``ours`` points dominated by some point of ``theirs`` (both minimised)."""
    if not ours:
        return 0.0
    return int(
        np.count_nonzero(dominated_by(ours, np.asarray(theirs, dtype=float).reshape(-1, 2)))
    ) / len(ours)
