"""Memory levels of a loop ordering (LOMA's memory allocation in ZigZag's words): cut one loop ordering
into per-memory-level temporal mappings.

Memories are visited bottom-up (topological order). At each memory, every operand it holds
takes the next few innermost unassigned loops: as many as fit (together with the operands
sharing the memory), choosing the cut that minimises ``(loops left above) x (bits kept here)``.
The top memory of an operand takes everything left. See docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.workload.layer import Layer

Loop = tuple[str, float]
TemporalMapping = dict[str, list[list[Loop]]]


class LevelAssignmentFailed(Exception):
    """This loop ordering cannot be assigned: ``operands`` need ``needed`` bits of ``memory``,
    which holds ``available`` bits."""

    def __init__(
        self, memory: str, operands: str, needed: float, available: float, *, whole: bool = False
    ):
        self.memory = memory
        self.operands = operands
        self.needed = needed
        self.available = available
        self.whole = whole  # the top memory of the operand, which must hold all of it
        super().__init__(
            f"{operands} needs {needed:.0f} bits of {memory}, which holds {available:.0f} bits"
        )


@dataclass
class _OperandState:
    layer_operand: str
    precision: int
    unassigned: list[Loop]
    assigned_sizes: dict[str, float]
    assigned_count: int
    level: int
    levels: list[list[Loop]]


class MemoryLevelAssigner:
    """Assigns loop orderings of one layer under one spatial mapping on one accelerator."""

    def __init__(
        self, layer: Layer, accelerator: Accelerator, spatial: LevelMapping, *, even: bool = False
    ):
        self.layer = layer
        self.accelerator = accelerator
        self.spatial = spatial
        self.even = even
        self.memory_operands = [layer.memory_operand(op) for op in layer.memory_operand_links]
        self.top = {m: accelerator.top_memory(m) for m in self.memory_operands}
        self.output_ir = set(layer.irrelevant[layer.output])
        self.nodes = [
            (mem, [m for m in mem.operands if m in self.memory_operands])
            for mem in accelerator.topological_order
        ]

    def assign(self, ordering: list[Loop]) -> TemporalMapping:
        """Per layer operand, the loops of each of its memory levels (innermost first)."""
        states = {m: self._initial_state(m, ordering) for m in self.memory_operands}
        for memory, operands in self.nodes:
            if operands:
                self._assign_at(memory, [states[m] for m in operands], operands)
        return {s.layer_operand: s.levels for s in states.values()}

    def spatial_overflow(self, loops: list[Loop]) -> LevelAssignmentFailed | None:
        """The failure every ordering of ``loops`` meets at an operand's innermost memory because
        the spatial unrolling alone overflows it (with no temporal loop yet), or None. Orderings
        only add to what a memory holds, so such a spatial mapping can never be assigned."""
        states = {m: self._initial_state(m, loops) for m in self.memory_operands}
        placed: set[str] = set()
        for memory, operands in self.nodes:
            first = [m for m in operands if m not in placed]
            placed.update(operands)
            needed = 0.0
            for mem_operand in first:
                state = states[mem_operand]
                bits = self.layer.footprint(state.layer_operand, state.assigned_sizes)
                bits *= self._precision_at(state)
                if bits > memory.size:
                    return self._overflow(memory, state, bits)
                needed += bits
            if needed > memory.size:
                together = " and ".join(states[m].layer_operand for m in first) + " together"
                return LevelAssignmentFailed(memory.name, together, needed, memory.size)
        return None

    def _initial_state(self, mem_operand: str, ordering: list[Loop]) -> _OperandState:
        op = self.layer.layer_operand_of[mem_operand]
        sizes: dict[str, float] = {}
        _accumulate(sizes, self.spatial[op][0])
        return _OperandState(op, self.layer.precision[op], list(ordering), sizes, 0, 1, [])

    def _assign_at(self, memory: Memory, states: list[_OperandState], operands: list[str]) -> None:
        slices = [self._feasible_slices(memory, s) for s in states]
        is_top = [self.top[m] is memory for m in operands]
        chosen = self._best_combination(memory, states, slices, is_top)
        for state, take, top in zip(states, chosen, is_top):
            taken = state.unassigned[:take]
            state.unassigned = state.unassigned[take:]
            state.assigned_count += take
            _accumulate(state.assigned_sizes, taken)
            state.levels.append(taken)
            if state.level < len(self.spatial[state.layer_operand]):
                _accumulate(state.assigned_sizes, self.spatial[state.layer_operand][state.level])
            if top and state.unassigned:
                raise self._overflow(memory, state, 0)
            state.level += 1

    def _precision_at(self, state: _OperandState) -> int:
        """Output buffers hold partial sums while an output-irrelevant loop is still above."""
        if state.layer_operand != self.layer.output:
            return state.precision
        above = [d for lvl in self.spatial[state.layer_operand][state.level :] for d, _ in lvl]
        above += [d for d, _ in state.unassigned]
        if any(d in self.output_ir for d in above):
            return state.precision
        return self.layer.final_output_precision

    def _feasible_slices(self, memory: Memory, state: _OperandState) -> list[float]:
        """Bits needed when taking the first 0, 1, 2 ... unassigned loops, while they fit."""
        precision = self._precision_at(state)
        sizes = dict(state.assigned_sizes)
        result = []
        for i in range(len(state.unassigned) + 1):
            if i:
                _accumulate(sizes, state.unassigned[i - 1 : i])
            bits = self.layer.footprint(state.layer_operand, sizes) * precision
            if bits > memory.size:
                if i == 0:
                    raise self._overflow(memory, state, bits)
                break
            result.append(bits)
        return result

    def _overflow(self, memory: Memory, state: _OperandState, bits: float) -> LevelAssignmentFailed:
        """The failure when ``memory`` cannot take its share (``bits``) of ``state``'s operand."""
        if (
            self.top[self.layer.memory_operand(state.layer_operand)] is memory
        ):  # must hold the whole operand
            whole = self.layer.footprint(
                state.layer_operand, self.layer.loop_sizes
            ) * self._precision_at(state)
            return LevelAssignmentFailed(
                memory.name, state.layer_operand, whole, memory.size, whole=True
            )
        return LevelAssignmentFailed(memory.name, state.layer_operand, bits, memory.size)

    def _best_combination(self, memory, states, slices, is_top) -> list[int]:
        """Slice index per operand minimising the summed cost; the last of equal costs wins."""
        offsets = [len(s) - 1 if top else 0 for s, top in zip(slices, is_top)]
        choices = [range(off, len(s)) for s, off in zip(slices, offsets)]
        costs = [
            [
                0 if top else math.prod(size for _, size in st.unassigned[k:]) * s[k]
                for k in range(len(s))
            ]
            for st, s, top in zip(states, slices, is_top)
        ]
        best_cost = math.inf
        best = [0] * len(states)
        for index, combo in enumerate(product(*choices)):
            total = sum(s[k] for s, k in zip(slices, combo))
            if total > memory.size:
                if index == 0:
                    together = " and ".join(st.layer_operand for st in states) + " together"
                    raise LevelAssignmentFailed(memory.name, together, total, memory.size)
                continue
            cost = sum(c[k] for c, k in zip(costs, combo))
            if cost <= best_cost and (not self.even or self._cuts_agree(states, combo)):
                best_cost = cost
                best = list(combo)
        return best

    @staticmethod
    def _cuts_agree(states: list[_OperandState], combo: tuple[int, ...]) -> bool:
        """Even mapping: no loop taken here by one operand is left above by another (or itself).

        Loops are compared by value (dim and size), as ZigZag does: an ordering with repeated
        identical loops, e.g. four (G, 2), cannot be cut between two of them.
        """
        taken = {loop for st, k in zip(states, combo) for loop in st.unassigned[:k]}
        return not any(loop in taken for st, k in zip(states, combo) for loop in st.unassigned[k:])


def _accumulate(sizes: dict[str, float], loops) -> None:
    for dim, size in loops:
        sizes[dim] = sizes.get(dim, 1) * size
