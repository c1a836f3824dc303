"""Plain, read-only views of a schedule under the names Stream's objects use (CNs of the
workload graph, the accelerator's memory and communication managers). Times in cycles, sizes in
bits, energies in pJ; tensors are named by our tensor index. The workload and memory views keep
the schedule they were read from (``schedule``), so Stream's older calls that pass them to a
picture function (``plot_memory_usage(scme.accelerator.memory_manager)``) can draw it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ScheduledNode:
    """One scheduled CN: ``id`` is its layer id (as Stream's ``node.id``), ``sub_id`` its index in the layer."""

    index: int
    id: int
    sub_id: int
    name: str
    chosen_core_allocation: int
    start: int | float
    end: int | float
    runtime: int | float
    onchip_energy: float
    offchip_energy: float

    @property
    def short_name(self) -> str:
        return self.name or f"layer {self.id}"


@dataclass(frozen=True)
class ScheduledWorkload:
    """The scheduled CN graph: ``node_list`` and networkx-like reads of its edges."""

    node_list: tuple[ScheduledNode, ...]
    edge_list: tuple[tuple[int, int], ...]  # (producer index, consumer index)
    order: tuple[int, ...]  # a topological order of the indices
    schedule: object = field(default=None, repr=False, compare=False)
    _pred: dict[int, list[int]] = field(init=False, repr=False, compare=False)
    _succ: dict[int, list[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        pred: dict[int, list[int]] = {n.index: [] for n in self.node_list}
        succ: dict[int, list[int]] = {n.index: [] for n in self.node_list}
        for src, dst in self.edge_list:
            pred[dst].append(src)
            succ[src].append(dst)
        object.__setattr__(self, "_pred", pred)
        object.__setattr__(self, "_succ", succ)

    def edges(self) -> list[tuple[ScheduledNode, ScheduledNode]]:
        return [(self.node_list[s], self.node_list[d]) for s, d in self.edge_list]

    def predecessors(self, node: ScheduledNode) -> Iterator[ScheduledNode]:
        return (self.node_list[i] for i in self._pred[node.index])

    def successors(self, node: ScheduledNode) -> Iterator[ScheduledNode]:
        return (self.node_list[i] for i in self._succ[node.index])

    def topological_sort(self) -> list[ScheduledNode]:
        return [self.node_list[i] for i in self.order]

    def number_of_nodes(self) -> int:
        return len(self.node_list)

    def number_of_edges(self) -> int:
        return len(self.edge_list)


@dataclass(frozen=True)
class MemoryManagerView:
    """Per top memory (``<name>@core<first core>``): usage steps as rows ``(time, bits)``,
    capacity in bits, and the cores sharing it."""

    top_instance_stored_cumsum: dict[str, np.ndarray]
    top_instance_capacities: dict[str, int]
    cores_per_top_instance: dict[str, list[int]]
    offchip_core_id: int
    schedule: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class LinkEventView:
    """One activity on a link: ``type`` is ``transfer`` or ``block`` (a CN streaming from DRAM)."""

    type: str
    start: int | float
    end: int | float
    activity: int  # bits/cycle used
    tensors: tuple[int, ...]


@dataclass(frozen=True)
class LinkView:
    """One link object and its events."""

    sender: str
    receiver: str
    bandwidth: float
    unit_energy_cost: float
    bidirectional: bool
    events: tuple[LinkEventView, ...]

    def get_name_for_schedule_plot(self) -> str:
        """``Core(0) -> Core(1)``; ``Core(6) <-> Any`` for a core's link to every other."""
        return (
            f"{_core(self.sender)} {'<->' if self.bidirectional else '->'} {_core(self.receiver)}"
        )


def _core(name: str) -> str:
    return f"Core({name})" if name.isdigit() else name


@dataclass(frozen=True)
class CommunicationManagerView:
    """Every link object, and ``pair_links``: per (sender core, receiver core) the links of its route."""

    links: tuple[LinkView, ...]
    pair_links: dict[tuple[int, int], tuple[LinkView, ...]]


@dataclass(frozen=True)
class ScheduledAccelerator:
    """The hardware side of a schedule: core ids, off-chip core, memory and link managers."""

    core_ids: tuple[int, ...]
    offchip_core_id: int
    memory_manager: MemoryManagerView
    communication_manager: CommunicationManagerView
