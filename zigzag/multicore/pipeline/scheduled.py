"""Steps 2 and 3 of a multi-core run: give every layer its cores, then schedule the CNs.

:func:`allocate` follows the run's allocation method: nothing to do for a fixed one, the NSGA-II
front for a genetic search (:class:`~zigzag.multicore.allocation.AllocationSearch`), the CP-SAT
steady states for a constraint optimisation
(:class:`~zigzag.multicore.allocation.optimize.ConstraintSearch`). :func:`schedule` runs the
allocation as a fixed mapping: the graph's own cores, the search's chosen point, or the
constraint optimisation's mapping prepared anew (its layers split over their cores).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from zigzag.multicore.allocation.constraint import allocate as solve_steady_states
from zigzag.multicore.allocation.constraint import co_mapping
from zigzag.multicore.allocation.nsga import FrontPoint, nsga2
from zigzag.multicore.allocation.optimize import ConstraintSearch
from zigzag.multicore.allocation.search import AllocationSearch
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.pipeline.prepared import Prepared, prepare
from zigzag.multicore.pipeline.spec import (
    ConstraintOptimisation,
    FixedAllocation,
    GeneticSearch,
    MulticoreRun,
)
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.scheduler import schedule as run_scheduler

Allocated = AllocationSearch | ConstraintSearch | None
"""What :func:`allocate` gives: the search, the constraint optimisation, or None (fixed)."""


@dataclass(frozen=True)
class Scheduled:
    """A finished run: its description, accelerator, allocation and schedule."""

    run: MulticoreRun
    accelerator: MultiCoreAccelerator
    allocated: Allocated
    schedule: ScheduleResult
    #: the mapping the run used (the automatic one when ``run.mapping`` is None), if read
    mapping: StreamMapping | None = None


def allocate(
    prepared: Prepared,
    run: MulticoreRun,
    *,
    workers: int = 1,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
) -> Allocated:
    """The allocation ``run`` asks for, of the ``prepared`` graph. ``workers``: processes
    evaluating a genetic search's schedules (same front whatever their number); ``progress``:
    called after each of its generations."""
    method = run.allocation
    if isinstance(method, GeneticSearch):
        return genetic_search(
            prepared, method, run.mapping_file, run.prefetch, workers=workers, progress=progress
        )
    if isinstance(method, ConstraintOptimisation):
        return constraint_optimisation(prepared, method)
    return None


def genetic_search(
    prepared: Prepared,
    method: GeneticSearch,
    mapping_file: str,
    prefetch: tuple[str, ...] = (),
    *,
    workers: int = 1,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
) -> AllocationSearch:
    """The NSGA-II front of the prepared allocation problem; its points are run again as fixed
    mappings with ``prefetch`` (``mapping_file``: the mapping its ``allocation.yaml`` rewrites)."""
    front, stats = nsga2(
        prepared.problem,
        method.individuals,
        method.generations,
        seed=method.seed,
        workers=workers,
        progress=progress,
    )
    return AllocationSearch(
        prepared.graph,
        prepared.accelerator,
        prepared.table,
        prepared.problem,
        mapping_file,
        front,
        stats,
        method.choose,
        prefetch,
    )


def constraint_optimisation(prepared: Prepared, method: ConstraintOptimisation) -> ConstraintSearch:
    """Each stack's steady state solved by CP-SAT, and the cores per layer as mapping entries."""
    begin = time.perf_counter()
    solved = solve_steady_states(
        prepared.graph,
        prepared.accelerator,
        prepared.table,
        time_limit=method.time_limit,
        gap=method.gap,
        latency_model=prepared.latency_model,
    )
    entries = co_mapping(prepared.mapping, prepared.graph, solved.layer_cores)
    mapping_path = str(prepared.mapping.file or "mapping")
    return ConstraintSearch(
        prepared.graph, solved, entries, mapping_path, time.perf_counter() - begin
    )


def schedule(
    prepared: Prepared,
    allocated: Allocated,
    run: MulticoreRun,
    *,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
) -> Scheduled:
    """The schedule of the allocation as a fixed mapping. A constraint optimisation's mapping
    splits layers over cores, so its run is prepared anew (``cache``, ``cost_lut_path``: that
    preparation's cost table, as :func:`~zigzag.multicore.pipeline.prepared.prepare`)."""
    if allocated is None:
        result = run_scheduler(prepared.problem)
    elif isinstance(allocated, AllocationSearch):
        result = allocated.fixed_schedule()
    else:
        fixed = replace(
            run,
            accelerator=prepared.accelerator,
            # a Stream 2.x mapping's fused groups stay the stacks of the fixed run
            mapping=replace(allocated.fixed_mapping(), fused_groups=prepared.mapping.fused_groups),
            allocation=FixedAllocation(),
        )
        again = prepare(fixed, cache=cache, cost_lut_path=cost_lut_path)
        result = run_scheduler(again.problem)
    return Scheduled(run, prepared.accelerator, allocated, result, prepared.mapping)
