"""The Stage API's generation stages: the CN graph (the seed's CN definition modes or the mapping's
tiling), the layer stacks and the scheduling order."""

from __future__ import annotations

from zigzag.errors import InputError
from zigzag.multicore.cn_graph import CNGraph, build_cn_graph
from zigzag.multicore.cn_limit import DEFAULT_MAX_CNS, cn_limit
from zigzag.multicore.inputs import HardwareFacts
from zigzag.multicore.pipeline.spec import MODES
from zigzag.multicore.schedule.order import scheduling_order
from zigzag.multicore.tiling import SeedTiling
from zigzag.multicore.workload import StreamWorkload
from zigzag.stages.stage import Stage

__all__ = [
    "GenerateCNWorkloadHybridStage",
    "LayerStacksGenerationStage",
    "SchedulingOrderGenerationStage",
    "TiledWorkloadGenerationStage",
    "TilingGenerationStage",
]


class _CNGraphStage(Stage):
    """Builds the CN graph (``workload`` := :class:`CNGraph`, ``original_workload`` := the layers);
    ``max_cns`` (default :data:`~zigzag.multicore.cn_limit.DEFAULT_MAX_CNS`, ``None``: no limit)
    bounds its CN count, checked before any CN is built."""

    def graph(
        self, workload: StreamWorkload, mode: str, stacks, seed: SeedTiling | None
    ) -> CNGraph:
        facts = HardwareFacts.of(self.kwargs["accelerator"])
        if seed is not None:
            seed = seed.with_capacities(facts.weight_capacities)
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
