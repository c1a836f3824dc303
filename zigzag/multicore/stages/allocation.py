"""The Stage API's allocation stages, the leaves of a chain: the genetic allocation search (and the
seed's InterCoreMappingStage over it) and the constraint-optimisation allocation; each yields
``(scme, search)``."""

from __future__ import annotations

from zigzag.errors import InputError
from zigzag.multicore.allocation import AllocationSearch
from zigzag.multicore.evaluation import StreamCostModelEvaluation
from zigzag.multicore.evaluation.hall_of_fame import plot_hall_of_fame
from zigzag.multicore.pipeline.folder import write_run
from zigzag.multicore.pipeline.prepared import Prepared, load_mapping
from zigzag.multicore.pipeline.scheduled import constraint_optimisation, genetic_search, schedule
from zigzag.multicore.pipeline.spec import (
    STREAM_GENETIC_SEARCH,
    ConstraintOptimisation,
    GeneticSearch,
    MulticoreRun,
)
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, resolve_latency_model
from zigzag.stages.stage import Stage

__all__ = [
    "ConstraintOptimizationAllocationStage",
    "GeneticAlgorithmAllocationStage",
    "InterCoreMappingStage",
]


class GeneticAlgorithmAllocationStage(Stage):
    """Leaf: the allocation search (NSGA-II, ``nb_ga_individuals`` × ``nb_ga_generations``,
    ``ga_seed``, ``ga_workers``); yields ``(scme of the chosen point, AllocationSearch)``."""

    SEED_OPTIONS = (
        "plot_hof",
        "plot_file_name",
        "plot_full_schedule",
        "plot_data_transfer",
        "scheduler_candidate_selection",
    )

    def __init__(
        self,
        list_of_callables,
        *,
        workload,
        accelerator,
        cost_lut,
        allocation_problem,
        nb_ga_individuals=STREAM_GENETIC_SEARCH.individuals,
        nb_ga_generations=STREAM_GENETIC_SEARCH.generations,
        ga_seed=STREAM_GENETIC_SEARCH.seed,
        ga_workers=1,
        mapping_path=None,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.graph, self.accelerator, self.table, self.problem = (
            workload,
            accelerator,
            cost_lut,
            allocation_problem,
        )
        self.individuals, self.generations = nb_ga_individuals, nb_ga_generations
        self.seed, self.workers, self.mapping_path = ga_seed, ga_workers, mapping_path
        selection = kwargs.get("scheduler_candidate_selection", "memory")
        if selection != "memory":
            raise InputError(
                None,
                "scheduler_candidate_selection",
                f"'{selection}' is not available; Stream "
                "(late 2024) always schedules by its 'memory' order",
            )

    def is_leaf(self) -> bool:
        return True

    def search(self) -> AllocationSearch:
        prepared = Prepared(
            self.accelerator,
            None,
            self.graph,
            self.table,
            self.kwargs.get("latency_model", "zigzag"),
            self.problem,
        )
        method = GeneticSearch(self.individuals, self.generations, self.seed)
        search = genetic_search(prepared, method, str(self.mapping_path), workers=self.workers)
        search.options = {k: self.kwargs[k] for k in self.SEED_OPTIONS if k in self.kwargs}
        if search.options.get("plot_hof"):
            plot_hall_of_fame(
                search,
                search.options.get("plot_file_name"),
                bool(search.options.get("plot_full_schedule")),
                bool(search.options.get("plot_data_transfer")),
            )
        return search

    def run(self):
        search = self.search()
        yield StreamCostModelEvaluation.of(search.search_schedule()), search


class ConstraintOptimizationAllocationStage(Stage):
    """Leaf: Stream's constraint-optimisation allocation (steady state of each layer stack solved
    with OR-Tools CP-SAT, ``co_time_limit`` seconds and ``co_gap`` relative gap per stack), then
    the schedule of that allocation as a fixed mapping; yields ``(scme, search)``, ``search`` a
    :class:`~zigzag.multicore.allocation.optimize.ConstraintSearch`. ``cost_lut_post_co_path`` keeps
    the cost table of the split layers; ``allocations_path`` gets ``co_slots.csv`` and
    ``allocation.yaml``."""

    def __init__(
        self,
        list_of_callables,
        *,
        workload,
        accelerator,
        cost_lut,
        workload_path,
        mapping_path,
        mode="fused",
        layer_stacks=None,
        co_time_limit=ConstraintOptimisation.time_limit,
        co_gap=ConstraintOptimisation.gap,
        allocations_path=None,
        cost_lut_post_co_path=None,
        loma_lpf_limit=6,
        operands_to_prefetch=(),
        cost_cache=None,
        cwd=None,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.graph, self.accelerator, self.table = workload, accelerator, cost_lut
        self.workload_path, self.mapping_path, self.mode = workload_path, mapping_path, mode
        self.stacks = layer_stacks or None
        self.time_limit, self.gap = co_time_limit, co_gap
        self.allocations_path, self.post_path = allocations_path, cost_lut_post_co_path
        self.lpf, self.prefetch, self.cache, self.cwd = (
            loma_lpf_limit,
            tuple(operands_to_prefetch),
            cost_cache,
            cwd,
        )

    def is_leaf(self) -> bool:
        return True

    def run(self):
        latency_model = resolve_latency_model(
            self.kwargs.get("latency_model", AUTO_LATENCY), self.workload_path
        )
        run = MulticoreRun(
            self.accelerator,
            self.workload_path,
            self.mapping_path,
            self.mode,
            ConstraintOptimisation(self.time_limit, self.gap),
            layer_stacks=self.stacks,
            latency_model=latency_model,
            lpf_limit=self.lpf,
            prefetch=self.prefetch,
            cwd=self.cwd,
        )
        mapping = load_mapping(self.mapping_path, self.accelerator, self.workload_path)
        problem = self.kwargs.get("allocation_problem")
        prepared = Prepared(
            self.accelerator, mapping, self.graph, self.table, latency_model, problem
        )
        found = constraint_optimisation(prepared, run.allocation)
        done = schedule(prepared, found, run, cache=self.cache, cost_lut_path=self.post_path)
        if self.allocations_path is not None:
            write_run(self.allocations_path, done)
        yield StreamCostModelEvaluation.of(done.schedule), found


class InterCoreMappingStage(GeneticAlgorithmAllocationStage):
    """The seed's name: the same search, yielding the two ends of the front, lowest latency first
    (Stream's pick), then lowest energy, so that the seed's ``scme, _ = mainstage.run();
    scme = scme[0]`` selects the lowest-latency schedule."""

    def run(self):
        search = self.search()
        for point, label in (
            (min(search.front, key=lambda p: (p.latency, p.energy)), ""),
            (min(search.front, key=lambda p: (p.energy, p.latency)), "lowest_energy"),
        ):
            yield StreamCostModelEvaluation.of(search.search_schedule(point), label), search
