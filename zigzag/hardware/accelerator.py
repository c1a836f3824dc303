"""An accelerator: a MAC array (operational array) fed by a hierarchy of memories.

Memories are given bottom-up. Each stores some *memory operands* (``I1``, ``I2``, ``O``); the
memories holding one operand form that operand's levels (level 0 nearest the MACs). A memory
*serves* some array dimensions (one instance shared across them) and is replicated over the others.
Each memory moves data through ports in four directions:

* ``fh`` written from the higher level, ``tl`` read to the lower level,
* ``fl`` written from the lower level, ``th`` read to the higher level.
"""

from __future__ import annotations

import graphlib
import math
from dataclasses import dataclass
from functools import cached_property

from zigzag.errors import InputError

DIRECTIONS = ("fh", "tl", "fl", "th")
#: ZigZag's long names of the four directions, as used in its JSON output.
DIRECTION_NAMES = {
    "tl": "rd_out_to_low",
    "fl": "wr_in_by_low",
    "th": "rd_out_to_high",
    "fh": "wr_in_by_high",
}


@dataclass(frozen=True)
class VectorOperation:
    """The cost of one operation of a class on one lane."""

    cycles: float
    energy: float  # pJ


@dataclass(frozen=True)
class VectorUnit:
    """A vector unit as declared in an accelerator file (``vector_unit:``)."""

    lanes: int
    operations: dict[str, VectorOperation]
    memories: tuple[str, ...]  # memories of the core it reads and writes, innermost first
    registers: tuple[Memory, ...] = ()  # memories of its own, innermost first
    unit_area: float | None = None  # area of one lane


@dataclass(frozen=True)
class Port:
    name: str
    type: str  # read | write | read_write
    bandwidth_min: int
    bandwidth_max: int
    allocation: tuple[tuple[str, str], ...]  # (memory operand, direction)


@dataclass(frozen=True, eq=False)
class Memory:
    """One memory instance (e.g. ``sram_2MB``) with its ports; ``size`` in bits."""

    name: str
    size: int
    r_cost: float
    w_cost: float
    area: float
    operands: tuple[str, ...]
    ports: tuple[Port, ...]
    served_dimensions: tuple[str, ...]
    latency: int = 1
    mem_type: str = "sram"
    auto_cost_extraction: bool = False
    force_double_buffering: bool = False
    cost_source: str = "file"  # where r_cost, w_cost and area come from: file | cacti | table
    cost_note: str = ""  # how CACTI or the table gave them

    @cached_property
    def port_of(self) -> dict[str, dict[str, Port]]:
        """Memory operand -> direction -> port (later allocations override earlier ones)."""
        table: dict[str, dict[str, Port]] = {op: {} for op in self.operands}
        for port in self.ports:
            for operand, direction in port.allocation:
                if operand in table:
                    table[operand][direction] = port
        return table

    def port(self, operand: str, direction: str) -> Port | None:
        return self.port_of.get(operand, {}).get(direction)

    def bandwidth_min(self, operand: str, direction: str) -> int | None:
        port = self.port(operand, direction)
        return None if port is None else port.bandwidth_min

    def bandwidth_max(self, operand: str, direction: str) -> int | None:
        port = self.port(operand, direction)
        return None if port is None else port.bandwidth_max

    @cached_property
    def used_ports(self) -> tuple[tuple[Port, tuple[tuple[str, str], ...]], ...]:
        """Ports serving something, each with its (operand, direction) duties in ZigZag's order."""
        result = []
        for port in self.ports:
            duties = tuple(
                (op, d) for op in self.operands for d, p in self.port_of[op].items() if p is port
            )
            if duties:
                result.append((port, duties))
        return tuple(result)

    def __repr__(self) -> str:
        return f"Memory({self.name!r})"


@dataclass(frozen=True)
class OperationalArray:
    """The digital MAC array: named dimensions with sizes, energy and area per MAC unit.
    (In-memory-computing arrays: ``zigzag.hardware.imc.ImcArray``.)"""

    dimensions: dict[str, int]
    unit_energy: float
    unit_area: float
    #: ((operand bits, pJ per MAC), ...): the MAC energy per precision, when the file states it
    unit_energy_per_precision: tuple[tuple[int, float], ...] = ()

    is_imc = False

    def energy_per_mac(self, bits: int) -> float:
        """pJ of one MAC whose widest input has ``bits`` bits: the file's per-precision entry, or
        ``unit_energy`` whatever the bits when it gives no table (docs/models/cost-model.md#energy)."""
        if not self.unit_energy_per_precision:
            return self.unit_energy
        table = dict(self.unit_energy_per_precision)
        if bits not in table:
            raise InputError(
                None,
                "operational_array.unit_energy_per_precision",
                f"no entry for {bits}-bit operands (entries: {', '.join(map(str, sorted(table)))} "
                f"bits); add {{bits: {bits}, unit_energy: <pJ per MAC>}}",
            )
        return table[bits]

    @property
    def total_units(self) -> int:
        return math.prod(self.dimensions.values())

    @property
    def total_area(self) -> float:
        return self.unit_area * self.total_units


