"""A whole multi-core run in one call (:func:`run_multicore`), and Stream's three one-call
functions over it: :func:`run_stream` (fixed allocation), :func:`search_allocation` (genetic
search) and :func:`optimize_co` (constraint optimisation)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from zigzag.multicore.allocation.nsga import FrontPoint
from zigzag.multicore.allocation.search import AllocationSearch
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.pipeline.scheduled import Scheduled, allocate, schedule
from zigzag.multicore.pipeline.folder import write_run
from zigzag.multicore.pipeline.prepared import prepare
from zigzag.multicore.pipeline.spec import (
    ConstraintOptimisation,
    FixedAllocation,
    GeneticSearch,
    MulticoreRun,
    STREAM_GENETIC_SEARCH,
)
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.notes import collected_warnings


def run_multicore(
    run: MulticoreRun,
    *,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    post_cost_lut_path: str | Path | None = None,
    graph: CNGraph | None = None,
    workers: int = 1,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
    output: str | Path | None = None,
    notes: Sequence[str] | None = None,
) -> Scheduled:
    """prepare → allocate → schedule, and the run folder written to ``output``.

    ``cache``/``cost_lut_path``: the cost table's cache folder and one-file copy
    (``post_cost_lut_path``: that of a constraint optimisation's split layers); ``graph``: the
    CN graph already built from the run's inputs; ``workers``/``progress``: a genetic search's;
    ``notes``: the notes to record in ``summary.json`` before the warnings logged by the run
    (None: no notes recorded).
    """
    with collected_warnings() as logged:
        prepared = prepare(run, cache=cache, cost_lut_path=cost_lut_path, graph=graph)
        found = allocate(prepared, run, workers=workers, progress=progress)
        scheduled = schedule(prepared, found, run, cache=cache, cost_lut_path=post_cost_lut_path)
    if output is not None:
        write_run(output, scheduled, None if notes is None else [*notes, *logged])
    return scheduled


def _run(accelerator, workload, mapping, mode, layer_stacks, **fields) -> MulticoreRun:
    return MulticoreRun(
        accelerator,
        workload,
        mapping,
        mode,
        layer_stacks=tuple(tuple(s) for s in layer_stacks) if layer_stacks else None,
        **fields,
    )


def run_stream(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    clock_ghz: float | None = None,
    latency_model: str = "auto",
) -> ScheduleResult:
    """Schedule ``workload`` on the multi-core ``accelerator`` as Stream does (fixed allocations).

    ``cache``: folder of the content-addressed cost-table entries (reused across runs);
    ``cost_lut_path``: also read/write the whole cost table as one file; ``output``: write the run
    folder there; ``cwd``: where core files are looked up from (Stream's rule; default: the working
    directory). The accelerator and the mapping may also be given already built. ``clock_ghz``:
    the clock of a transformer step's per-token figures in seconds (default: the accelerator
    file's ``clock_ghz``, else cycles only). ``latency_model``: ``zigzag`` (Stream's link model),
    ``bandwidth_bound`` (a CN streaming operands from DRAM lasts at least its DRAM bits over the
    link bandwidth it is granted) or ``auto`` (the default: ``bandwidth_bound`` for an LLM step,
    ``zigzag`` otherwise; docs/models/multi-core.md). ``mapping`` None: the automatic mapping,
    allocated by constraint optimisation (docs/reference/multicore-mapping.md#automatic-mapping).
    """
    allocation = ConstraintOptimisation() if mapping is None else FixedAllocation()
    run = _run(accelerator, workload, mapping, mode, layer_stacks, latency_model=latency_model,
               clock_ghz=clock_ghz, lpf_limit=lpf_limit, prefetch=tuple(operands_to_prefetch),
               cwd=cwd, allocation=allocation)  # fmt: skip
    return run_multicore(run, cache=cache, cost_lut_path=cost_lut_path, output=output).schedule


def search_allocation(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    individuals: int = STREAM_GENETIC_SEARCH.individuals,
    generations: int = STREAM_GENETIC_SEARCH.generations,
    seed: int = STREAM_GENETIC_SEARCH.seed,
    workers: int = 1,
    choose: str = STREAM_GENETIC_SEARCH.choose,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
    latency_model: str = "auto",
) -> AllocationSearch:
    """Search the layer-to-core allocation of ``workload`` (NSGA-II on (energy, latency)).

    Layers whose mapping entry lists several cores without fixing them are allocated per
    (layer, group); with none, the fixed allocation is evaluated once. ``seed`` makes the
    front reproducible whatever ``workers`` (processes evaluating schedules). Other arguments as
    :func:`run_stream`; ``latency_model`` holds in the search's fitness and in the figures it
    reports.
    """
    method = GeneticSearch(individuals, generations, seed, choose)
    run = _run(accelerator, workload, mapping, mode, layer_stacks, allocation=method,
               latency_model=latency_model, lpf_limit=lpf_limit,
               prefetch=tuple(operands_to_prefetch), cwd=cwd)  # fmt: skip
    return run_multicore(run, cache=cache, cost_lut_path=cost_lut_path, workers=workers,
                         progress=progress, output=output).allocated  # fmt: skip


def optimize_co(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    time_limit: float = ConstraintOptimisation.time_limit,
    gap: float = ConstraintOptimisation.gap,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    latency_model: str = "auto",
) -> Scheduled:
    """Allocate ``workload``'s layers to cores by constraint optimisation and schedule the result
    (``.allocated``: the :class:`~zigzag.multicore.allocation.optimize.ConstraintSearch`,
    ``.schedule``: its schedule).

    ``time_limit`` (seconds) and ``gap`` (relative optimality gap) bound each stack's solve; the
    answer is the same on every run (one solver worker, fixed seed) unless a time limit stops a
    solve early. Other arguments as :func:`run_stream`.
    """
    run = _run(accelerator, workload, mapping, mode, layer_stacks,
               allocation=ConstraintOptimisation(time_limit, gap), latency_model=latency_model,
               lpf_limit=lpf_limit, prefetch=tuple(operands_to_prefetch), cwd=cwd)  # fmt: skip
    return run_multicore(run, cache=cache, cost_lut_path=cost_lut_path, output=output)
