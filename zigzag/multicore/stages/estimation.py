"""The Stage API's estimation stages: the cost table of every CN class on its candidate cores (with
the allocation problem built from it), the fixed CNs' costs, and the seed's spatial-mapping generator."""

from __future__ import annotations

from zigzag.errors import InputError
from zigzag.multicore.allocation import build_allocation_problem
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.pipeline.prepared import cost_table
from zigzag.stages import SpatialMappingGeneratorStage
from zigzag.stages.stage import Stage

__all__ = [
    "CustomSpatialMappingGeneratorStage",
    "IntraCoreMappingStage",
    "SetFixedAllocationPerformanceStage",
    "ZigZagCoreMappingEstimationStage",
]


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
