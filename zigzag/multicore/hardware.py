"""A multi-core accelerator: ZigZag cores joined by links and buses, with an off-chip (DRAM) core.

Built from the normalised document of `zigzag.io.stream_hardware` by `zigzag.multicore.topology`:

* every core is a single-core :class:`~zigzag.hardware.accelerator.Accelerator` plus its id, its
  `dataflows` (its fixed spatial mapping, if any) and its memory-sharing group;
* links are directed graph edges ``sender -> receiver``; one :class:`Link` may carry several edges
  (a bus, or the single link of a one-port DRAM that all cores share in both directions);
* the route between two cores is the sequence of links of networkx's unweighted shortest path
  in a graph whose nodes and adjacencies follow the order the edges were made (Stream's ties);
* the scheduler tracks only each core's *top memories* (memories nothing sits above); cores of one
  `core_memory_sharing` group have equal top memories: one physical instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.io.legacy_hardware import LegacyPorts
from zigzag.io.stream_links import ANY

__all__ = ["ANY", "Core", "Link", "MultiCoreAccelerator", "TopMemory"]


@dataclass(frozen=True)
class Link:
    """A communication link; `bandwidth` in bits per cycle, `unit_energy_cost` per cycle of activity."""

    id: int
    sender: int | str
    receiver: int | str
    bandwidth: float
    unit_energy_cost: float
    bidirectional: bool = False
    #: the directed core pairs (graph edges) that use this link, in the order they were made
    edges: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class TopMemory:
    """A top memory instance of a core. Cores sharing memory have equal top memories."""

    name: str
    memory_group: int
    operands: tuple[str, ...]  # memory operands stored (I1, I2, O)
    capacity: int  # bits
    r_bw: int
    w_bw: int
    r_cost: float
    w_cost: float
    port_count: int
    min_r_granularity: int | None = None
    min_w_granularity: int | None = None


@dataclass(frozen=True, eq=False)
class Core:
    """One core of a multi-core accelerator."""

    id: int
    accelerator: Accelerator
    file: str
    memory_group: int
    is_offchip: bool = False
    #: 3.8.0 widths and port counts per memory name (derived for current-format memories)
    memory_ports: dict[str, LegacyPorts] = field(default_factory=dict)
    #: a Stream 2.x sharing group's top memories, taken from its first compute core (2.x only
    #: requires equal capacities, so the members' own figures may differ)
    shared_top_memories: tuple["TopMemory", ...] | None = None
    #: ONNX operator types the core runs (Stream 2.x `operator_types`), None for any
    operator_types: tuple[str, ...] | None = None
    #: Stream 2.x core type: compute, offchip or memory (a memory-only core runs nothing)
    kind: str = "compute"

    @property
    def name(self) -> str:
        return self.accelerator.name

    @cached_property
    def dataflows(self) -> dict[str, tuple[tuple[str, int], ...]] | None:
        """The core's fixed spatial mapping, {OA dimension: ((layer dim, size), ...)}, or None."""
        raw = self.accelerator.dataflows
        if raw is None:
            return None
        return {
            dim: tuple((text.split(",")[0].strip(), int(text.split(",")[1])) for text in unrollings)
            for dim, unrollings in raw.items()
        }

    @cached_property
    def top_memories(self) -> tuple[TopMemory, ...]:
        """Memories with nothing above them, in the order listed in the core file."""
        if self.shared_top_memories is not None:
            return self.shared_top_memories
        lower = {low for low, _ in self.accelerator.memory_edges}
        return tuple(self._top(m) for m in self.accelerator.memories if m.name not in lower)

    def top_memory(self, memory_operand: str) -> TopMemory:
        """The first top memory storing `memory_operand`."""
        return next(m for m in self.top_memories if memory_operand in m.operands)

    def _top(self, memory) -> TopMemory:
        ports = self.memory_ports[memory.name]
        return TopMemory(
            name=memory.name,
            memory_group=self.memory_group,
            operands=memory.operands,
            capacity=memory.size,
            r_bw=ports.r_bw,
            w_bw=ports.w_bw,
            r_cost=memory.r_cost,
            w_cost=memory.w_cost,
            port_count=ports.port_count,
            min_r_granularity=ports.min_r_granularity,
            min_w_granularity=ports.min_w_granularity,
        )

    def __repr__(self) -> str:
        return f"Core({self.id}, {self.name!r})"


