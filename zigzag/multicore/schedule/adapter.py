"""A :class:`ScheduleProblem` from the CN graph, per-CN costs and the multi-core accelerator.

* :func:`hardware_for_schedule`: a :class:`~zigzag.multicore.hardware.MultiCoreAccelerator` as the
  scheduler's :class:`ScheduleHardware` (top memories in Stream's memory-manager order, links,
  routes);
* :class:`CNCost`: what the scheduler needs of one CN's cost-table entry;
* :func:`problem_from_cn_graph`: CN graph + accelerator + one :class:`CNCost` per CN (+ the cores,
  if the graph leaves some to be allocated) → problem, scheduling order from the graph's stacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.nodes import INTRA, OPERANDS
from zigzag.multicore.offchip import streamed_bits, streamed_read_energy
from zigzag.multicore.schedule.order import scheduling_order
from zigzag.multicore.schedule.problem import (
    Link,
    ScheduleHardware,
    ScheduleProblem,
    TopMemory,
    memory_operand_index,
)
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS

#: Stream's fixed links: layer operand -> memory operand.


def hardware_for_schedule(accelerator: MultiCoreAccelerator) -> ScheduleHardware:
    """The scheduler's view of ``accelerator`` (which must have an off-chip core)."""
    if accelerator.offchip_core_id is None:
        raise InputError(
            accelerator.file,
            "offchip_core",
            "the scheduler needs an off-chip core; add offchip_core",
        )
    in_graph = list(accelerator.graph.nodes)
    core_order = in_graph + [c.id for c in accelerator.cores if c.id not in in_graph]
    index: dict = {}
    users: list[list[int]] = []
    top_memory = np.full((len(accelerator.cores), 3), -1, dtype=np.int64)
    for core_id in core_order:
        for memory in accelerator.core(core_id).top_memories:
            if memory not in index:
                index[memory] = len(users)
                users.append([])
            users[index[memory]].append(core_id)
            for op in memory.operands:
                m = memory_operand_index(op)
                if top_memory[core_id, m] < 0:
                    top_memory[core_id, m] = index[memory]
    memories = tuple(
        TopMemory(m.name, int(m.capacity), m.r_bw, m.w_bw, m.r_cost, m.w_cost, tuple(users[i]))
        for m, i in index.items()
    )
    links = tuple(
        Link(str(lk.sender), str(lk.receiver), lk.bandwidth, lk.unit_energy_cost, lk.bidirectional)
        for lk in accelerator.links
    )
    position = {lk.id: i for i, lk in enumerate(accelerator.links)}
    routes = {
        pair: tuple(position[lk.id] for lk in route) for pair, route in accelerator.routes.items()
    }
    return ScheduleHardware(
        tuple(in_graph), accelerator.offchip_core_id, memories, top_memory, links, routes
    )


@dataclass(frozen=True)
class CNCost:
    """One CN's cost on its core, as the scheduler uses it (docs/models/multi-core.md#cost-table)."""

    runtime: float  # cycles (latency_total2 for fixed CNs, int(latency_total1) for GA-placed ones)
    onchip_energy: float
    offchip_energy: float
    too_large: tuple[str, ...] = ()  # memory operands streamed from DRAM, equation order
    bw_to_offchip: float = 0.0  # wr_in_by_low
    bw_from_offchip: float = 0.0  # rd_out_to_low
    #: (bits read from, bits written to) DRAM per operand of ``too_large`` (None: not known)
    dram_bits: tuple[tuple[float, float], ...] | None = None
    #: energy of the DRAM reads of each operand of ``too_large``, part of ``offchip_energy``
    dram_read_energy: tuple[float, ...] = ()

    @classmethod
    def of_entry(cls, entry, runtime: float | None = None, dram=None) -> "CNCost":
        """From a cost-table entry (``latency``, energies, ``too_large_operands``, ``offchip_bw``);
        ``dram``: the off-chip memory, to count the bits its streamed operands move."""
        bw = entry.offchip_bw or {}
        too_large = tuple(entry.too_large_operands)
        bits = (
            streamed_bits(entry.result, too_large, dram) if dram is not None and too_large else None
        )
        return cls(
            entry.latency if runtime is None else runtime,
            entry.onchip_energy,
            entry.offchip_energy,
            too_large,
            bw.get("wr_in_by_low", 0),
            bw.get("rd_out_to_low", 0),
            bits if too_large else (),
            streamed_read_energy(entry.result, too_large),
        )


