"""Stream's Stage API, in-process: the seed's (2023) stage names and the late-2024 ones::

    from zigzag.multicore.stages import *

    scme, _ = MainStage([AcceleratorParserStage, StreamONNXModelParserStage, LayerSplittingStage,
                         StreamONNXModelParserStage, GenerateCNWorkloadHybridStage, IntraCoreMappingStage,
                         InterCoreMappingStage], accelerator=..., workload_path=..., mapping_path=..., ...).run()
    scme = scme[0]

Every stage is a thin wrapper around a function of :mod:`zigzag.multicore` (same protocol as
:mod:`zigzag.stages`: each stage adds keyword arguments and builds the next one). The leaf
``GeneticAlgorithmAllocationStage`` yields ``(scme, search)``:
``scme`` is the schedule of the chosen allocation (lowest latency, as Stream), a
:class:`StreamCostModelEvaluation`; ``search`` the :class:`~zigzag.multicore.allocation.AllocationSearch`
with the whole Pareto front. The seed's ``InterCoreMappingStage`` yields two such pairs: the
front's lowest-latency point (what the seed's ``scme, _ = mainstage.run(); scme = scme[0]``
picks) and its lowest-energy point. ZigZag's stages can be mixed in (e.g. ``MinimalLatencyStage`` above
a ``GeneralParameterIteratorStage``), and own stages follow the seed's recipe (subclass ``Stage``,
build the child with ``self.substage(...)``, re-yield or reduce).

The seed's options are recorded in the leaf's ``search.options``; ``plot_hof`` draws the hall of
fame as Stream does (``plot_file_name``, ``plot_full_schedule``, ``plot_data_transfer``;
:mod:`zigzag.multicore.evaluation.hall_of_fame`); ``scheduler_candidate_selection`` is always
Stream's "memory" rule (docs/tutorials/multi-core.md#8-streams-stage-api-and-one-call-api).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from zigzag.errors import InputError
from zigzag.stages import SpatialMappingGeneratorStage
from zigzag.stages.stage import MainStage as ZigZagMainStage
from zigzag.stages.stage import Stage, StageCallable
from zigzag.multicore.allocation import AllocationSearch, build_allocation_problem
from zigzag.multicore.cn_graph import CNGraph, build_cn_graph
from zigzag.multicore.cn_limit import DEFAULT_MAX_CNS, cn_limit
from zigzag.multicore.evaluation import StreamCostModelEvaluation
from zigzag.multicore.evaluation.hall_of_fame import plot_hall_of_fame
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.inputs import HardwareFacts
from zigzag.multicore.pipeline.folder import write_run
from zigzag.multicore.pipeline.prepared import Prepared, cost_table, load_mapping
from zigzag.multicore.pipeline.scheduled import constraint_optimisation, genetic_search, schedule
from zigzag.multicore.pipeline.spec import (
    MODES,
    STREAM_GENETIC_SEARCH,
    ConstraintOptimisation,
    GeneticSearch,
    MulticoreRun,
)
from zigzag.multicore.schedule.order import scheduling_order
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, resolve_latency_model
from zigzag.multicore.splitting import split_layers, weight_split_factors
from zigzag.multicore.tiling import SeedTiling
from zigzag.multicore.workload import StreamWorkload
from zigzag.multicore.workload_onnx import read_stream_workload

__all__ = [
    "AcceleratorParserStage",
    "ConstraintOptimizationAllocationStage",
    "CustomSpatialMappingGeneratorStage",
    "GenerateCNWorkloadHybridStage",
    "GeneticAlgorithmAllocationStage",
    "InterCoreMappingStage",
    "IntraCoreMappingStage",
    "LayerSplittingStage",
    "LayerStacksGenerationStage",
    "MainStage",
    "ONNXModelParserStage",
    "SchedulingOrderGenerationStage",
    "SetFixedAllocationPerformanceStage",
    "Stage",
    "StageCallable",
    "StreamCostModelEvaluation",
    "StreamONNXModelParserStage",
    "TiledWorkloadGenerationStage",
    "TilingGenerationStage",
    "ZigZagCoreMappingEstimationStage",
]


class MainStage(ZigZagMainStage):
    """Stream's entry point: as ZigZag's, but Stream's keyword names (``workload_path``,
    ``mapping_path``) are kept as they are (ZigZag's MainStage reads them as its older names)."""

    def __init__(self, list_of_callables, **kwargs):
        super().__init__(list_of_callables)
        self.kwargs = kwargs


class AcceleratorParserStage(Stage):
    """``accelerator``: a multi-core YAML path (core files found from ``cwd``, as Stream) or an
    already built :class:`MultiCoreAccelerator`."""

    def __init__(self, list_of_callables, *, accelerator, cwd=None, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator, self.cwd = accelerator, cwd

    def run(self):
        hardware = self.accelerator
        if not isinstance(hardware, MultiCoreAccelerator):
            hardware = load_multicore_accelerator(hardware, self.cwd)
        yield from self.substage(accelerator=hardware, cwd=self.cwd).run()


class ONNXModelParserStage(Stage):
    """``workload_path`` (ONNX) + ``mapping_path`` (Stream mapping YAML) → ``workload`` (parsed
    layers with their mapping entries). Run again after :class:`LayerSplittingStage`, it parses
    the split model that stage wrote."""

    def __init__(self, list_of_callables, *, workload_path, mapping_path, accelerator, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.workload_path, self.mapping_path, self.accelerator = (
            workload_path,
            mapping_path,
            accelerator,
        )

    def run(self):
        if not isinstance(self.accelerator, MultiCoreAccelerator):
            raise InputError(
                None,
                type(self).__name__,
                "needs a multi-core accelerator: put AcceleratorParserStage first",
            )
        facts = HardwareFacts.of(self.accelerator)
        workload = read_stream_workload(
            self.workload_path,
            load_mapping(self.mapping_path, self.accelerator, self.workload_path),
            facts.dataflows,
        )
        yield from self.substage(
            workload_path=self.workload_path,
            mapping_path=self.mapping_path,
            accelerator=self.accelerator,
            workload=workload,
            latency_model=resolve_latency_model(
                self.kwargs.get("latency_model", AUTO_LATENCY), self.workload_path
            ),  # auto: bandwidth_bound for an LLM step, Stream's zigzag otherwise
        ).run()


StreamONNXModelParserStage = ONNXModelParserStage


class LayerSplittingStage(Stage):
    """The seed's K split of layers whose weights do not fit: every Conv/Gemm whose weights exceed
    its smallest candidate core's weight memory (half of it with ``split_W_double_buffered``) is
    split along K into ONNX nodes + Concat, saved as ``split_onnx_model_path``; the next stage
    reads that model (``workload_path``). Nothing to split: the model is passed on unchanged."""

    def __init__(
        self,
        list_of_callables,
        *,
        workload_path,
        workload,
        accelerator,
        split_onnx_model_path=None,
        split_W_double_buffered=False,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.workload_path, self.workload, self.accelerator = workload_path, workload, accelerator
        self.output = split_onnx_model_path
        self.fraction = 0.5 if split_W_double_buffered else 1.0
        self.double = split_W_double_buffered

    def run(self):
        facts = HardwareFacts.of(self.accelerator)
        factors = weight_split_factors(self.workload, facts.weight_capacities, self.fraction)
        path = self.workload_path
        if factors:
            if not self.output:
                raise InputError(
                    None,
                    "split_onnx_model_path",
                    "layers must be split; give the file to write the split ONNX model to",
                )
            model = split_layers(onnx.load(str(path), load_external_data=False), factors, str(path))
            Path(self.output).parent.mkdir(parents=True, exist_ok=True)
            onnx.save(model, str(self.output))
            path = self.output
        yield from self.substage(
            workload_path=path,
            workload=self.workload,
            accelerator=self.accelerator,
            split_onnx_model_path=self.output,
            split_W_double_buffered=self.double,
            layer_splits=factors,
        ).run()


class _CNGraphStage(Stage):
    """Builds the CN graph (``workload`` := :class:`CNGraph`, ``original_workload`` := the layers);
    ``max_cns`` (default :data:`~zigzag.multicore.cn_limit.DEFAULT_MAX_CNS`, ``None``: no limit)
    bounds its CN count, checked before any CN is built."""

    def graph(
        self, workload: StreamWorkload, mode: str, stacks, seed: SeedTiling | None
    ) -> CNGraph:
        facts = HardwareFacts.of(self.kwargs["accelerator"])
        if seed is not None and seed.cn_define_mode == 4 and not seed.weight_capacities:
            seed = SeedTiling(
                seed.cn_define_mode,
                seed.hint_loops,
                seed.layer_cutoffs,
                seed.split_W_percentage,
                facts.weight_capacities,
            )
        stacks = [tuple(s) for s in stacks] if stacks else None
        with cn_limit(self.kwargs.get("max_cns", DEFAULT_MAX_CNS)):
            return build_cn_graph(
                workload, mode, stacks, seed=seed, weight_capacity=facts.total_weight_capacity
            )


class GenerateCNWorkloadHybridStage(_CNGraphStage):
    """The seed's CN generation: ``cn_define_mode`` 1–4 with ``hint_loops`` (``layer_cutoffs``,
    ``split_W_percentage``); ``hint_loops = []`` is layer by layer, ``[("OY", "all")]`` fused
    (all layers one stack unless ``layer_stacks`` is given)."""

    def __init__(
        self,
        list_of_callables,
        *,
        workload,
        accelerator,
        cn_define_mode=1,
        hint_loops=(),
        layer_cutoffs=(),
        split_W_percentage=None,
        layer_stacks=None,
        **kwargs,
    ):
        super().__init__(list_of_callables, accelerator=accelerator, **kwargs)
        self.workload = workload
        self.seed = SeedTiling(
            cn_define_mode,
            [tuple(h) if isinstance(h, list) else h for h in hint_loops],
            list(layer_cutoffs),
            split_W_percentage,
        )
        self.stacks = layer_stacks

    def run(self):
        mode = "fused" if self.seed.hint_loops else "lbl"
        graph = self.graph(self.workload, mode, self.stacks, self.seed)
        yield from self.substage(workload=graph, original_workload=self.workload, mode=mode).run()


class LayerStacksGenerationStage(Stage):
    """``mode`` (``lbl`` / ``fused``) and optional ``layer_stacks`` checked and passed on (the
    stacks themselves are made with the CN graph, docs/models/multi-core.md#computation-nodes)."""

    def __init__(self, list_of_callables, *, mode, layer_stacks=None, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        if mode not in MODES:
            raise InputError(None, "mode", f"'{mode}' is not lbl or fused")
        self.mode, self.stacks = mode, layer_stacks

    def run(self):
        yield from self.substage(mode=self.mode, layer_stacks=self.stacks).run()


class TilingGenerationStage(Stage):
    """Tiling comes from the mapping entries (``intra_core_tiling`` / ``inter_core_tiling``); passed on."""

    def run(self):
        yield from self.substage().run()


class TiledWorkloadGenerationStage(_CNGraphStage):
    """``workload`` (layers) → the CN graph of ``mode`` / ``layer_stacks``."""

    def __init__(
        self, list_of_callables, *, workload, accelerator, mode="lbl", layer_stacks=None, **kwargs
    ):
        super().__init__(list_of_callables, accelerator=accelerator, **kwargs)
        self.workload, self.mode, self.stacks = workload, mode, layer_stacks

    def run(self):
        graph = self.graph(self.workload, self.mode, self.stacks, None)
        yield from self.substage(
            workload=graph,
            original_workload=self.workload,
            mode=self.mode,
            layer_stacks=graph.stacks,
        ).run()


class ZigZagCoreMappingEstimationStage(Stage):
    """The cost table (``cost_lut``): every CN class on every candidate core through our ZigZag
    model (minimal latency, ``loma_lpf_limit``), read from / saved to ``cost_lut_path`` (JSON
    content, any file name) and the ``cost_cache`` folder if given."""

    def __init__(
        self,
        list_of_callables,
        *,
        workload,
        accelerator,
        loma_lpf_limit=6,
        cost_lut_path=None,
        node_hw_performances_path=None,
        cost_cache=None,
        operands_to_prefetch=(),
        latency_model="zigzag",
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        if not isinstance(workload, CNGraph):
            raise InputError(
                None,
                type(self).__name__,
                "needs the CN graph: put GenerateCNWorkloadHybridStage or "
                "TiledWorkloadGenerationStage before it",
            )
        self.workload, self.accelerator = workload, accelerator
        self.lpf, self.cache = loma_lpf_limit, cost_cache
        self.path = cost_lut_path or node_hw_performances_path
        self.prefetch = tuple(operands_to_prefetch)
        self.latency_model = (
            latency_model  # "bandwidth_bound": streaming CNs last their DRAM bits over the link
        )

    def run(self):
        table = cost_table(self.accelerator, self.lpf, self.cache, self.path)
        problem = build_allocation_problem(
            self.workload,
            self.accelerator,
            table,
            prefetch=self.prefetch,
            latency_model=self.latency_model,
        )
        if self.path is not None:
            table.save()
        yield from self.substage(
            workload=self.workload,
            accelerator=self.accelerator,
            cost_lut=table,
            allocation_problem=problem,
            loma_lpf_limit=self.lpf,
            operands_to_prefetch=list(self.prefetch),
            latency_model=self.latency_model,
        ).run()


IntraCoreMappingStage = ZigZagCoreMappingEstimationStage


class SetFixedAllocationPerformanceStage(Stage):
    """Fixed CNs already carry their cost (``latency_total2``) in the allocation problem; passed on."""

    def run(self):
        if "allocation_problem" not in self.kwargs:
            raise InputError(
                None,
                type(self).__name__,
                "needs the cost table: put ZigZagCoreMappingEstimationStage before it",
            )
        yield from self.substage().run()


class SchedulingOrderGenerationStage(Stage):
    """``scheduling_order``: the CNs as ``(layer id, sub id)`` by priority (docs/models/multi-core.md#scheduling-order)."""

    def __init__(self, list_of_callables, *, workload, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.workload = workload

    def run(self):
        g = self.workload
        order = scheduling_order(g.layer, g.sub_id, g.stacks)
        pairs = [(int(g.layer[i]), int(g.sub_id[i])) for i in order.tolist()]
        yield from self.substage(workload=g, scheduling_order=pairs).run()


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


class CustomSpatialMappingGeneratorStage(Stage):
    """The seed's spatial-mapping generator. In a ZigZag chain (a ``layer`` to map) it is ZigZag's
    :class:`~zigzag.stages.SpatialMappingGeneratorStage` (dataflow from the innermost memories'
    served dimensions); in the Stream chain the cost table already generates every CN's spatial
    mapping that way (docs/tutorials/multi-core.md#8-streams-stage-api-and-one-call-api), so it passes everything on."""

    def run(self):
        if "layer" in self.kwargs:
            yield from SpatialMappingGeneratorStage(self.list_of_callables, **self.kwargs).run()
        else:
            yield from self.substage().run()
