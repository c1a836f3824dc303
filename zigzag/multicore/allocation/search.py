"""The allocation search from files: inputs → CN graph → cost table → NSGA-II front → outputs.

:func:`search_allocation` returns an :class:`AllocationSearch` holding the whole Pareto front,
the chosen point (Stream's choice: the lowest latency), its schedule and everything needed to
save it (``write``): ``front.csv``, ``allocation.yaml`` (the chosen allocation as a fixed
mapping), and ``summary.json`` + ``schedule.csv`` of that fixed mapping, exactly what
``zigzag stream run`` gives for ``allocation.yaml``.

The search's fitness is Stream's (CNs placed by the search run ``int(latency_total1)`` cycles, as
in Stream's genetic algorithm), but a fixed mapping runs its CNs ``latency_total2`` cycles (Stream's
fixed-allocation rule). So every figure the search *reports* (``front.csv``'s ``energy`` and
``latency``, the chosen point, ``summary.json``) is its allocation scheduled again as a fixed
mapping, with the same prefetched operands: exactly what ``zigzag stream run`` of
``allocation.yaml`` gives. The fitness the search ranked by stays in ``front.csv``
(``search_energy``, ``search_latency``) and in ``summary.json`` (``search``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.multiobjective.pareto import dominated_by
from zigzag.search.options import SearchOptions
from zigzag.multicore.allocation.front import distinct_points, front_csv, write_fixed_mapping
from zigzag.multicore.allocation.genes import AllocationProblem, Gene, build_allocation_problem
from zigzag.multicore.allocation.nsga import FrontPoint, SearchStats, nsga2
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.schedule.adapter import problem_from_cn_graph
from zigzag.multicore.schedule.costs import cn_costs
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.scheduler import schedule
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, resolve_latency_model
from zigzag.multicore.topology import load_multicore_accelerator

CHOICES = ("latency", "energy", "edp")


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
        """``(energy, latency)`` of ``point``'s allocation as run (what ``zigzag stream run`` gives)."""
        result = self.as_run(point)
        return float(result.energy), float(result.latency)

    def as_run(self, point: FrontPoint | None = None) -> ScheduleResult:
        """``point``'s allocation (default: the chosen one) scheduled as a fixed mapping, with the
        search's prefetched operands: what ``zigzag stream run`` gives for its ``allocation.yaml``."""
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
        """The chosen allocation run as a fixed mapping (what ``zigzag stream run`` gives for it)."""
        return self.as_run()

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write front.csv, allocation.yaml, summary.json and schedule.csv into ``folder``."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "front.csv", front_csv(self.genes, self.front, self.figures))
        write_fixed_mapping(
            out / "allocation.yaml",
            self.mapping_path,
            self.graph,
            self.genes,
            self.chosen.cores,
            self.accelerator,
        )
        fixed = self.fixed_schedule()
        fixed.write(out)
        summary = fixed.summary()
        summary["search"] = {
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
        write_json_atomic(out / "summary.json", summary)
        return {
            name: out / name
            for name in ("front.csv", "allocation.yaml", "summary.json", "schedule.csv")
        }


def allocation_inputs(
    accelerator,
    workload,
    mapping,
    mode: str,
    layer_stacks,
    *,
    lpf_limit: int = 6,
    cache=None,
    cost_lut_path=None,
    operands_to_prefetch: Sequence[str] = (),
    cwd: str | None = None,
    latency_model: str = AUTO_LATENCY,
) -> tuple[MultiCoreAccelerator, CNGraph, CostTable, AllocationProblem]:
    """What an allocation method starts from: the accelerator, the CN graph, the cost table filled
    for every candidate core of the layers to allocate (saved to ``cost_lut_path``), the problem
    (``latency_model`` ``auto``: resolved for ``workload``, as in :func:`run_stream`)."""
    latency_model = resolve_latency_model(latency_model, workload)
    hardware = (
        accelerator
        if isinstance(accelerator, MultiCoreAccelerator)
        else load_multicore_accelerator(accelerator, cwd)
    )
    stacks = [tuple(s) for s in layer_stacks] if layer_stacks else None
    graph = cn_graph_from_files(hardware, workload, mapping, mode, stacks, cwd=cwd)
    table = CostTable.for_accelerator(
        hardware,
        options=SearchOptions(opt="latency", lpf_limit=lpf_limit),
        cache=cache,
        lut_path=cost_lut_path,
    )
    problem = build_allocation_problem(
        graph,
        hardware,
        table,
        prefetch=tuple(operands_to_prefetch),
        name=Path(str(workload)).stem,
        latency_model=latency_model,
    )
    if cost_lut_path is not None:
        table.save()
    return hardware, graph, table, problem


def search_allocation(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    individuals: int = 32,
    generations: int = 100,
    seed: int = 0,
    workers: int = 1,
    choose: str = "latency",
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    progress: Callable[[int, list[FrontPoint]], None] | None = None,
    latency_model: str = AUTO_LATENCY,
) -> AllocationSearch:
    """Search the layer-to-core allocation of ``workload`` (NSGA-II on (energy, latency)).

    Layers whose mapping entry lists several cores without fixing them are allocated per
    (layer, group); with none, the fixed allocation is evaluated once. ``seed`` makes the
    front reproducible whatever ``workers`` (processes evaluating schedules). ``latency_model``:
    ``bandwidth_bound`` stretches streaming CNs to their DRAM bits over the link (:func:`run_stream`),
    in the search's fitness and in the figures it reports (``auto``, the default: ``bandwidth_bound``
    for an LLM step, ``zigzag`` otherwise).
    """
    if choose not in CHOICES:
        raise InputError(None, "choose", f"'{choose}' is not one of {', '.join(CHOICES)}")
    hardware, graph, table, problem = allocation_inputs(
        accelerator,
        workload,
        mapping,
        mode,
        layer_stacks,
        lpf_limit=lpf_limit,
        cache=cache,
        cost_lut_path=cost_lut_path,
        operands_to_prefetch=operands_to_prefetch,
        cwd=cwd,
        latency_model=latency_model,
    )
    front, stats = nsga2(
        problem, individuals, generations, seed=seed, workers=workers, progress=progress
    )
    result = AllocationSearch(
        graph,
        hardware,
        table,
        problem,
        str(getattr(mapping, "file", None) or mapping),
        front,
        stats,
        choose,
        tuple(operands_to_prefetch),
    )
    if output is not None:
        result.write(output)
    return result


def dominated_share(
    ours: Sequence[tuple[float, float]], theirs: Sequence[tuple[float, float]]
) -> float:
    """Share of ``ours`` points dominated by some point of ``theirs`` (both minimised)."""
    if not ours:
        return 0.0
    return int(
        np.count_nonzero(dominated_by(ours, np.asarray(theirs, dtype=float).reshape(-1, 2)))
    ) / len(ours)
