"""Read-only views of our hardware and data-movement figures under ZigZag's names.

ZigZag scripts read internal objects of its cost model (``cme.mem_level_list[i].memory_instance``,
``cme.real_data_trans_cycle[op][level].get(direction)``, ...). These small types give the
attributes such scripts read over our own model objects; they copy nothing but references.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Mapping

from zigzag.hardware.accelerator import DIRECTION_NAMES, Accelerator, Memory, Port

#: long direction name (ZigZag's ``DataDirection`` values) -> our short name
_SHORT = {long: short for short, long in DIRECTION_NAMES.items()}
#: ZigZag's order of the four directions
_LONG_ORDER = ("rd_out_to_low", "wr_in_by_low", "rd_out_to_high", "wr_in_by_high")


def short_direction(direction) -> str:
    """``fh``/``tl``/``fl``/``th`` for a short name, a long name or an enum whose value is one."""
    text = direction.value if isinstance(direction, Enum) else str(direction)
    return _SHORT.get(text, text)


class FourWay(dict):
    """One value per direction of a memory level: a dict keyed ``fh``/``tl``/``fl``/``th`` that
    also reads as ZigZag's ``FourWayDataMoving``: ``.get("rd_out_to_low")`` or ``[...]`` with a
    long name (or an enum whose value is one), ``.rd_out_to_low``, ``.data`` (by long name);
    ``+`` and ``*`` give new ones."""

    def __init__(self, values: Mapping = ()):
        values = dict(values)
        if all(
            type(d) is str and d in DIRECTION_NAMES for d in values
        ):  # already short names (the usual case)
            super().__init__(values)
        else:
            super().__init__({short_direction(d): v for d, v in values.items()})

    def __getitem__(self, direction):
        if type(direction) is str and direction in DIRECTION_NAMES:
            return super().__getitem__(direction)
        return super().__getitem__(short_direction(direction))

    def get(self, direction, default=None):
        return super().get(short_direction(direction), default)

    def __contains__(self, direction) -> bool:
        return super().__contains__(short_direction(direction))

    def __getattr__(self, name):
        if name in _SHORT:
            return self.get(name, 0)
        raise AttributeError(name)

    @property
    def data(self) -> dict:
        return {d: self.get(d, 0) for d in _LONG_ORDER}

    def __add__(self, other: Mapping) -> "FourWay":
        return FourWay(
            {d: self.get(d, 0) + FourWay(other).get(d, 0) for d in ("tl", "fl", "th", "fh")}
        )

    def __mul__(self, scalar) -> "FourWay":
        return FourWay({d: v * scalar for d, v in self.items()})

    def __jsonrepr__(self) -> dict:
        return self.data


class OperandLinks(dict):
    """A layer's ``{layer operand: memory operand}`` with ZigZag's ``MemoryOperandLinks`` methods."""

    def layer_to_mem_op(self, layer_op: str) -> str:
        return self[layer_op]

    def mem_to_layer_op(self, mem_op: str) -> str:
        return next(op for op, mem in self.items() if mem == mem_op)

    def contains_layer_op(self, layer_op: str) -> bool:
        return layer_op in self

    def contains_mem_op(self, mem_op: str) -> bool:
        return mem_op in self.values()

    @property
    def layer_operands(self) -> list[str]:
        return list(self)

    @property
    def mem_operands(self) -> list[str]:
        return list(self.values())


@dataclass(frozen=True, eq=False)
class MemoryLevelView:
    """One memory of an accelerator as a ZigZag ``MemoryLevel``: ``memory_instance`` is the
    :class:`Memory` itself (``name``, ``size``, ``r_cost``, ``w_cost``, ``area``, ``latency``)."""

    memory_instance: Memory
    accelerator: Accelerator
    id: int

    @property
    def name(self) -> str:
        return self.memory_instance.name

    @property
    def operands(self) -> list[str]:
        return list(self.memory_instance.operands)

    @property
    def mem_level_of_operands(self) -> dict[str, int]:
        return {
            op: self.accelerator.level_index[(self.name, op)]
            for op in self.memory_instance.operands
        }

    @property
    def served_dimensions(self) -> tuple[str, ...]:
        return self.memory_instance.served_dimensions

    @property
    def ports(self) -> tuple[Port, ...]:
        """The ports that serve something, in the order given."""
        return tuple(port for port, _ in self.memory_instance.used_ports)

    @property
    def read_energy(self) -> float:
        return self.memory_instance.r_cost

    @property
    def write_energy(self) -> float:
        return self.memory_instance.w_cost

    @property
    def unroll_count(self) -> int:
        return self.accelerator.unroll_count(self.memory_instance)

    def get_min_bandwidth(self, operand: str, direction) -> int | None:
        return self.memory_instance.bandwidth_min(operand, short_direction(direction))

    def get_max_bandwidth(self, operand: str, direction) -> int | None:
        return self.memory_instance.bandwidth_max(operand, short_direction(direction))

    def __str__(self) -> str:
        served = set(self.served_dimensions) or "{}"
        return f"MemoryLevel(instance={self.name},operands={self.operands}, served_dimensions={served})"

    __repr__ = __str__


def memory_levels(accelerator: Accelerator) -> list[MemoryLevelView]:
    """ZigZag's ``mem_level_list``: every memory as a level, in the order the file lists them."""
    return [
        MemoryLevelView(memory, accelerator, index)
        for index, memory in enumerate(accelerator.memories)
    ]