def problem_from_cn_graph(
    graph: CNGraph,
    accelerator: MultiCoreAccelerator | ScheduleHardware,
    costs: Sequence[CNCost],
    cores: Sequence[int] | None = None,
    prefetch: Sequence[str] = (),
    name: str = "schedule",
    latency_model: str = "zigzag",
) -> ScheduleProblem:
    """The scheduling problem of ``graph`` with one cost per CN (CN index order).

    ``cores`` overrides the graph's cores (needed where the graph has -1: to be allocated);
    ``prefetch`` lists layer operands (e.g. ``["W"]``) whose constant tensors are sent to their
    cores before scheduling (Stream's ``operands_to_prefetch``); ``latency_model``: see
    :class:`ScheduleProblem`.
    """
    hw = (
        accelerator
        if isinstance(accelerator, ScheduleHardware)
        else hardware_for_schedule(accelerator)
    )
    n = len(graph)
    if len(costs) != n:
        raise InputError(None, "costs", f"{len(costs)} CN costs for {n} CNs; give one per CN")
    core = np.asarray(graph.core if cores is None else cores, dtype=np.int64)
    if len(core) != n or (n and core.min() < 0):
        raise InputError(
            None, "cores", "every CN needs a core; allocate the CNs the graph leaves open (-1)"
        )
    memop_of_column = np.array(
        [memory_operand_index(STREAM_MEMORY_OPERAND_LINKS[op]) for op in OPERANDS], dtype=np.int64
    )
    operand_tensor = np.full((n, 3), -1, dtype=np.int64)
    operand_tensor[:, memop_of_column] = graph.tensor_id
    tensor_operand = memop_of_column[graph.tensor_operand]
    origin = np.full(len(graph.tensor_size), n, dtype=np.int64)
    rows, cols = np.nonzero(graph.tensor_id >= 0)
    np.minimum.at(origin, graph.tensor_id[rows, cols], rows)
    constants = tuple(
        tuple(
            memory_operand_index(STREAM_MEMORY_OPERAND_LINKS[op])
            for op in graph.layers[int(lay)].constant_operands
        )
        for lay in graph.layer.tolist()
    )
    caches = {  # KV caches only: gathered expert weights are weights
        int(lay): tuple(
            memory_operand_index(STREAM_MEMORY_OPERAND_LINKS[op])
            for op in graph.layers[int(lay)].cache_operands
            if op not in graph.layers[int(lay)].gathered_operands
        )
        for lay in np.unique(graph.layer).tolist()
    }
    cache_constants = (
        tuple(caches[lay] for lay in graph.layer.tolist()) if any(caches.values()) else ()
    )
    edge_operand = np.where(
        graph.edge_operand == INTRA, -1, memop_of_column[np.maximum(graph.edge_operand, 0)]
    )
    preload = []
    for i in np.argsort(graph.node_order, kind="stable").tolist():  # Stream's node order
        info = graph.layers[int(graph.layer[i])]
        for op in info.operand_dims:  # equation order
            if op in prefetch and op in info.constant_operands:
                m = memory_operand_index(STREAM_MEMORY_OPERAND_LINKS[op])
                preload.append((int(operand_tensor[i, m]), int(core[i]), m))
    return ScheduleProblem(
        hardware=hw,
        layer=graph.layer.astype(np.int64),
        sub=graph.sub_id.astype(np.int64),
        core=core,
        runtime=np.array([c.runtime for c in costs], dtype=np.float64),
        onchip_energy=np.array([c.onchip_energy for c in costs], dtype=np.float64),
        offchip_energy=np.array([c.offchip_energy for c in costs], dtype=np.float64),
        too_large=tuple(tuple(memory_operand_index(m) for m in c.too_large) for c in costs),
        bw_to_offchip=np.array([c.bw_to_offchip for c in costs], dtype=np.float64),
        bw_from_offchip=np.array([c.bw_from_offchip for c in costs], dtype=np.float64),
        dram_bits=tuple(c.dram_bits for c in costs),
        final_output=graph.produces_final_output.astype(bool),
        operand_tensor=operand_tensor,
        constants=constants,
        cache_constants=cache_constants,
        tensor_size=graph.tensor_size.astype(np.int64),
        tensor_operand=tensor_operand,
        tensor_origin=origin,
        tensor_base_priority=graph.tensor_base_priority.astype(np.int64),
        edge_src=graph.edge_src.astype(np.int64),
        edge_dst=graph.edge_dst.astype(np.int64),
        edge_operand=edge_operand.astype(np.int64),
        edge_bits=graph.edge_bits.astype(np.int64),
        order=scheduling_order(graph.layer, graph.sub_id, graph.stacks),
        prefetch=tuple(preload),
        name=name,
        latency_model=latency_model,
        layer_names={int(i): info.name for i, info in graph.layers.items()},
    ).validated()
