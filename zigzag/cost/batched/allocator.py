"""Batched memory allocator: :class:`zigzag.search.allocator.MemoryAllocator`, vectorised over
many loop orderings (same feasible slices, same cost function, same choice among equal costs)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from zigzag.cost.batched.candidates import EXACT, LoopTable, prefix_products, unique_count
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping.spatial import LevelMapping
from zigzag.search.allocator import MemoryAllocator
from zigzag.workload.layer import Layer


@dataclass
class _AllocState:
    layer_op: str
    pos: np.ndarray  # loops allocated so far
    sizes: dict  # tracked dim -> running size product (float64 array)
    level: int
    cuts: list


class BatchAllocator:
    """Vectorised :class:`~zigzag.search.allocator.MemoryAllocator` over many orderings."""

    def __init__(self, layer: Layer, accelerator: Accelerator, spatial: LevelMapping, loops: LoopTable,
                 *, even: bool = False):
        self.reference = MemoryAllocator(layer, accelerator, spatial, even=even)
        self.layer = layer
        self.spatial = spatial
        self.loops = loops
        self.even = even
        ref = self.reference
        # footprint inputs per layer operand: the dims whose running sizes matter
        self.tracked = {}
        for op in layer.operands:
            dims = set(layer.relevant[op])
            for rel in layer.partially_relevant[op].values():
                dims.update((rel.dim_a, rel.dim_b))
            self.tracked[op] = sorted(dims)
        self.output_ir = ref.output_ir
        self.oir_of_loop = np.array([d in self.output_ir for d, _ in loops.distinct], dtype=bool)
        # exactness of the cost comparisons (remaining loops x bits, summed over operands)
        self.exact = loops.total * 4 < EXACT
        for memory, operands in ref.nodes:
            if len(operands) and loops.total * memory.size * (len(operands) + 1) >= EXACT:
                if any(ref.top[m] is not memory for m in operands):
                    self.exact = False

    # ----- helpers ----------------------------------------------------------------------------
    def _footprint(self, op: str, sizes: dict) -> np.ndarray:
        layer = self.layer
        count = None
        for dim in layer.relevant[op]:
            if dim in sizes:
                count = sizes[dim] if count is None else count * sizes[dim]
        for data_dim, rel in layer.partially_relevant[op].items():
            a = np.trunc(sizes[rel.dim_a])
            b = np.trunc(sizes[rel.dim_b])
            extent = np.minimum(float(layer.pr_sizes[data_dim]), unique_count(rel, a, b))
            count = extent if count is None else count * extent
        if count is None:
            count = np.ones_like(next(iter(sizes.values()))) if sizes else None
        return count

    def _accumulate_spatial(self, state: _AllocState, level: list) -> None:
        for dim, factor in level:
            if dim in state.sizes:
                state.sizes[dim] = state.sizes[dim] * factor

    # ----- allocation -------------------------------------------------------------------------
    def allocate(self, ids: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(allocated, cuts)``: which orderings could be allocated, and per layer operand the
        end position of each of its memory levels (array ``candidates x levels``)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._allocate(ids)

    def _allocate(self, ids: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        n, length = ids.shape
        rows = np.arange(n)
        ldim = self.loops.dim_of[ids]
        lsize = self.loops.size_of[ids]
        prefix = prefix_products(lsize)
        # suffix_oir[:, p]: an output-irrelevant loop at position >= p
        oir = self.oir_of_loop[ids]
        suffix_oir = np.zeros((n, length + 1), dtype=bool)
        for p in range(length - 1, -1, -1):
            suffix_oir[:, p] = suffix_oir[:, p + 1] | oir[:, p]
        occurrences = None
        if self.even:
            distinct = len(self.loops.distinct)
            onehot = ids[:, :, None] == np.arange(distinct)[None, None, :]  # (n, length, distinct)
            occurrences = np.zeros((n, distinct, length + 1), dtype=np.int32)
            np.cumsum(onehot.transpose(0, 2, 1), axis=2, out=occurrences[:, :, 1:])
        ctx = (n, length, rows, ldim, lsize, prefix, suffix_oir, occurrences)

        alive = np.ones(n, dtype=bool)
        states = {}
        for m in self.reference.memory_operands:
            op = self.layer.layer_operand_of[m]
            sizes = {d: np.ones(n) for d in self.tracked[op]}
            state = _AllocState(op, np.zeros(n, dtype=np.int64), sizes, 1, [])
            self._accumulate_spatial(state, self.spatial[op][0])
            states[m] = state
        for memory, operands in self.reference.nodes:
            if operands:
                self._allocate_at(memory, [states[m] for m in operands], operands, alive, ctx)
        cuts = {s.layer_op: np.stack(s.cuts, axis=1) for s in states.values()}
        return alive, cuts

    def _allocate_at(self, memory, states, operands, alive, ctx) -> None:
        n, length, rows, ldim, lsize, prefix, suffix_oir, _ = ctx
        size = float(memory.size)
        is_top = [self.reference.top[m] is memory for m in operands]
        slices = [self._feasible_slices(memory, s, alive, ctx) for s in states]
        # slices[j] = (bits per take (list of arrays), snapshots, number of feasible takes)
        nfeas = [s[2] for s in slices]
        top_take = [np.maximum(f - 1, 0) for f in nfeas]

        def bits_at(j, k):
            bits = slices[j][0]
            if isinstance(k, int):
                return bits[k]
            return np.stack(bits)[k, rows]

        free = [j for j, top in enumerate(is_top) if not top]
        ranges = []
        for j in free:
            live = nfeas[j][alive]
            ranges.append(range(int(live.max()) if live.size else 1))
        # bits and costs of every take of the free operands, computed once
        free_bits, free_cost = {}, {}
        for j, takes in zip(free, ranges):
            free_bits[j] = [bits_at(j, k) for k in takes]
            free_cost[j] = [
                (self.loops.total / prefix[rows, np.minimum(states[j].pos + k, length)]) * free_bits[j][k]
                for k in takes
            ]
        best_cost = np.zeros(n)
        has_best = np.zeros(n, dtype=bool)
        best_take = [np.zeros(n, dtype=np.int64) for _ in states]
        top_bits = {j: bits_at(j, top_take[j]) for j, top in enumerate(is_top) if top}
        for index, combo in enumerate(itertools.product(*ranges)):
            take = list(top_take)
            valid = alive
            for j, k in zip(free, combo):
                take[j] = k
                valid = valid & (k < nfeas[j])
            total = 0.0
            cost = 0.0
            for j in range(len(states)):
                if is_top[j]:
                    total = total + top_bits[j]
                    cost = cost + 0.0
                else:
                    total = total + free_bits[j][take[j]]
                    cost = cost + free_cost[j][take[j]]
            over = total > size
            if index == 0:
                alive &= ~over
            better = valid & ~over & (~has_best | (cost <= best_cost))
            if self.even:
                better &= self._cuts_agree(states, take, ctx)
            best_cost = np.where(better, cost, best_cost)
            has_best |= better
            for j in range(len(states)):
                best_take[j] = np.where(better, take[j], best_take[j])
        for j, (state, top) in enumerate(zip(states, is_top)):
            take = best_take[j]
            snapshots = slices[j][1]
            for dim in state.sizes:
                state.sizes[dim] = np.stack([snap[dim] for snap in snapshots])[np.minimum(take, len(snapshots) - 1), rows]
            state.pos = state.pos + take
            state.cuts.append(state.pos.copy())
            if state.level < len(self.spatial[state.layer_op]):
                self._accumulate_spatial(state, self.spatial[state.layer_op][state.level])
            if top:
                alive &= state.pos >= length
            state.level += 1

    def _feasible_slices(self, memory, state: _AllocState, alive, ctx):
        n, length, rows, ldim, lsize, prefix, suffix_oir, _ = ctx
        layer = self.layer
        op = state.layer_op
        size = float(memory.size)
        if op == layer.output:
            above = [d for lvl in self.spatial[op][state.level:] for d, _ in lvl]
            if any(d in self.output_ir for d in above):
                precision = float(layer.precision[op])
            else:
                precision = np.where(suffix_oir[rows, np.minimum(state.pos, length)],
                                     float(layer.precision[op]), float(layer.final_output_precision))
        else:
            precision = float(layer.precision[op])
        sizes = dict(state.sizes)
        live_pos = state.pos[alive]
        steps = length - int(live_pos.min()) if live_pos.size else 0
        bits_list, snapshots = [], []
        ok = None
        nfeas = np.zeros(n, dtype=np.int64)
        dim_numbers = {d: self.loops.dim_number.get(d, -1) for d in sizes}
        for i in range(steps + 1):
            if i:
                p = state.pos + (i - 1)
                valid = p < length
                pc = np.minimum(p, length - 1)
                d = ldim[rows, pc]
                s = lsize[rows, pc]
                new = {}
                for dim, arr in sizes.items():
                    hit = valid & (d == dim_numbers[dim])
                    new[dim] = np.where(hit, arr * s, arr)
                sizes = new
            count = self._footprint(op, sizes)
            bits = (count if count is not None else 1.0) * precision
            bits = np.broadcast_to(np.asarray(bits, dtype=np.float64), (n,))
            fits = bits <= size
            if i == 0:
                alive &= fits
                ok = fits.copy()
            else:
                ok = ok & valid & fits
            nfeas += ok
            bits_list.append(bits)
            snapshots.append(sizes)
        return bits_list, snapshots, nfeas

    def _cuts_agree(self, states, take, ctx) -> np.ndarray:
        """Even mapping: no loop *value* taken here by one operand is left above by another or by
        itself (vectorised ``MemoryAllocator._cuts_agree``, which compares loops by value)."""
        occurrences = ctx[-1]  # (candidates, distinct loops, positions + 1) prefix counts
        n, length = ctx[0], ctx[1]
        rows = ctx[2]
        taken = np.zeros((n, occurrences.shape[1]), dtype=bool)
        left = np.zeros_like(taken)
        for state, k in zip(states, take):
            start = occurrences[rows, :, np.minimum(state.pos, length)]
            cut = occurrences[rows, :, np.minimum(state.pos + k, length)]
            taken |= cut > start
            left |= occurrences[:, :, length] > cut
        return ~(taken & left).any(axis=1)
