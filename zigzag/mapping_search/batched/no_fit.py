"""Why no loop ordering fits, found by the batched assigner: :func:`zigzag.mapping_search.loma.no_fit_diagnosis`
for every sampled ordering in one vectorised pass instead of one scalar allocation each.

The scalar diagnosis allocates the first ``sample`` orderings (those the user constraints allow)
one by one, keeps each one's failure (memory, operands, bits needed), and names the least bits of
the most frequent (memory, operands). The batched assigner
(:class:`~zigzag.mapping_search.batched.memory_levels.BatchLevelAssigner`) drops a candidate at
exactly the comparison where the scalar one raises, in the same order (an operand's first take
overflowing, the operands' smallest takes overflowing together, a top memory left with loops);
:class:`_Diagnosing` records there, per candidate, what the scalar failure would carry. The
ordering finally named is allocated once more by the scalar assigner, whose failure is returned
(checked to be the one recorded), so the text is the scalar path's own. Where the batched
assigner is not exact, or the check disagrees, the scalar diagnosis runs instead.
"""

from __future__ import annotations

import itertools

import numpy as np

from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.batched.candidates import LoopTable, chunks, constraint_mask
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner, python_sum
from zigzag.mapping_search.loma import (
    layer_temporal_loops,
    no_fit_diagnosis as scalar_diagnosis,
    ordering_factors,
)
from zigzag.mapping_search.memory_levels import LevelAssignmentFailed
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.workload.layer import Layer


def no_fit_diagnosis(
    layer: Layer,
    accelerator: Accelerator,
    spatial: LevelMapping,
    *,
    even: bool,
    lpf_limit: int | None,
    sample: int = 2000,
) -> LevelAssignmentFailed | None:
    """:func:`zigzag.mapping_search.loma.no_fit_diagnosis` (the same failure), batched."""
    constraints, factors = ordering_factors(layer, layer_temporal_loops(layer, spatial), lpf_limit)
    loops = LoopTable(factors)
    assigner = _Diagnosing(layer, accelerator, spatial, loops, even=even)
    if not assigner.exact:
        return scalar_diagnosis(
            layer, accelerator, spatial, even=even, lpf_limit=lpf_limit, sample=sample
        )
    ids = next(chunks(itertools.islice(loops.orderings(), sample), loops.length, sample), None)
    if ids is not None and constraints:
        ids = ids[constraint_mask(ids, loops, constraints)]
    if ids is None or not len(ids):
        return None
    row = assigner.named(ids)
    if row is None:  # every sampled ordering was assigned
        return None
    try:
        assigner.reference.assign(loops.loops(ids[row]))
    except LevelAssignmentFailed as failure:
        if assigner.agrees(row, failure):
            return failure
    return scalar_diagnosis(
        layer, accelerator, spatial, even=even, lpf_limit=lpf_limit, sample=sample
    )


class _Diagnosing(BatchLevelAssigner):
    """The batched assigner, recording where each candidate fails: the memory (its index in the
    visiting order), the operands (an index into :attr:`labels`) and the bits needed."""

    def named(self, ids: np.ndarray) -> int | None:
        """The row of ``ids`` whose failure the scalar diagnosis names (the first of the least
        bits among the failures at the most frequent memory and operands, the first such pair
        of equal frequency), or None when none fails."""
        n = len(ids)
        self.labels: list[str] = []
        self.failed = np.zeros(n, dtype=bool)
        self.memory = np.zeros(n, dtype=np.int64)
        self.label = np.zeros(n, dtype=np.int64)
        self.needed = np.zeros(n)
        self.assign(ids)
        rows = np.nonzero(self.failed)[0]
        if not rows.size:
            return None
        pair = self.memory[rows] * (len(self.labels) + 1) + self.label[rows]
        values, first, counts = np.unique(pair, return_index=True, return_counts=True)
        common = values[counts == counts.max()]
        winner = pair[min(first[np.searchsorted(values, common)])]
        group = rows[pair == winner]
        return int(group[np.argmin(self.needed[group])])

    def agrees(self, row: int, failure: LevelAssignmentFailed) -> bool:
        """Whether the scalar ``failure`` of candidate ``row`` is the one recorded."""
        memory = self.reference.nodes[self.memory[row]][0]
        return (
            failure.memory == memory.name
            and failure.operands == self.labels[self.label[row]]
            and failure.needed == self.needed[row]
        )

    def _record(self, died, memory, label: str, needed) -> None:
        new = died & ~self.failed
        if not new.any():
            return
        if label not in self.labels:
            self.labels.append(label)
        self.failed |= new
        self.memory[new] = next(i for i, (m, _) in enumerate(self.reference.nodes) if m is memory)
        self.label[new] = self.labels.index(label)
        self.needed[new] = np.broadcast_to(needed, new.shape)[new]

    def _whole(self, op: str, level: int, pos, ctx) -> np.ndarray:
        """The bits of all of ``op`` (as ``MemoryLevelAssigner._overflow`` for a top memory), at
        the precision its state has at ``level`` with the loops from ``pos`` on still above."""
        layer = self.layer
        whole = layer.footprint(op, layer.loop_sizes)
        partial = float(whole * layer.precision[op])
        if op != layer.output or any(
            d in self.output_ir for lvl in self.spatial[op][level:] for d, _ in lvl
        ):
            return np.full(ctx[0], partial)
        length, rows, suffix_oir = ctx[1], ctx[2], ctx[6]
        final = float(whole * layer.final_output_precision)
        return np.where(suffix_oir[rows, np.minimum(pos, length)], partial, final)

    def _is_top(self, memory, op: str) -> bool:
        return self.reference.top[self.layer.memory_operand(op)] is memory

    def _feasible_slices(self, memory, state, alive, ctx, entered=None):
        before = alive.copy()
        slices = super()._feasible_slices(memory, state, alive, ctx, entered)
        died = before & ~alive  # not even the first take fits
        if died.any():
            op = state.layer_op
            if self._is_top(memory, op):
                needed = self._whole(op, state.level, state.pos, ctx)
            else:
                needed = slices[0][0]
            self._record(died, memory, op, needed)
        return slices

    def _best_takes(self, memory, states, slices, is_top, alive, ctx, entered):
        before = alive.copy()
        takes = super()._best_takes(memory, states, slices, is_top, alive, ctx, entered)
        died = before & ~alive  # the combination taking the least does not fit
        if died.any():
            rows = ctx[2]
            terms = []
            for s, top in zip(slices, is_top):
                take = np.maximum(s[2] - 1, 0) if top else 0
                terms.append((s[0][take, rows], s[3]))
            together = " and ".join(s.layer_op for s in states) + " together"
            self._record(died, memory, together, python_sum(terms))
        return takes

    def _assign_at(self, memory, states, operands, alive, ctx) -> None:
        levels = [state.level for state in states]
        before = alive.copy()
        super()._assign_at(memory, states, operands, alive, ctx)
        died = before & ~alive
        for state, level in zip(states, levels):  # a top memory left with loops to take
            if died.any() and self._is_top(memory, state.layer_op):
                left = died & (state.pos < ctx[1])
                needed = self._whole(state.layer_op, level, state.pos, ctx)
                self._record(left, memory, state.layer_op, needed)
