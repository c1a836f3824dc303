"""Step 1 of a multi-core run: the accelerator, the mapping, the CN graph and the cost table.

:func:`prepare` turns a :class:`~zigzag.multicore.pipeline.spec.MulticoreRun` into a
:class:`Prepared` run: what the allocation and the schedule start from. Its parts are functions of
their own (:func:`load_accelerator`, :func:`load_mapping`, :func:`build_graph`,
:func:`cost_table`) for the callers that hold some of them already (the workflow's saved graph, a
sweep's variant, the Stage API's stages).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.allocation.automatic import checked_automatic_mapping
from zigzag.multicore.allocation.genes import AllocationProblem, build_allocation_problem
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.mapping import StreamMapping, load_stream_mapping
from zigzag.multicore.pipeline.spec import ConstraintOptimisation, FixedAllocation, MulticoreRun
from zigzag.multicore.schedule.adapter import problem_from_cn_graph
from zigzag.multicore.schedule.costs import cn_costs
from zigzag.multicore.schedule.problem import ScheduleProblem
from zigzag.multicore.schedule.tokens import resolve_latency_model
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.mapping_search.options import SearchOptions


@dataclass(frozen=True)
class Prepared:
    """A run ready to allocate: its accelerator, mapping (None when the CN graph was given and the
    allocation needs no mapping), CN graph, cost table, latency model (``auto`` resolved) and
    problem: the scheduling problem of a fixed allocation, else the allocation problem (every
    candidate core of the layers to allocate costed)."""

    accelerator: MultiCoreAccelerator
    mapping: StreamMapping | None
    graph: CNGraph
    table: CostTable
    latency_model: str
    problem: ScheduleProblem | AllocationProblem


def has_open_cores(graph: CNGraph) -> bool:
    """Whether the graph leaves some CNs' core open (layers with several candidate cores)."""
    return bool(len(graph)) and int(graph.core.min()) < 0


def load_accelerator(run: MulticoreRun) -> MultiCoreAccelerator:
    """The run's accelerator (core files found from ``run.cwd``, as Stream does)."""
    if isinstance(run.accelerator, MultiCoreAccelerator):
        return run.accelerator
    return load_multicore_accelerator(run.accelerator, run.cwd)


def load_mapping(
    mapping: str | Path | StreamMapping | None,
    accelerator: MultiCoreAccelerator,
    workload: str | Path,
    *,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
) -> StreamMapping:
    """The one place a run's mapping is read: a parsed mapping as given, a Stream mapping file
    (either format) with its core roles resolved against ``accelerator``; ``None``: the automatic
    mapping of ``workload`` (``zigzag.multicore.allocation.automatic``; ``lpf_limit`` and ``cache``
    for its check against the cost model)."""
    if isinstance(mapping, StreamMapping):
        return mapping
    if mapping is None:
        return checked_automatic_mapping(accelerator, workload, lpf_limit=lpf_limit, cache=cache)
    return load_stream_mapping(mapping, accelerator)


def build_graph(
    run: MulticoreRun,
    accelerator: MultiCoreAccelerator | None = None,
    mapping: StreamMapping | None = None,
) -> CNGraph:
    """The run's CN graph (its stacks, seed tiling and layer splits); the accelerator and the
    mapping are loaded unless given."""
    accelerator = load_accelerator(run) if accelerator is None else accelerator
    if mapping is None:
        mapping = load_mapping(run.mapping, accelerator, run.workload)
    return cn_graph_from_files(
        accelerator,
        run.workload,
        mapping,
        run.mode,
        [tuple(s) for s in run.layer_stacks] if run.layer_stacks else None,
        seed=run.seed_tiling,
        cwd=run.cwd,
        layer_splits=dict(run.layer_splits) or None,
        split_W_fraction=run.split_W_fraction,
    )


def cost_table(
    accelerator: MultiCoreAccelerator,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    lut_path: str | Path | None = None,
) -> CostTable:
    """The cost table of ``accelerator``'s cores (minimal latency, LOMA ``lpf_limit``), reading
    and filling the content-addressed ``cache`` folder and the one-file ``lut_path``."""
    return CostTable.for_accelerator(
        accelerator,
        options=SearchOptions(opt="latency", lpf_limit=lpf_limit),
        cache=cache,
        lut_path=lut_path,
    )


def fixed_problem(
    run: MulticoreRun,
    accelerator: MultiCoreAccelerator,
    graph: CNGraph,
    table: CostTable,
    latency_model: str,
) -> ScheduleProblem:
    """The scheduling problem of the graph's own (fixed) cores, costed from ``table``."""
    return problem_from_cn_graph(
        graph,
        accelerator,
        cn_costs(graph, table),
        prefetch=run.prefetch,
        name=run.schedule_name,
        latency_model=latency_model,
    )


def prepare(
    run: MulticoreRun,
    *,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    graph: CNGraph | None = None,
) -> Prepared:
    """Read the run's inputs, build its CN graph (or take ``graph``, already built from them) and
    cost every (CN, core) pair its allocation can use; ``cost_lut_path``: also read the cost table
    from, and save it to, that one file."""
    latency_model = resolve_latency_model(run.latency_model, run.workload)
    accelerator = load_accelerator(run)
    mapping = None  # a given graph was built with it: read again only where the allocation needs it
    if graph is None or isinstance(run.allocation, ConstraintOptimisation):
        mapping = load_mapping(
            run.mapping, accelerator, run.workload, lpf_limit=run.lpf_limit, cache=cache
        )
    graph = build_graph(run, accelerator, mapping) if graph is None else graph
    fixed = isinstance(run.allocation, FixedAllocation)
    if fixed and has_open_cores(graph):
        raise InputError(
            run.mapping_file,
            "core_allocation",
            "some layers may go to several cores; the scheduler needs "
            "one fixed core per layer (set core_allocation_is_fixed or give a single core)",
        )
    table = cost_table(accelerator, run.lpf_limit, cache, cost_lut_path)
    if fixed:
        problem = fixed_problem(run, accelerator, graph, table, latency_model)
    else:
        problem = build_allocation_problem(
            graph,
            accelerator,
            table,
            prefetch=run.prefetch,
            name=run.schedule_name,
            latency_model=latency_model,
        )
    if cost_lut_path is not None:
        table.save()
    return Prepared(accelerator, mapping, graph, table, latency_model, problem)
