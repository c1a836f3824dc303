"""Batched memory levels: :class:`zigzag.mapping_search.memory_levels.MemoryLevelAssigner`, vectorised over
many loop orderings (same feasible slices, same cost function, same choice among equal costs)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from zigzag.mapping_search.batched.candidates import EXACT, LoopTable, prefix_products, unique_count
from zigzag.mapping_search.batched.python_sums import (
    COMPENSATED_FLOATS,
    COMPENSATED_INTS,
    python_sum,
)
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.mapping_search.memory_levels import MemoryLevelAssigner
from zigzag.workload.layer import Layer


#: array elements (combinations x candidates) compared at once when choosing the takes
COMBINATION_BLOCK = 2**20


@dataclass
class _AllocState:
    layer_op: str
    pos: np.ndarray  # loops assigned so far
    sizes: dict  # tracked dim -> running size product (float64 array; the spatial part only,
    # a number, where the temporal part is read from the loops' prefix products)
    level: int
    cuts: list
    float_dims: set  # dims whose scalar running size is a Python float (a float factor seen)


class BatchLevelAssigner:
    """Vectorised :class:`~zigzag.mapping_search.memory_levels.MemoryLevelAssigner` over many orderings."""

    def __init__(
        self,
        layer: Layer,
        accelerator: Accelerator,
        spatial: LevelMapping,
        loops: LoopTable,
        *,
        even: bool = False,
    ):
        self.reference = MemoryLevelAssigner(layer, accelerator, spatial, even=even)
        self._bounds = None  # per memory (low, high) size bounds while assign_bounded runs
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
        # the scalar sums' rounding depends on which terms are ints: known when every temporal
        # loop size is an int (then only float spatial factors make a running size a float)
        if not all(isinstance(s, int) for _, s in loops.distinct):
            self.exact = False
        for memory, operands in ref.nodes:
            if len(operands) and loops.total * memory.size * (len(operands) + 1) >= EXACT:
                if any(ref.top[m] is not memory for m in operands):
                    self.exact = False
        # every running size an exact integer (integral spatial factors, products below EXACT):
        # then it is the same number in whatever order its factors are multiplied, and is read
        # as (spatial part) x (the loops' prefix product of its dim) instead of taken by takes
        factors = [f for op in layer.operands for lvl in spatial[op] for _, f in lvl]
        self.integral = all(float(f).is_integer() for f in factors) and (
            math.prod(factors) * loops.total < EXACT
        )
        self._tables: dict = {}  # per layer operand: its footprint tables (compiled pass)

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

    def _bits_are_int(self, state: _AllocState, precisions: list) -> bool:
        """Whether the scalar assigner's bits of this operand are a Python int (not a float)."""
        layer = self.layer
        op = state.layer_op
        pr_ints = all(isinstance(layer.pr_sizes[d], int) for d in layer.partially_relevant[op])
        return (
            all(isinstance(p, int) for p in precisions)
            and pr_ints
            and not any(d in state.float_dims for d in layer.relevant[op])
        )

    def _accumulate_spatial(self, state: _AllocState, level: list) -> None:
        for dim, factor in level:
            if isinstance(factor, float):
                state.float_dims.add(dim)
            if dim in state.sizes:
                state.sizes[dim] = state.sizes[dim] * factor

    # ----- assignment -------------------------------------------------------------------------
    def assign(self, ids: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(assigned, cuts)``: which orderings could be assigned, and per layer operand the
        end position of each of its memory levels (array ``candidates x levels``)."""
        self._bounds = None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._assign(ids)

    def assign_bounded(self, ids: np.ndarray):
        """:meth:`assign`, and per memory the sizes for which every candidate's outcome stays the
        same: ``{memory name: (low, high)}`` arrays over the candidates, such that a memory of
        size ``s`` with ``low <= s < high`` (for every memory) gives each candidate the same
        ``assigned`` flag and cuts. The assigner reads a memory's size only in comparisons
        ``bits <= size`` (a take fits, the operands' takes fit together): ``low`` is the largest
        bits compared that fit, ``high`` the smallest that did not (a candidate's comparisons
        after it failed are not counted: it stays failed)."""
        self._bounds = {}
        try:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                alive, cuts = self._assign(ids)
            return alive, cuts, self._bounds
        finally:
            self._bounds = None

    def _bound(self, memory, entered, fitted, failed) -> None:
        """Narrow ``memory``'s bounds of the candidates alive when it was ``entered`` by the
        bits that ``fitted`` (arrays, -inf where none) and that ``failed`` (+inf where none)."""
        if self._bounds is None:
            return
        fitted = np.where(entered, fitted, -np.inf)
        failed = np.where(entered, failed, np.inf)
        if memory.name not in self._bounds:  # the first narrowing of (-inf, inf)
            self._bounds[memory.name] = (
                fitted.astype(float, copy=False),
                failed.astype(float, copy=False),
            )
            return
        low, high = self._bounds[memory.name]
        np.maximum(low, fitted, out=low)
        np.minimum(high, failed, out=high)

    def _assign(self, ids: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
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
        temporal = self._dim_prefixes(ldim, lsize) if self.integral else None
        ctx = (n, length, rows, ldim, lsize, prefix, suffix_oir, temporal, occurrences)

        alive = np.ones(n, dtype=bool)
        states = {}
        for m in self.reference.memory_operands:
            op = self.layer.layer_operand_of[m]
            sizes = {d: (1 if self.integral else np.ones(n)) for d in self.tracked[op]}
            state = _AllocState(op, np.zeros(n, dtype=np.int64), sizes, 1, [], set())
            self._accumulate_spatial(state, self.spatial[op][0])
            states[m] = state
        for memory, operands in self.reference.nodes:
            if operands:
                self._assign_at(memory, [states[m] for m in operands], operands, alive, ctx)
        cuts = {s.layer_op: np.stack(s.cuts, axis=1) for s in states.values()}
        return alive, cuts

    def _dim_prefixes(self, ldim, lsize) -> np.ndarray:
        """``out[p, d]``: the product of the loop sizes of dim number ``d`` among each ordering's
        first ``p`` loops (array ``positions + 1 x dims x candidates``, exact integers)."""
        n, length = ldim.shape
        dims = np.arange(len(self.loops.dims))[None, :, None]
        grows = np.where(ldim.T[:, None, :] == dims, lsize.T[:, None, :], 1.0)
        out = np.empty((length + 1, len(self.loops.dims), n))
        out[0] = 1.0
        for p in range(length):
            np.multiply(out[p], grows[p], out=out[p + 1])
        return out

    def _assign_at(self, memory, states, operands, alive, ctx) -> None:
        n, length, rows = ctx[:3]
        is_top = [self.reference.top[m] is memory for m in operands]
        entered = alive.copy() if self._bounds is not None else None
        slices = [self._feasible_slices(memory, s, alive, ctx, entered) for s in states]
        # slices[j] = (bits per take, running dim sizes per take, number of feasible takes,
        #              whether the scalar assigner's bits are ints)
        best_take = self._best_takes(memory, states, slices, is_top, alive, ctx, entered)
        for j, (state, top) in enumerate(zip(states, is_top)):
            take = best_take[j]
            sizes = slices[j][1]
            for dim in state.sizes if sizes is not None else ():
                state.sizes[dim] = sizes[dim][np.minimum(take, len(sizes[dim]) - 1), rows]
            state.pos = state.pos + take
            state.cuts.append(state.pos.copy())
            if state.level < len(self.spatial[state.layer_op]):
                self._accumulate_spatial(state, self.spatial[state.layer_op][state.level])
            if top:
                alive &= state.pos >= length
            state.level += 1

    def _best_takes(self, memory, states, slices, is_top, alive, ctx, entered) -> list[np.ndarray]:
        """Per operand, the take of every candidate: a top memory takes all it can, the others
        the combination of lowest summed cost (the last of equal costs), as
        ``MemoryLevelAssigner._best_combination`` scans them; combinations in blocks of arrays."""
        n, length, rows, _, _, prefix, _, _, _ = ctx
        size = float(memory.size)
        nfeas = [s[2] for s in slices]
        top_take = [np.maximum(f - 1, 0) for f in nfeas]
        if len(states) == 1 and not self.even:
            return [self._single_take(states[0], slices[0], top_take[0], is_top[0], alive, ctx)]
        free = [j for j, top in enumerate(is_top) if not top]
        shape = []
        for j in free:
            live = nfeas[j][alive]
            shape.append(int(live.max()) if live.size else 1)
        if not self.even:
            return self._combined_takes(
                memory, states, slices, is_top, free, shape, alive, ctx, entered
            )
        # even mappings (cuts that must agree across operands): the combinations in numpy blocks;
        # bits and costs of every take of the free operands (one row per take), computed once
        free_bits, free_cost = {}, {}
        for j, takes in zip(free, shape):
            free_bits[j] = slices[j][0][:takes]
            above = prefix[rows, np.minimum(states[j].pos + np.arange(takes)[:, None], length)]
            free_cost[j] = (self.loops.total / above) * free_bits[j]
        top_bits = {j: slices[j][0][top_take[j], rows] for j, top in enumerate(is_top) if top}
        combos = list(itertools.product(*map(range, shape)))
        combos = np.array(combos, dtype=np.int64).reshape(len(combos), len(free))
        best_cost = np.zeros(n)
        has_best = np.zeros(n, dtype=bool)
        best_combo = np.zeros(n, dtype=np.int64)
        block = max(1, COMBINATION_BLOCK // max(n, 1))
        for first in range(0, len(combos), block):
            part = combos[first : first + block]
            bit_terms, cost_terms = [], []
            valid = np.ones((len(part), n), dtype=bool)
            for j in range(len(states)):  # summed in the operands' order, as the scalar sum
                if is_top[j]:  # its cost is the int 0, which leaves any sum as it is
                    bit_terms.append((top_bits[j], slices[j][3]))
                    continue
                k = part[:, free.index(j)]
                bit_terms.append((free_bits[j][k], slices[j][3]))
                cost_terms.append((free_cost[j][k], slices[j][3]))
                valid &= k[:, None] < nfeas[j]
            total = python_sum(bit_terms) if bit_terms else np.zeros(n)
            cost = python_sum(cost_terms) if cost_terms else 0.0
            over = np.broadcast_to(total > size, valid.shape)
            if entered is not None:  # the combinations this candidate compared with the size
                compared = valid & entered
                totals = np.broadcast_to(total, valid.shape)
                self._bound(
                    memory,
                    entered,
                    np.where(compared & ~over, totals, -np.inf).max(axis=0),
                    np.where(compared & over, totals, np.inf).min(axis=0),
                )
            if first == 0:
                alive &= ~over[0]  # the combination taking the least does not fit
            valid &= alive & ~over
            valid &= self._cuts_agree_all(states, top_take, free, part, ctx)
            cost = np.broadcast_to(cost, valid.shape)
            lowest = np.where(valid, cost, np.inf).min(axis=0)
            last = len(part) - 1 - np.argmax((valid & (cost == lowest))[::-1], axis=0)
            better = valid.any(axis=0) & (~has_best | (lowest <= best_cost))
            best_cost = np.where(better, lowest, best_cost)
            best_combo = np.where(better, first + last, best_combo)
            has_best |= better
        takes = list(top_take)
        for f, j in enumerate(free):
            takes[j] = combos[best_combo, f]
        return [np.where(has_best, take, 0) for take in takes]

    def _combined_takes(self, memory, states, slices, is_top, free, shape, alive, ctx, entered):
        """:meth:`_best_takes` of a memory holding several operands (not an even mapping), in one
        compiled pass (:func:`~zigzag.mapping_search.batched.allocation_kernels.combined_takes`)."""
        from zigzag.mapping_search.batched import allocation_kernels  # numba: by the first search

        n = len(alive)
        bits = np.zeros((len(slices), max(s[0].shape[0] for s in slices), n))
        for j, s in enumerate(slices):
            bits[j, : s[0].shape[0]] = s[0]
        takes, fitted, failed = allocation_kernels.combined_takes(
            bits,
            np.array([s.pos for s in states], dtype=np.int64),
            np.array([s[2] for s in slices], dtype=np.int64),
            np.array(is_top, dtype=bool),
            np.array([s[3] for s in slices], dtype=bool),
            np.array(free, dtype=np.int64),
            np.array(shape, dtype=np.int64),
            ctx[5],
            float(self.loops.total),
            float(memory.size),
            alive,
            alive if entered is None else entered,
            entered is not None,
            max(1, COMBINATION_BLOCK // max(n, 1)),
            COMPENSATED_INTS,
            COMPENSATED_FLOATS,
        )
        if entered is not None and math.prod(shape):  # as the blocks of combinations narrow them
            self._bound(memory, entered, fitted, failed)
        return list(takes)

    def _single_take(self, state, slices, top_take, top, alive, ctx) -> np.ndarray:
        """:meth:`_best_takes` of a memory holding one operand (not an even mapping): the feasible
        takes already fit and their bits already narrowed the bounds, so only the choice is
        left: a top memory's largest take, else the last of the lowest costs."""
        if top:
            return np.where(alive, top_take, 0)
        from zigzag.mapping_search.batched import allocation_kernels  # numba: by the first search

        prefix = ctx[5]
        live = slices[2][alive]
        takes = int(live.max()) if live.size else 1
        return allocation_kernels.cheapest_takes(
            prefix, slices[0], state.pos, slices[2], alive, float(self.loops.total), takes
        )

    def _feasible_slices(self, memory, state: _AllocState, alive, ctx, entered=None):
        """For every candidate at once: the bits needed when taking the first 0, 1, 2 ...
        unassigned loops (array ``takes x candidates``), the running size of each tracked dim
        after each take (same shape), how many takes fit, counting from the first, and whether
        the scalar assigner's bits are ints."""
        n, length, rows, ldim, lsize, prefix, suffix_oir, temporal, _ = ctx
        layer = self.layer
        op = state.layer_op
        size = float(memory.size)
        if op == layer.output:
            above = [d for lvl in self.spatial[op][state.level :] for d, _ in lvl]
            if any(d in self.output_ir for d in above):
                precision = float(layer.precision[op])
                precisions = [layer.precision[op]]
            else:
                precisions = [layer.precision[op], layer.final_output_precision]
                precision = np.where(
                    suffix_oir[rows, np.minimum(state.pos, length)],
                    float(layer.precision[op]),
                    float(layer.final_output_precision),
                )
        else:
            precision = float(layer.precision[op])
            precisions = [layer.precision[op]]
        live_pos = state.pos[alive]
        steps = length - int(live_pos.min()) if live_pos.size else 0
        bits_are_int = self._bits_are_int(state, precisions)
        if temporal is not None:  # the footprint read at pos + take (compiled)
            return self._feasible_compiled(
                memory, state, temporal, precision, steps, alive, entered, bits_are_int
            )
        # take i (1 ... steps) adds the loop at position pos + i - 1, where there is one
        position = state.pos + np.arange(steps)[:, None]
        valid = position < length
        count, sizes = self._running(state, position, valid, steps, ctx)
        bits = np.broadcast_to((count if count is not None else 1.0) * precision, (steps + 1, n))
        fits = bits <= size
        alive &= fits[0]
        # the takes that fit, counting from the first, while there is a loop to take
        chain = np.empty((steps + 1, n), dtype=bool)
        chain[0] = fits[0]
        np.logical_and(valid, fits[1:], out=chain[1:])
        feasible = np.logical_and.accumulate(chain, axis=0).sum(axis=0, dtype=np.int64)
        if (
            entered is not None
        ):  # the takes compared: the feasible ones, and the first that did not fit
            takes = np.arange(steps + 1)[:, None]
            stop = np.minimum(feasible, steps)
            # the run of feasible takes ended on a take that exists and did not fit
            ended = (feasible <= steps) & (
                (feasible == 0) | valid[np.clip(feasible - 1, 0, steps - 1), rows]
                if steps
                else feasible == 0
            )
            self._bound(
                memory,
                entered,
                np.where(takes < feasible, bits, -np.inf).max(axis=0),
                np.where(ended, bits[stop, rows], np.inf),
            )
        return bits, sizes, feasible, bits_are_int

    def _feasible_compiled(
        self, memory, state, temporal, precision, steps, alive, entered, bits_are_int
    ):
        """:meth:`_feasible_slices` where every running size is an exact integer: the footprint
        of every take from the loops' per-dim prefix products, in one compiled pass
        (:func:`~zigzag.mapping_search.batched.allocation_kernels.feasible_takes`)."""
        from zigzag.mapping_search.batched import allocation_kernels  # numba: by the first search

        tables = self._footprint_tables(state.layer_op)
        dims = tables[0]
        part = np.array([float(state.sizes[d]) for d in dims], dtype=np.float64)
        n = len(alive)
        if not isinstance(precision, np.ndarray):
            precision = np.full(n, precision)
        bits, feasible, fitted, failed = allocation_kernels.feasible_takes(
            temporal,
            tables[1],
            part,
            *tables[2:],
            state.pos,
            precision,
            float(memory.size),
            steps,
            alive,
        )
        if entered is not None:
            self._bound(memory, entered, fitted, failed)
        return bits, None, feasible, bits_are_int

    def _footprint_tables(self, op: str) -> tuple:
        """What :func:`~zigzag.mapping_search.batched.allocation_kernels.feasible_takes` reads
        of ``op``'s footprint (:meth:`_footprint`): its tracked dims, their dim numbers (-1: no
        loops), the positions of the relevant ones, and per pr relation the positions of its
        two dims, its reduced coefficients and its data dim's size."""
        tables = self._tables.get(op)
        if tables is None:
            layer = self.layer
            dims = list(self.tracked[op])
            at = {d: j for j, d in enumerate(dims)}
            rels = list(layer.partially_relevant[op].items())
            tables = self._tables[op] = (
                dims,
                np.array([self.loops.dim_number.get(d, -1) for d in dims], dtype=np.int64),
                np.array([at[d] for d in layer.relevant[op]], dtype=np.int64),
                np.array([[at[r.dim_a], at[r.dim_b]] for _, r in rels], dtype=np.int64).reshape(
                    -1, 2
                ),
                np.array(
                    [[*r.reduced_coefficients, float(layer.pr_sizes[x])] for x, r in rels],
                    dtype=np.float64,
                ).reshape(-1, 3),
            )
        return tables

    def _running(self, state, position, valid, steps, ctx):
        """``(footprint, running sizes)`` after each take (arrays ``takes x candidates``), the
        sizes multiplied take by take as the scalar assigner does (any float factor rounds)."""
        n, length, rows, ldim, lsize = ctx[:5]
        position = np.minimum(position, length - 1)
        dims, factors = ldim[rows, position], lsize[rows, position]
        sizes = {}
        for dim, current in state.sizes.items():
            grows = np.where(valid & (dims == self.loops.dim_number.get(dim, -1)), factors, 1.0)
            running = np.empty((steps + 1, n))
            running[0] = current
            for i in range(steps):  # the scalar loop's sequence of products (not accumulate)
                np.multiply(running[i], grows[i], out=running[i + 1])
            sizes[dim] = running
        return self._footprint(state.layer_op, sizes), sizes

    def _cuts_agree_all(self, states, top_take, free, combinations, ctx) -> np.ndarray:
        """:meth:`_cuts_agree` for every combination of takes of the free operands (rows)."""
        agree = []
        for combination in combinations:
            take = list(top_take)
            for j, k in zip(free, combination):
                take[j] = int(k)
            agree.append(self._cuts_agree(states, take, ctx))
        return np.array(agree)

    def _cuts_agree(self, states, take, ctx) -> np.ndarray:
        """Even mapping: no loop *value* taken here by one operand is left above by another or by
        itself (vectorised ``MemoryLevelAssigner._cuts_agree``, which compares loops by value)."""
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
