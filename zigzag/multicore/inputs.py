"""From the three Stream input files to a CN graph in one call.

``load_cn_graph_inputs`` reads the accelerator, the mapping and the ONNX workload (docs/models/multi-core.md#hardware); ``cn_graph_from_files`` adds the generation steps (docs/models/multi-core.md#computation-nodes). What the node
generation needs from the hardware is collected in ``HardwareFacts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx

from zigzag.multicore.cn_graph import CNGraph, build_cn_graph
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.automap import automatic_mapping
from zigzag.multicore.core_kinds import general_cores
from zigzag.multicore.mapping import MappingEntry, StreamMapping, load_stream_mapping
from zigzag.multicore.splitting import split_layers, weight_split_factors
from zigzag.multicore.tiling import SeedTiling
from zigzag.multicore.workload import StreamWorkload
from zigzag.multicore.workload_onnx import read_stream_workload


@dataclass(frozen=True)
class HardwareFacts:
    """Per compute core: its dataflow (spatial mapping, or None) and the bits of its top ``I2`` memory."""

    dataflows: dict[int, dict | None]
    weight_capacities: dict[int, int]
    vector_classes: dict[int, frozenset[str]] = field(
        default_factory=dict
    )  # classes each core's vector unit runs
    vector_memory_bits: dict[int, int] = field(default_factory=dict)  # their smallest top memory

    @property
    def total_weight_capacity(self) -> int:
        return sum(self.weight_capacities.values())

    @classmethod
    def of(cls, accelerator: MultiCoreAccelerator) -> "HardwareFacts":
        dataflows, capacities, vector, bits = {}, {}, {}, {}
        for core in accelerator.compute_cores:
            unit = getattr(core.accelerator, "vector_unit", None)
            if unit is not None:
                vector[core.id] = frozenset(unit.operations)
                bits[core.id] = min(m.capacity for m in core.top_memories)
            dataflows[core.id] = core.dataflows
            weights = [m for m in core.top_memories if "I2" in m.operands]
            if weights:
                capacities[core.id] = weights[0].capacity
        return cls(dataflows, capacities, vector, bits)


def load_cn_graph_inputs(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    cwd: str | None = None,
    *,
    layer_splits: dict[str, int] | None = None,
    split_W_fraction: float | None = None,
) -> tuple[MultiCoreAccelerator, StreamWorkload, HardwareFacts]:
    """Parse the hardware (core files found from ``cwd`` as Stream does), mapping (a file, a
    parsed :class:`StreamMapping`, or None for the automatic mapping of ``zigzag.multicore.automap``)
    and workload.

    ``layer_splits`` ({node name: n}) and ``split_W_fraction`` (automatic factors, see
    ``zigzag.multicore.splitting``) split Conv/Gemm layers along K in the graph before anything else.
    """
    if not isinstance(accelerator, MultiCoreAccelerator):
        accelerator = load_multicore_accelerator(accelerator, cwd)
    facts = HardwareFacts.of(accelerator)
    if mapping is None:
        stream_mapping = mapping_for(accelerator, workload, facts)
    elif isinstance(mapping, StreamMapping):
        stream_mapping = mapping
    else:
        stream_mapping = load_stream_mapping(mapping, accelerator)
    parsed = read_stream_workload(
        workload,
        stream_mapping,
        facts.dataflows,
        vector_classes=facts.vector_classes,
        vector_memory_bits=facts.vector_memory_bits,
    )
    splits = dict(layer_splits or {})
    if split_W_fraction is not None:
        splits = weight_split_factors(parsed, facts.weight_capacities, split_W_fraction) | splits
    if splits:
        model = split_layers(
            onnx.load(str(workload), load_external_data=False), splits, str(workload)
        )
        parsed = read_stream_workload(
            model,
            stream_mapping,
            facts.dataflows,
            file=str(workload),
            check_entries=False,
            vector_classes=facts.vector_classes,
            vector_memory_bits=facts.vector_memory_bits,
        )
    return accelerator, parsed, facts


def mapping_for(
    accelerator: MultiCoreAccelerator, workload: str | Path, facts: HardwareFacts | None = None
) -> StreamMapping:
    """The automatic mapping of ``workload`` on ``accelerator`` (its layers read once to know
    their operator types)."""
    facts = facts or HardwareFacts.of(accelerator)
    probe = StreamMapping(
        {"default": MappingEntry("default", core_allocation=general_cores(accelerator))}
    )
    parsed = read_stream_workload(
        workload,
        probe,
        facts.dataflows,
        check_entries=False,
        vector_classes=facts.vector_classes,
        vector_memory_bits=facts.vector_memory_bits,
    )
    return automatic_mapping(accelerator, parsed)


def layer_stacks_of(workload: StreamWorkload) -> list[tuple[int, ...]] | None:
    """The layer stacks of a Stream 2.x mapping's ``fused_groups``, as layer ids (None without).

    Groups are matched in order along the workload: a group takes the layers, from the first not
    yet taken, whose node name or op type it lists, until a layer it does not list; layers no group
    takes stand alone."""
    if not workload.fused_groups:
        return None
    layers = sorted(workload.layers, key=lambda layer: layer.id)
    stacks, position = [], 0
    for group in workload.fused_groups:
        names = set(group)
        while position < len(layers) and not _listed(layers[position], names):
            position += 1
        stack = []
        while position < len(layers) and _listed(layers[position], names):
            stack.append(layers[position].id)
            position += 1
        if stack:
            stacks.append(tuple(stack))
    return stacks


def _listed(layer, names: set[str]) -> bool:
    return layer.name in names or layer.op_type in names


def cn_graph_from_files(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    mode: str,
    layer_stacks: list[tuple[int, ...]] | None = None,
    *,
    seed: SeedTiling | None = None,
    cwd: str | None = None,
    layer_splits: dict[str, int] | None = None,
    split_W_fraction: float | None = None,
) -> CNGraph:
    """The CN graph of ``workload`` on ``accelerator`` under ``mapping`` in ``mode`` (lbl / fused)."""
    _, parsed, facts = load_cn_graph_inputs(
        accelerator,
        workload,
        mapping,
        cwd,
        layer_splits=layer_splits,
        split_W_fraction=split_W_fraction,
    )
    if seed is not None:
        seed = seed.with_capacities(facts.weight_capacities)
    if layer_stacks is None and mode == "fused":
        layer_stacks = layer_stacks_of(parsed)
    return build_cn_graph(
        parsed, mode, layer_stacks, seed=seed, weight_capacity=facts.total_weight_capacity
    )