@dataclass(frozen=True, eq=False)
class MultiCoreAccelerator:
    """Cores (ids 0..N-1, then the off-chip core), links, routes and shared memories."""

    name: str
    cores: tuple[Core, ...]
    links: tuple[Link, ...]
    #: directed graph edges (sender, receiver, link id) in the order they were made
    edges: tuple[tuple[int, int, int], ...]
    offchip_core_id: int | None
    memory_sharing: tuple[tuple[int, ...], ...] = ()
    file: str = ""
    #: the normalised document this was built from (see `zigzag.io.stream_hardware`)
    document: dict = field(default_factory=dict, repr=False)
    link_area_um2: float = 0.0  # area of each core-to-core link (or bus)
    router_area_um2: float = 0.0  # area of the router of each core but the DRAM

    def core(self, core_id: int) -> Core:
        return self.cores[core_id]

    @property
    def coordinates(self) -> dict[int, tuple[int, int]]:
        """Stream 2.x `core_coordinates` by our core id (empty for a late-2024 file)."""
        given = self.document.get("stream2", {}).get("coordinates", {})
        return {int(core): tuple(xy) for core, xy in given.items()}

    def hops(self, sender: int, receiver: int) -> int:
        """Links a transfer crosses (0 for the same core)."""
        return len(self.path(sender, receiver)) - 1

    @property
    def compute_cores(self) -> tuple[Core, ...]:
        return tuple(c for c in self.cores if not c.is_offchip)

    @property
    def interconnect_area_um2(self) -> float:
        """Links and routers: ``link_area`` x the links between cores (the DRAM's not counted) plus
        ``router_area`` x the cores but the DRAM (both 0 unless the file gives them)."""
        offchip = self.offchip_core_id
        links = sum(1 for link in self.links if offchip not in (link.sender, link.receiver))
        return self.link_area_um2 * links + self.router_area_um2 * len(self.compute_cores)

    @property
    def offchip_core(self) -> Core | None:
        return None if self.offchip_core_id is None else self.cores[self.offchip_core_id]

    @cached_property
    def graph_edges(self) -> tuple[tuple[int, int, Link], ...]:
        """(sender core, receiver core, link) in the order the edges were made."""
        return tuple((s, r, self.links[i]) for s, r, i in self.edges)

    @cached_property
    def graph(self):
        """The core graph (networkx DiGraph, attribute `link` on every edge)."""
        import networkx as nx

        graph = nx.DiGraph()
        for sender, receiver, link in self.graph_edges:
            graph.add_edge(sender, receiver, link=link)
        return graph

    def link(self, sender: int, receiver: int) -> Link:
        """The link carrying the edge sender -> receiver."""
        return self.graph.edges[sender, receiver]["link"]

    def route(self, sender: int, receiver: int) -> tuple[Link, ...]:
        """The links a transfer from `sender` to `receiver` crosses (empty for the same core)."""
        path = self.path(sender, receiver)
        return tuple(self.graph.edges[a, b]["link"] for a, b in zip(path, path[1:]))

    def path(self, sender: int, receiver: int) -> tuple[int, ...]:
        """The cores a transfer visits, both ends included (networkx's unweighted shortest path)."""
        key = (sender, receiver)
        if key not in self._paths:
            import networkx as nx

            try:
                self._paths[key] = tuple(nx.shortest_path(self.graph, sender, receiver))
            except (nx.NetworkXNoPath, nx.NodeNotFound):
                raise LookupError(
                    f"no route from core {sender} to core {receiver} in {self.name}"
                ) from None
        return self._paths[key]

    @cached_property
    def _paths(self) -> dict[tuple[int, int], tuple[int, ...]]:
        return {}

    @property
    def paths(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """The path of every connected ordered pair of cores in the graph."""
        table = {}
        for s in self.graph.nodes:
            for t in self.graph.nodes:
                try:
                    table[(s, t)] = self.path(s, t)
                except LookupError:
                    pass
        return table

    @property
    def routes(self) -> dict[tuple[int, int], tuple[Link, ...]]:
        """The links of every path (empty from a core to itself)."""
        return {pair: self.route(*pair) for pair in self.paths}

    def require_dataflows(self, core_ids, file: str, where: str) -> None:
        """Raise a one-line `InputError` about `file`/`where` (a mapping entry that gives no spatial
        mapping) if one of `core_ids` has no `dataflows` to take its spatial mapping from."""
        for core_id in core_ids:
            core = self.cores[core_id]
            if core.dataflows is None:
                raise InputError(
                    file,
                    where,
                    f"core {core_id} ({core.file}) has no dataflows, so its spatial "
                    "mapping must come from here; add spatial_mapping to this entry or dataflows "
                    "to the core file",
                )

    def top_memories(self, core_id: int) -> tuple[TopMemory, ...]:
        return self.cores[core_id].top_memories

    @cached_property
    def memory_instances(self) -> tuple[tuple[TopMemory, tuple[int, ...]], ...]:
        """Every physical top memory with the ids of the cores that use it, in core order."""
        users: dict[TopMemory, list[int]] = {}
        for core in self.cores:
            for memory in core.top_memories:
                users.setdefault(memory, []).append(core.id)
        return tuple((memory, tuple(ids)) for memory, ids in users.items())

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the scheduler and for files: cores, links, routes, top memories."""
        return {
            "name": self.name,
            "offchip_core_id": self.offchip_core_id,
            "cores": [
                {
                    "id": c.id,
                    "name": c.name,
                    "file": c.file,
                    "is_offchip": c.is_offchip,
                    "memory_group": c.memory_group,
                    "dataflows": {d: [list(u) for u in us] for d, us in c.dataflows.items()}
                    if c.dataflows
                    else None,
                    "top_memories": [_memory_dict(m) for m in c.top_memories],
                }
                for c in self.cores
            ],
            "links": [_link_dict(link) for link in self.links],
            "routes": [
                [s, t, [link.id for link in links]] for (s, t), links in self.routes.items()
            ],
            "memory_sharing": [list(group) for group in self.memory_sharing],
            "memory_instances": [
                dict(_memory_dict(m), cores=list(ids)) for m, ids in self.memory_instances
            ],
        }

    def __repr__(self) -> str:
        return (
            f"MultiCoreAccelerator({self.name!r}, {len(self.cores)} cores, {len(self.links)} links)"
        )


def _memory_dict(memory: TopMemory) -> dict[str, Any]:
    return {
        "name": memory.name,
        "memory_group": memory.memory_group,
        "operands": list(memory.operands),
        "capacity": memory.capacity,
        "r_bw": memory.r_bw,
        "w_bw": memory.w_bw,
        "r_cost": memory.r_cost,
        "w_cost": memory.w_cost,
        "port_count": memory.port_count,
    }


def _link_dict(link: Link) -> dict[str, Any]:
    return {
        "id": link.id,
        "sender": link.sender,
        "receiver": link.receiver,
        "bandwidth": link.bandwidth,
        "unit_energy_cost": link.unit_energy_cost,
        "bidirectional": link.bidirectional,
        "edges": [list(e) for e in link.edges],
    }
