"""A vector (SIMD) unit beside the MAC array, and the view of the core it computes on.

The unit has ``lanes`` parallel lanes, a cost per *operation class* (cycles one operation keeps a
lane busy, energy per operation) and the memories it reads and writes: memories of its own
(``registers``, innermost) and memories of the core, shared by all lanes. A vector layer (a layer
whose ``vector_op`` names its class) is costed by the ordinary search and cost model on the
*vector view* of the core: an accelerator whose operational array is the lanes (one dimension,
``D1``) with the class's energy and cycles, and whose memory hierarchy is the unit's memories
(docs/models/operators.md).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.mapping.entry import MappingEntry

if TYPE_CHECKING:
    from zigzag.workload.layer import Layer

#: the vector unit's one spatial dimension (its lanes), as named in its registers' served_dimensions
LANE_DIMENSION = "D1"

MAC_ARRAY = "mac_array"
VECTOR_UNIT = "vector_unit"
UNCOSTED = "uncosted"


@dataclass(frozen=True)
class VectorArray:
    """The lanes of a vector unit seen as an operational array, for one operation class."""

    dimensions: dict[str, int]
    unit_energy: float  # pJ per operation of the class
    unit_area: float | None
    cycles_per_op: float
    operation: str
    #: the whole core the lanes belong to: its area is the area of a layer run on them (one area per core)
    core: Accelerator | None = dataclasses.field(default=None, compare=False, repr=False)

    is_imc = False

    @property
    def total_units(self) -> int:
        return math.prod(self.dimensions.values())

    @property
    def total_area(self) -> float:
        return self.unit_area * self.total_units


def compute_unit(layer: Layer, accelerator: Accelerator) -> str:
    """Where ``layer`` is costed: ``mac_array``, ``vector_unit`` or ``uncosted`` (docs/models/operators.md)."""
    op_class = getattr(layer, "vector_op", None)
    if op_class is None:
        return MAC_ARRAY
    unit = accelerator.vector_unit
    return VECTOR_UNIT if unit is not None and op_class in unit.operations else UNCOSTED


def on_vector_unit(layer: Layer, accelerator: Accelerator) -> tuple[Layer, Accelerator]:
    """A vector layer as searched on the vector view of ``accelerator``: its mapping entry keeps its
    operand links (restricted to its operands) and temporal ordering; the lanes' unrolling is
    searched (the entry's spatial mapping and hints name the MAC array's dimensions)."""
    entry = layer.mapping
    missing = [op for op in layer.operands if op not in entry.memory_operand_links]
    if missing:
        raise InputError(
            None,
            f"mapping entry '{entry.name}': memory_operand_links",
            f"operand '{missing[0]}' of vector layer '{layer.name}' is not linked to a memory "
            f"operand; link it, e.g. {missing[0]}: I1",
        )
    links = {op: entry.memory_operand_links[op] for op in layer.operands}
    vector_entry = MappingEntry(
        name=entry.name, memory_operand_links=links, temporal_ordering=entry.temporal_ordering
    )
    view = vector_view(accelerator, layer.vector_op, tuple(links.values()))
    return dataclasses.replace(layer, mapping=vector_entry), view


def vector_view(
    accelerator: Accelerator, operation: str, memory_operands: tuple[str, ...]
) -> Accelerator:
    """The core as a vector layer of class ``operation`` sees it: the lanes as its operational array,
    the unit's registers and memories (restricted to ``memory_operands``, the ones the layer links)
    as its memory hierarchy."""
    return _vector_view(accelerator, operation, frozenset(memory_operands))


@lru_cache(maxsize=256)
def _vector_view(
    accelerator: Accelerator, operation: str, memory_operands: frozenset[str]
) -> Accelerator:
    unit = accelerator.vector_unit
    cost = unit.operations[operation]
    shared = tuple(
        dataclasses.replace(accelerator.memory[name], served_dimensions=(LANE_DIMENSION,))
        for name in unit.memories
    )
    memories = tuple(
        m
        for m in (_restricted(m, memory_operands) for m in unit.registers + shared)
        if m is not None
    )
    array = VectorArray(
        dimensions={LANE_DIMENSION: unit.lanes},
        unit_energy=cost.energy,
        unit_area=unit.unit_area,
        cycles_per_op=float(cost.cycles),
        operation=operation,
        core=accelerator,
    )
    return Accelerator(
        name=accelerator.name,
        operational_array=array,
        memories=memories,
        area_unit=accelerator.area_unit,
    )


def _restricted(memory: Memory, memory_operands: frozenset[str]) -> Memory | None:
    """``memory`` keeping only ``memory_operands`` (and their port allocations); None if none is left."""
    operands = tuple(op for op in memory.operands if op in memory_operands)
    if not operands:
        return None
    if operands == memory.operands:
        return memory
    ports = tuple(
        dataclasses.replace(p, allocation=tuple(a for a in p.allocation if a[0] in memory_operands))
        for p in memory.ports
    )
    return dataclasses.replace(memory, operands=operands, ports=ports)
