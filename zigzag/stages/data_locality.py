"""Inter-layer data locality: keep activations and weights in the lowest memory that can hold
them between layers, and search each layer without the memory levels above
(``zigzag.hardware.data_locality``)."""

from __future__ import annotations

from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.data_locality import (
    DataLocalityPlan,
    activation_and_weight_operands,
    plan_data_locality,
    trimmed_accelerator,
)
from zigzag.stages.stage import Stage
from zigzag.workload.workload import Workload


def with_workload_data_from_top(
    plan: DataLocalityPlan, workload: Workload, accelerator: Accelerator
) -> DataLocalityPlan:
    """``plan`` with the network's first inputs and last outputs moved to the top memory."""
    graph = workload.without_dummies()
    levels = {layer_id: dict(record) for layer_id, record in plan.io_levels.items()}

    def top(mem_operand: str) -> int:
        return max(i for i, m in enumerate(accelerator.memories) if mem_operand in m.operands)

    for layer in graph.nodes:
        if graph.in_degree(layer) == 0:
            act = layer.memory_operand(activation_and_weight_operands(layer)[0])
            levels[layer.id][act] = top(act)
        if graph.out_degree(layer) == 0:
            out = layer.memory_operand(layer.output)
            levels[layer.id][out] = top(out)
    return DataLocalityPlan(levels, plan.weight_level)


class SearchInterLayerDataLocalityStage(Stage):
    """Decides, once per network, the lowest memory (index in the accelerator's memory list) for
    each layer's activations and outputs and for all weights; passes them on as
    ``mem_update_list`` (``{layer id: {memory operand: index}}``) and ``mem_update_weight``.
    Place it above :class:`WorkloadStage` (it passes ``accelerator`` and ``workload`` on).

    ``workload_data_always_from_top_mem=True`` makes the network's first inputs and last outputs
    travel from/to the top memory.
    """

    def __init__(
        self,
        list_of_callables,
        *,
        accelerator,
        workload,
        workload_data_always_from_top_mem=False,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator
        self.workload = workload
        self.from_top = workload_data_always_from_top_mem

    def run(self):
        plan = plan_data_locality(self.workload, self.accelerator)
        if self.from_top:
            plan = with_workload_data_from_top(plan, self.workload, self.accelerator)
        yield from self.substage(
            accelerator=self.accelerator,
            workload=self.workload,
            mem_update_list=plan.io_levels,
            mem_update_weight=plan.weight_level,
        ).run()


class ExploitInterLayerDataLocalityStage(Stage):
    """Runs the rest of the pipeline on a copy of the accelerator without the memory levels the
    layer's data need not visit (as decided by :class:`SearchInterLayerDataLocalityStage`).
    Place it below :class:`WorkloadStage`."""

    def __init__(
        self, list_of_callables, *, accelerator, layer, mem_update_list, mem_update_weight, **kwargs
    ):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator
        self.layer = layer
        self.plan = DataLocalityPlan(mem_update_list, mem_update_weight)

    def run(self):
        accelerator = trimmed_accelerator(self.accelerator, self.layer, self.plan)
        yield from self.substage(accelerator=accelerator, layer=self.layer).run()


#: Names of the two stages in older ZigZag versions.
SearchUnusedMemoryStage = SearchInterLayerDataLocalityStage
RemoveUnusedMemoryStage = ExploitInterLayerDataLocalityStage