@dataclass(frozen=True, eq=False)
class Accelerator:
    """A single-core accelerator."""

    name: str
    operational_array: OperationalArray  # or an ImcArray (zigzag.hardware.imc)
    memories: tuple[Memory, ...]  # bottom-up, as listed by the user
    dataflows: dict | None = None
    area_unit: str | None = None  # the unit of the file's areas, when it states one (mm2 | um2)
    vector_unit: VectorUnit | None = (
        None  # a vector (SIMD) unit beside the array (zigzag.hardware.vector)
    )

    @cached_property
    def memory(self) -> dict[str, Memory]:
        return {m.name: m for m in self.memories}

    @cached_property
    def level_index(self) -> dict[tuple[str, str], int]:
        """(memory name, memory operand) -> level of that memory for that operand."""
        seen: dict[str, int] = {}
        levels = {}
        for mem in self.memories:
            for op in mem.operands:
                levels[(mem.name, op)] = seen.get(op, 0)
                seen[op] = seen.get(op, 0) + 1
        return levels

    @cached_property
    def memory_edges(self) -> tuple[tuple[str, str], ...]:
        """Edges lower -> higher memory: from each operand's current top memory to the next one."""
        edges: list[tuple[str, str]] = []
        seen: list[Memory] = []
        for mem in self.memories:
            tops = {op: self._top_memories(seen, op) for op in mem.operands}
            seen.append(mem)
            for op in mem.operands:
                for top in tops[op]:
                    if (top, mem.name) not in edges:
                        edges.append((top, mem.name))
        return tuple(edges)

    def _top_memories(self, seen: list[Memory], operand: str) -> list[str]:
        holders = [m for m in seen if operand in m.operands]
        if not holders:
            return []
        rank = {m.name: max(self.level_index[(m.name, op)] for op in m.operands) for m in holders}
        best = max(rank.values())
        return [m.name for m in holders if rank[m.name] == best]

    @cached_property
    def graph(self):
        """The memory graph as a networkx DiGraph (for drawing and analysis)."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(m.name for m in self.memories)
        graph.add_edges_from(self.memory_edges)
        return graph

    @cached_property
    def topological_order(self) -> tuple[Memory, ...]:
        """Memories bottom-up, generation by generation (Kahn's order, as networkx gives it)."""
        sorter = graphlib.TopologicalSorter()
        for mem in self.memories:
            sorter.add(mem.name)
        for lower, higher in self.memory_edges:
            sorter.add(higher, lower)
        return tuple(self.memory[name] for name in sorter.static_order())

    @cached_property
    def inner_memories(self) -> tuple[Memory, ...]:
        """Memories nothing sits below (graph sources), in the order listed."""
        higher = {h for _, h in self.memory_edges}
        return tuple(m for m in self.memories if m.name not in higher)

    @cached_property
    def memory_operands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(op for m in self.memories for op in m.operands))

    def hierarchy(self, memory_operand: str) -> tuple[Memory, ...]:
        """The memories holding ``memory_operand``, innermost first."""
        return tuple(m for m in self.topological_order if memory_operand in m.operands)

    def top_memory(self, memory_operand: str) -> Memory:
        return self.hierarchy(memory_operand)[-1]

    def unroll_count(self, memory: Memory) -> int:
        """Number of physical copies of ``memory`` (product of the array dims it does not serve)."""
        return math.prod(
            size
            for dim, size in self.operational_array.dimensions.items()
            if dim not in memory.served_dimensions
        )

    @cached_property
    def sharing_groups(self) -> tuple[dict[str, int], ...]:
        """For memories holding several operands: {memory operand: level} (duplicates removed)."""
        groups: list[dict[str, int]] = []
        for mem in self.memories:
            if len(mem.operands) > 1:
                group = {op: self.level_index[(mem.name, op)] for op in mem.operands}
                if group not in groups:
                    groups.append(group)
        return tuple(groups)

    def __repr__(self) -> str:
        return f"Accelerator({self.name!r})"
