"""Inter-layer data locality: per layer, drop the memory levels its data need not visit.

By default every layer reads its inputs from, and writes its outputs to, the top memory (DRAM).
With data locality, activations passed between consecutive layers stay in the lowest memory that
can hold them, and the network's weights in the lowest memory that holds all of them; each layer
is then searched on a copy of the accelerator without the levels above those (docs/models/mapping-search.md#inter-layer-data-locality:
ZigZag's SearchInterLayerDataLocalityStage and ExploitInterLayerDataLocalityStage).

Memory *indices* here are positions in the accelerator's memory list (0 = first listed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import networkx as nx

from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.vector import MAC_ARRAY, compute_unit
from zigzag.workload.layer import Layer, activation_and_weight_operands  # noqa: F401 (re-exported)
from zigzag.workload.workload import DummyNode, Workload


@dataclass
class _LayerRecord:
    act: str  # memory operands
    weight: str
    output: str
    act_bits: int
    output_bits: int
    level: dict[str, int]

    def lower(self, mem_operand: str, index: int) -> None:
        if self.level[mem_operand] == -1 or self.level[mem_operand] > index:
            self.level[mem_operand] = index


@dataclass(frozen=True)
class DataLocalityPlan:
    """Where each layer's activations and outputs live, and where all weights live."""

    io_levels: dict[int, dict[str, int]]  # layer id -> {memory operand: memory index}
    weight_level: int


def plan_data_locality(workload: Workload, accelerator: Accelerator) -> DataLocalityPlan:
    """The lowest memory index for each layer's inputs/outputs and for the network's weights."""
    graph = workload.without_dummies()
    first = next(iter(graph.nodes))
    act0, weight0 = activation_and_weight_operands(first)
    top = {
        op: _highest_index(accelerator, first.memory_operand(op))
        for op in (act0, weight0, first.output)
    }
    records: dict[Layer, _LayerRecord] = {}
    total_weight_bits = 0
    for layer in graph.nodes:
        act, weight = activation_and_weight_operands(layer)
        if layer.constant_operands:
            act_bits = layer.operand_size_bit(act)
            total_weight_bits += layer.operand_size_bit(weight)
        else:
            act_bits = sum(layer.operand_size_bit(op) for op in layer.inputs)
        output_bits = int(layer.operand_size_elem(layer.output) * layer.precision[layer.output])
        act_m, out_m = layer.memory_operand(act), layer.memory_operand(layer.output)
        records[layer] = _LayerRecord(
            act_m,
            layer.memory_operand(weight),
            out_m,
            act_bits,
            output_bits,
            {act_m: -1, out_m: -1},
        )

    weight_level = top[weight0]
    order = list(nx.topological_sort(graph))
    oa_dims = set(accelerator.operational_array.dimensions)
    for position, layer in enumerate(order):
        record = records[layer]
        is_first = (
            position == 0 or graph.in_degree(layer) == 0
        )  # a layer fed by graph inputs only starts anew
        if not is_first:
            producer = next(iter(graph.predecessors(layer)))
            record.lower(record.act, records[producer].level[records[producer].output])
        successors = list(graph.successors(layer))
        is_branch = len(successors) > 1 or (
            len(successors) == 1 and graph.in_degree(successors[0]) > 1
        )
        if is_branch:
            if is_first:
                record.lower(record.act, top[act0])
            record.lower(record.output, top[first.output])
            continue
        next_act = records[successors[0]].act if successors else record.act
        for index in range(len(accelerator.memories) - 1, -1, -1):
            memory = accelerator.memories[index]
            served = list(memory.operands)
            io_both = next_act in served and record.output in served
            holds_weight = record.weight in served
            if io_both and not layer.constant_operands:
                served = [record.output, record.act]
            if not (io_both or holds_weight):
                continue
            sizes = {record.act: record.act_bits, record.output: record.output_bits}
            required = sum(sizes.get(op, 0) for op in served if op != record.weight)
            if record.weight in served:
                required += total_weight_bits
            if required > memory.size * accelerator.unroll_count(memory):
                continue
            if io_both:
                if is_first:
                    record.lower(record.act, index)
                record.lower(record.output, index)
            if index < weight_level and set(memory.served_dimensions) >= oa_dims and holds_weight:
                weight_level = index
    return DataLocalityPlan(
        {layer.id: dict(records[layer].level) for layer in graph.nodes}, weight_level
    )


def _highest_index(accelerator: Accelerator, mem_operand: str) -> int:
    return max(i for i, m in enumerate(accelerator.memories) if mem_operand in m.operands)


def trimmed_accelerator(
    accelerator: Accelerator, layer: Layer, plan: DataLocalityPlan
) -> Accelerator:
    """A copy of ``accelerator`` keeping, per operand, only the memories up to its target."""
    act, weight = activation_and_weight_operands(layer)
    levels = plan.io_levels[layer.id]
    act_m, weight_m, out_m = (layer.memory_operand(op) for op in (act, weight, layer.output))
    target = {
        act_m: levels[act_m],
        weight_m: levels[act_m] if not layer.constant_operands else plan.weight_level,
        out_m: levels[out_m],
    }
    memories = []
    for index, memory in enumerate(accelerator.memories):
        kept = tuple(
            op for op in (act_m, weight_m, out_m) if op in memory.operands and index <= target[op]
        )
        if kept:
            memories.append(dataclasses.replace(memory, operands=kept))
    return Accelerator(
        name=f"{accelerator.name}-removing-nouse-mem",
        operational_array=accelerator.operational_array,
        memories=tuple(memories),
        area_unit=accelerator.area_unit,
    )


def accelerators_with_data_locality(
    workload: Workload, accelerator: Accelerator
) -> dict[int, Accelerator]:
    """Layer id -> the trimmed accelerator that layer is searched on. The plan covers the MAC layers;
    vector layers are passed over as dependencies and keep the whole accelerator (the vector unit
    reads and writes its own memories, docs/models/operators.md)."""
    vector = {
        layer.id for layer in workload.layers if compute_unit(layer, accelerator) != MAC_ARRAY
    }
    if vector:
        if len(vector) == len(workload.layers):
            return {layer.id: accelerator for layer in workload.layers}
        workload = Workload(
            [
                DummyNode(n.id, n.name, n.operator_type, dict(n.operand_source))
                if n.id in vector
                else n
                for n in workload.graph.nodes
            ]
        )
    plan = plan_data_locality(workload, accelerator)
    trimmed = {layer.id: trimmed_accelerator(accelerator, layer, plan) for layer in workload.layers}
    return {**trimmed, **{layer_id: accelerator for layer_id in vector}}
