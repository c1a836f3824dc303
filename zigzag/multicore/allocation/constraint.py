"""Constraint-optimisation allocation: steady states of a CN graph, their slot models, the allocation.

The way through (docs/models/multi-core.md, "Constraint-optimisation allocation"):

1. per layer stack, the *steady state*: the stack's sink CNs are taken layer by layer in turn
   (first sink CN of every sink layer, then the second ones, ...); each such set needs the CNs
   upstream of it not computed yet; the sets with the same count of CNs per layer repeat, and the
   repeating kind with the most MACs over all its repetitions is the steady state (the first set
   of that kind, repeated ``iterations`` times);
2. its slot model (:mod:`zigzag.multicore.allocation.slots`): cycles per CN, core and split from
   the cost table (``latency_total1``, split ``k`` ways along the layer's inter-core tiling dim
   when ``k`` divides that dim's temporal loops), weights and weight memories, dependencies;
3. the cores of each layer of the steady states; layers outside every steady state keep all the
   cores their mapping entry lists. The allocation is written as a fixed mapping (``*`` in an
   inter-core tiling becomes the number of cores) and scheduled by our scheduler.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import networkx as nx
import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.allocation.slots import (
    SlotAllocation,
    SlotProblem,
    solve_slots,
)
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.nodes import OPERANDS
from zigzag.multicore.offchip import cache_read_share
from zigzag.multicore.stream2_mapping import is_generic
from zigzag.multicore.schedule.adapter import CNCost, hardware_for_schedule
from zigzag.multicore.schedule.costs import node_key
from zigzag.multicore.schedule.streaming import granted_rate

#: capacity given to every core when a steady state has a single CN (no weight limit then)
UNLIMITED_BITS = 10**11
WEIGHT_MEMORY = "I2"


@dataclass(frozen=True)
class SteadyState:
    """The repeating part of one layer stack: its CNs (indices) and how often it repeats."""

    stack: tuple[int, ...]
    cns: tuple[int, ...]
    iterations: int
    macs_share: float


@dataclass(frozen=True)
class StackAllocation:
    """One stack's steady state, its slot model and the solver's answer (node id = 1000 * layer + sub id)."""

    state: SteadyState
    problem: SlotProblem
    answer: SlotAllocation
    node_cn: dict[int, int]


@dataclass(frozen=True)
class CoAllocation:
    """The constraint-optimisation allocation of a CN graph: per stack, and cores per layer."""

    stacks: tuple[StackAllocation, ...]
    layer_cores: dict[int, tuple[int, ...]]

    @property
    def solver_seconds(self) -> float:
        return sum(s.answer.seconds for s in self.stacks)


def _cn_macs(graph: CNGraph, cn: int) -> int:
    info = graph.layers[int(graph.layer[cn])]
    ranges = graph.loop_ranges(cn)
    return math.prod(stop - start for dim, (start, stop) in ranges.items() if dim in info.sizes)


def steady_states(graph: CNGraph) -> list[SteadyState]:
    """The steady state of every layer stack that has CNs (see the module's first step)."""
    whole = graph.to_networkx()
    layer = graph.layer.tolist()
    states = []
    for stack in graph.stacks:
        members = [i for i in range(len(graph)) if layer[i] in stack]
        if not members:
            continue
        sub = whole.subgraph(members)
        sinks = sorted(
            (i for i in members if all(layer[s] == layer[i] for s in sub.successors(i))),
            key=lambda i: (layer[i], int(graph.sub_id[i])),
        )
        by_layer = [
            [i for i in sinks if layer[i] == lay] for lay in sorted({layer[i] for i in sinks})
        ]
        turns = [
            tuple(i for i in turn if i is not None) for turn in itertools.zip_longest(*by_layer)
        ]
        computed: set[int] = set()
        first_of_kind: dict[tuple[int, ...], set[int]] = {}
        repeats: dict[tuple[int, ...], int] = {}
        for turn in turns:
            needed = set(turn).union(*(nx.ancestors(sub, i) for i in turn))
            todo = needed - computed
            kind = tuple(sum(1 for i in todo if layer[i] == lay) for lay in stack)
            first_of_kind.setdefault(kind, todo)
            repeats[kind] = repeats.get(kind, 0) + 1
            computed |= needed
        weight = {
            kind: sum(_cn_macs(graph, i) for i in first_of_kind[kind]) * repeats[kind]
            for kind in repeats
        }
        best = max(weight.values())
        kind = next(k for k, v in weight.items() if v == best)
        cns = tuple(sorted(first_of_kind[kind], key=lambda i: (layer[i], int(graph.sub_id[i]))))
        states.append(SteadyState(tuple(stack), cns, repeats[kind], best / sum(weight.values())))
    return states


def _tiling_loop_size(entry, dims: Sequence[str]) -> int:
    """Product of the temporal loops of the output over ``dims`` in the entry's mapping."""
    levels = entry.result.temporal_mapping_stationary["O"]
    return math.prod(int(size) for level in levels for dim, size in level if dim in dims)


def node_id(graph: CNGraph, cn: int, scale: int) -> int:
    return scale * int(graph.layer[cn]) + int(graph.sub_id[cn])


def slot_problem(
    graph: CNGraph,
    accelerator: MultiCoreAccelerator,
    table: CostTable,
    state: SteadyState,
    latency_model: str = "zigzag",
) -> tuple[SlotProblem, dict[int, int]]:
    """The slot model of ``state`` and the node id of each of its CNs (``1000 * layer + sub id``);
    with ``latency_model`` ``bandwidth_bound`` a CN lasts at least its streamed DRAM bits over its
    links to the DRAM, as the scheduler makes it."""
    scale = max(1000, 10 ** math.ceil(math.log10(int(graph.sub_id.max()) + 1)))
    cores = tuple(sorted(c.id for c in accelerator.cores if c.id != accelerator.offchip_core_id))
    rep = graph.cost_node()
    ids = {node_id(graph, cn, scale): cn for cn in state.cns}
    links = _dram_links(accelerator) if latency_model == "bandwidth_bound" else None
    shared = _shared_links(links) if links is not None else set()
    runtime: dict[tuple[int, int, int], int] = {}
    link_cycles: dict[tuple[int, int, int], dict[int, int]] = {}
    energy: dict[tuple[int, int], float] = {}
    weight_bits: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    free_layers = {int(graph.layer[cn]) for cn in ids.values()}  # not pinned to their cores
    for nid, cn in sorted(ids.items()):
        info = graph.layers[int(graph.layer[cn])]
        key = node_key(graph, int(rep[cn]))
        pinned = _pinned(info) and int(graph.core[cn]) in cores
        valid = (
            [int(graph.core[cn])]
            if pinned
            else [c for c in dict.fromkeys(info.core_allocation) if c in cores]
        )
        dims = [d for d, _ in info.inter_core_tiling]
        for core in valid:
            entry = table.entry(key, core)
            total = entry.result.latency_total1
            on_links = {}
            if links is not None:
                cost = cache_read_share(
                    CNCost.of_entry(entry, dram=table.dram), info.cache_operands
                )
                on_links = _link_occupancy(cost, links[core], total)
                total = max(total, _streamed_cycles(cost, links[core]))
            loops = _tiling_loop_size(entry, dims)
            energy[nid, core] = entry.energy_total
            for k in range(1, len(cores) + 1):
                if loops % k == 0 and k <= len(valid):  # a pinned CN: valid is its one core
                    parts = min(loops, k)
                    runtime[nid, core, k] = int(total / parts)
                    busy = {lk: int(c / parts) for lk, c in on_links.items() if lk in shared}
                    if any(busy.values()):
                        link_cycles[nid, core, k] = busy
        group = groups.setdefault(int(graph.layer[cn]), [])
        if pinned:
            free_layers.discard(int(graph.layer[cn]))
        bits = (
            int(graph.tensor_bits[cn, OPERANDS.index("W")]) if "W" in info.constant_operands else 0
        )
        weight_bits[nid] = bits if not group else 0
        group.append(nid)
    capacity = {
        c: (
            accelerator.core(c).top_memory(WEIGHT_MEMORY).capacity
            if len(ids) > 1
            else UNLIMITED_BITS
        )
        for c in cores
    }
    members = set(state.cns)
    back = {cn: nid for nid, cn in ids.items()}
    dependencies = tuple(
        sorted(
            {
                (back[s], back[d])
                for s, d in zip(graph.edge_src.tolist(), graph.edge_dst.tolist())
                if s in members and d in members
            }
        )
    )
    problem = SlotProblem(
        tuple(sorted(ids)),
        cores,
        runtime,
        weight_bits,
        capacity,
        dependencies,
        tuple(tuple(g) for lay, g in sorted(groups.items()) if lay in free_layers),
        state.iterations,
        energy,
        link_cycles,
    )
    return problem, ids


def _pinned(info) -> bool:
    """Whether a layer's CNs keep the cores its mapping fixes: a fixed allocation with a numeric
    inter-core split (``[K, 4]`` over four listed cores), which leaves the solver nothing to split."""
    return info.core_allocation_is_fixed and not any(f == "*" for _, f in info.inter_core_tiling)


def _dram_links(
    accelerator: MultiCoreAccelerator,
) -> dict[int, list[tuple[int, float, bool, bool]]]:
    """Per core: (link, bandwidth, carries reads, carries writes) of each link between it and the
    DRAM."""
    hw = hardware_for_schedule(accelerator)
    out = {}
    for core in hw.cores:
        reads, writes = (
            hw.routes.get((hw.offchip_core, core), ()),
            hw.routes.get((core, hw.offchip_core), ()),
        )
        out[core] = [
            (lk, hw.links[lk].bandwidth, lk in reads, lk in writes)
            for lk in dict.fromkeys(reads + writes)
        ]
    return out


def _shared_links(links: dict[int, list[tuple[int, float, bool, bool]]]) -> set[int]:
    """The DRAM links on the way of more than one core: parts on those cores in one slot queue there."""
    users: dict[int, int] = {}
    for core_links in links.values():
        for lk, *_ in core_links:
            users[lk] = users.get(lk, 0) + 1
    return {lk for lk, count in users.items() if count > 1}


def _streamed_cycles(cost: CNCost, links: list[tuple[int, float, bool, bool]]) -> float:
    """The cycles a CN's streamed DRAM bits (``cost.dram_bits``, shares applied) need on its busiest
    link to the DRAM."""
    bits = cost.dram_bits or ()
    read, write = sum(r for r, _ in bits), sum(w for _, w in bits)
    return (
        max(
            (read * carries_read + write * carries_write) / bandwidth
            for _, bandwidth, carries_read, carries_write in links
        )
        if bits and links
        else 0.0
    )


def _link_occupancy(
    cost: CNCost, links: list[tuple[int, float, bool, bool]], runtime: float
) -> dict[int, float]:
    """Per link to the DRAM, the cycles of its whole width a streaming CN holds, as the scheduler
    reserves it (:func:`zigzag.multicore.schedule.streaming.granted_rate`): the CN lasts its run
    time (or its bits over the link, when longer) at the rate it is granted, a share of the width."""
    bits = cost.dram_bits or ()
    if not bits:
        return {}
    reads = any(m != "O" for m in cost.too_large)
    writes = "O" in cost.too_large
    read, write = sum(r for r, _ in bits), sum(w for _, w in bits)
    held = {}
    for lk, bandwidth, carries_read, carries_write in links:
        on_read, on_write = carries_read and reads, carries_write and writes
        need = cost.bw_from_offchip * on_read + cost.bw_to_offchip * on_write
        moved = read * on_read + write * on_write
        rate = granted_rate(need, moved, runtime, bandwidth)
        if rate > 0:
            held[lk] = max(runtime, moved / bandwidth) * rate / bandwidth
    return held


def allocate(
    graph: CNGraph,
    accelerator: MultiCoreAccelerator,
    table: CostTable,
    *,
    time_limit: float,
    gap: float,
    latency_model: str = "zigzag",
) -> CoAllocation:
    """Solve every stack's steady state and give each of their layers its cores (``latency_model``:
    as :func:`slot_problem`)."""
    stacks = []
    layer_cores: dict[int, tuple[int, ...]] = {}
    for state in steady_states(graph):
        problem, ids = slot_problem(graph, accelerator, table, state, latency_model)
        try:
            answer = solve_slots(problem, time_limit=time_limit, gap=gap)
        except InputError as exc:
            layers = sorted({int(graph.layer[cn]) for cn in state.cns})
            raise InputError(
                exc.file, f"{exc.where} of the stack of layers {layers}", exc.message
            ) from None
        stacks.append(StackAllocation(state, problem, answer, ids))
        for _, core, nid in answer.parts:
            lay = int(graph.layer[ids[nid]])
            # a pinned layer's steady state may show only some of its groups: all its cores
            on = graph.layers[lay].core_allocation if _pinned(graph.layers[lay]) else (core,)
            layer_cores[lay] = tuple(sorted(set(layer_cores.get(lay, ())) | set(on)))
    return CoAllocation(tuple(stacks), layer_cores)


def co_mapping(
    mapping: StreamMapping, graph: CNGraph, layer_cores: dict[int, tuple[int, ...]]
) -> list[dict]:
    """The mapping's entries plus a fixed entry per layer: its cores, ``*`` = their number."""
    entries = dict(mapping.entries)
    for lay, info in sorted(graph.layers.items()):
        entry = mapping.entry_for(info.name, info.op_type)
        fixed_2x = is_generic(entry) and info.core_allocation_is_fixed
        if is_generic(entry):  # Stream 2.x loops (D0..Dn, tile sizes): the layer's resolved ones
            entry = replace(
                entry,
                intra_core_tiling=tuple(map(tuple, info.intra_core_tiling)),
                inter_core_tiling=tuple(map(tuple, info.inter_core_tiling)),
                tile_sizes=(),
            )
        if not entry.inter_core_tiling:  # the split the tiling defaulted to (e.g. [K, *])
            entry = replace(entry, inter_core_tiling=tuple(map(tuple, info.inter_core_tiling)))
        cores = layer_cores.get(lay, tuple(info.core_allocation))
        if _pinned(info):  # its groups stay on the cores the mapping lists, one per group
            cores = tuple(info.core_allocation)
        if fixed_2x:  # a 2.x split over its listed cores stays there (the steady state may not
            cores = tuple(info.core_allocation)  # show every group)
        inter = tuple((d, len(cores) if f == "*" else f) for d, f in entry.inter_core_tiling)
        if len(inter) > 1 and any(f == "*" for _, f in entry.inter_core_tiling):
            raise InputError(
                mapping.file,
                f"entry '{entry.name}'.inter_core_tiling",
                "has more than one dim with '*'; the constraint optimisation splits one dim",
            )
        entries[info.name] = replace(
            entry,
            name=info.name,
            core_allocation=tuple(cores),
            core_allocation_is_fixed=True,
            group_allocation=entry.group_allocation if fixed_2x else None,
            inter_core_tiling=inter,
        )
    ordered = [entries["default"]] + [e for name, e in entries.items() if name != "default"]
    return [e.to_dict() for e in ordered]


def parts_table(graph: CNGraph, allocation: CoAllocation) -> list[dict]:
    """One row per scheduled part: stack, slot, core, layer, sub id (for ``co_slots.csv``)."""
    rows = []
    for index, stack in enumerate(allocation.stacks):
        for slot, core, nid in stack.answer.parts:
            cn = stack.node_cn[nid]
            rows.append(
                {
                    "stack": index,
                    "slot": slot,
                    "core": core,
                    "layer": int(graph.layer[cn]),
                    "sub_id": int(graph.sub_id[cn]),
                }
            )
    return rows


def macs_of(graph: CNGraph, cns: Sequence[int]) -> int:
    return int(np.sum([_cn_macs(graph, i) for i in cns]))
