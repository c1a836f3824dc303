"""Batched LOMA search: allocate and cost many temporal mappings of one spatial mapping at once.

The scalar path (``zigzag.search.loma.temporal_mappings`` + ``zigzag.cost.model.evaluate``)
handles one loop ordering at a time in plain Python.  This module does the same work for a
whole chunk of orderings with numpy arrays whose first axis runs over the candidates:

1. :class:`BatchAllocator` cuts every ordering of the chunk into per-memory-level temporal
   mappings, exactly as :class:`zigzag.search.allocator.MemoryAllocator` does (same feasible
   slices, same cost function, same "last of equal costs" choice, same failures).  A candidate
   is represented compactly: its ordering (indices into the distinct loop factors) and, per
   layer operand, the end position of each memory level in that ordering.
2. :class:`BatchCostModel` computes, for every candidate, the two figures the reduction
   compares -- ``energy_total`` and ``latency_total2`` -- following ``zigzag/cost/model/``
   step by step (spec cost-model.md §4-§9).
3. :func:`search_temporal_mappings` drives both over the LOMA orderings in Williams' order,
   keeps the best candidate with the reduction rules of ``zigzag.search.reduce`` (first found
   wins on exact ties) and re-evaluates the winner with the scalar model, which produces the
   full :class:`~zigzag.cost.result.CostResult`.

Exactness.  The figures must be *bit-identical* to the scalar model's, otherwise ties between
candidates could be broken differently.  Two facts make that possible:

* every float operation of the scalar model is reproduced in the same order on float64
  arrays (IEEE operations are the same in numpy and in Python; ``round`` is half-to-even in
  both, ``int`` is ``trunc``, ``math.ceil`` is ``ceil``); where the order depends on the
  candidate (the pr-decoupling walk of §4.6), the walk is replayed position by position with
  masks, so each candidate sees its own sequence of operations;
* where the scalar model computes with Python integers, the batched path computes with float64
  or int64 values that are exact integers; both agree as long as every such integer stays
  below 2**53.  This is checked (``_EXACT``): statically per spatial mapping for the
  allocator's cost comparisons (else the whole spatial mapping goes to the scalar path), and
  at run time per candidate for the cost model (a flagged candidate is evaluated with the
  scalar model instead).

Anything the batched path does not cover (a partially relevant output operand, a candidate the
scalar model raises on, a port table without an expected loading entry, a complete user
temporal ordering) is handed to the scalar path the same way.  As a last safety net, the
winner's scalar figures are compared with the batched ones (:class:`BatchMismatch`, never seen
in the tests).  So the batched search never changes a result, only the time it takes.

Search-side savings (results unchanged): with ``opt="energy"`` the latency part is only
computed for the candidates of a chunk that reach the chunk's lowest energy, and not at all for
a chunk whose lowest energy is above the best found so far (energy is compared first, so no
other candidate can win).  Work shared by all candidates of a spatial mapping (spatial
quantities, port tables, loop tables, memory hierarchy) is prepared once.

``ZIGZAG_EVAL=scalar`` in the environment forces the scalar path (see
``zigzag.search.layer_search.evaluate_spatial_mapping``).

Not copied from anywhere: this is a vectorised restatement of our own scalar model.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from dataclasses import dataclass
from typing import Iterator, NamedTuple

import numpy as np

from zigzag.cost.model import evaluate
from zigzag.cost.model.latency import PortActivity, marked_slots
from zigzag.cost.model.quantities import normalise_levels, spatial_analysis
from zigzag.cost.model.setup import Operand, layer_setup, loading_key
from zigzag.cost.array import array_cost
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import DIRECTIONS, Accelerator
from zigzag.mapping.spatial import LevelMapping
from zigzag.search.allocator import MemoryAllocator
from zigzag.search.loop_factors import nb_orderings
from zigzag.search.permutations import multiset_permutations
from zigzag.search.reduce import is_better
from zigzag.workload.layer import Layer

#: integers below this bound are exact in float64 (and behave like Python ints there)
_EXACT = float(2**53)

#: candidates handled per numpy pass (bounds memory with millions of orderings)
DEFAULT_CHUNK = 8192

#: environment variable: set to "scalar" to force the one-candidate-at-a-time path
ENGINE_ENV = "ZIGZAG_EVAL"


class Unsupported(Exception):
    """The batched path does not cover this layer / mapping; use the scalar path."""


class BatchMismatch(Unsupported):
    """The winner's scalar figures differ from the batched ones (not expected to happen; the
    caller redoes the spatial mapping on the scalar path)."""


def batched_enabled() -> bool:
    """False when the environment asks for the scalar evaluation path."""
    return os.environ.get(ENGINE_ENV, "batched").strip().lower() not in ("scalar", "0", "off", "no")


# =============================================================================================
# Candidates: loop factors, orderings, compact allocations
# =============================================================================================


class LoopTable:
    """The distinct loop factors ``(dim, size)`` of a LOMA run, numbered in sorted order.

    Numbering the distinct factors in ascending tuple order makes the Williams enumeration of
    the numbers visit exactly the same sequence as the enumeration of the tuples (it only
    compares items), so orderings can be generated and stored as small integer rows.
    """

    def __init__(self, factors: list[tuple[str, int]]):
        self.factors = list(factors)
        self.distinct = sorted(set(self.factors))
        self.number = {loop: i for i, loop in enumerate(self.distinct)}
        self.dims = sorted({d for d, _ in self.distinct})
        self.dim_number = {d: i for i, d in enumerate(self.dims)}
        self.dim_of = np.array([self.dim_number[d] for d, _ in self.distinct], dtype=np.int64)
        self.size_of = np.array([s for _, s in self.distinct], dtype=np.float64)
        self.length = len(self.factors)
        self.total = math.prod(s for _, s in self.factors)

    def orderings(self) -> Iterator[tuple[int, ...]]:
        return multiset_permutations([self.number[f] for f in self.factors])

    def count(self) -> int:
        return nb_orderings(self.factors)

    def loops(self, row) -> list[tuple[str, int]]:
        return [self.distinct[i] for i in row]


def temporal_mapping_of(
    loops: LoopTable, row, cuts: dict[str, list[int]]
) -> dict[str, list[list[tuple[str, int]]]]:
    """The allocator's per-operand level lists of one compact candidate."""
    ordering = loops.loops(row)
    result = {}
    for op, ends in cuts.items():
        levels, start = [], 0
        for end in ends:
            levels.append(ordering[start:end])
            start = end
        result[op] = levels
    return result


def _chunks(iterator, length: int, size: int) -> Iterator[np.ndarray]:
    """Rows of ``length`` integers from an iterator of tuples, ``size`` rows at a time."""
    while True:
        block = list(itertools.islice(iterator, size))
        if not block:
            return
        yield np.array(block, dtype=np.int64).reshape(len(block), length)


def _constraint_mask(ids: np.ndarray, loops: LoopTable, constraints) -> np.ndarray:
    """Vectorised :func:`zigzag.search.permutations.satisfies`."""
    n, length = ids.shape
    mask = np.ones(n, dtype=bool)
    for position, dim in constraints.dim_at:
        if not -length <= position < length or dim not in loops.dim_number:
            return np.zeros(n, dtype=bool)
        mask &= loops.dim_of[ids[:, position]] == loops.dim_number[dim]
    for position, loop in constraints.loop_at:
        if not -length <= position < length or tuple(loop) not in loops.number:
            return np.zeros(n, dtype=bool)
        mask &= ids[:, position] == loops.number[tuple(loop)]
    return mask


def _prefix_products(values: np.ndarray) -> np.ndarray:
    """``out[:, p]`` = product of ``values[:, :p]`` (float64, exact for exact integers)."""
    n = values.shape[0]
    out = np.empty((n, values.shape[1] + 1), dtype=np.float64)
    out[:, 0] = 1.0
    np.cumprod(values, axis=1, out=out[:, 1:])
    return out


# =============================================================================================
# Batched memory allocator (zigzag.search.allocator, vectorised)
# =============================================================================================


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
        self.exact = loops.total * 4 < _EXACT
        for memory, operands in ref.nodes:
            if len(operands) and loops.total * memory.size * (len(operands) + 1) >= _EXACT:
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
            extent = np.minimum(float(layer.pr_sizes[data_dim]), _unique_count(rel, a, b))
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
        prefix = _prefix_products(lsize)
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


def _unique_count(rel, a, b):
    """Vectorised ``DimRelation.unique_count`` (exact for integral float64 inputs)."""
    g = math.gcd(rel.coef_a, rel.coef_b)
    return a * b - np.maximum(0.0, b - (rel.coef_a // g)) * (a - (rel.coef_b // g))


# =============================================================================================
# Batched cost model (zigzag.cost.model, vectorised)
# =============================================================================================


class _Flow:
    """One direction of one memory level for all candidates (cost model ``Flow``)."""

    __slots__ = ("period", "count", "amount", "precision", "bw_aver", "window")

    def __init__(self, period, count, amount, precision, bw_aver, window):
        self.period = period
        self.count = count
        self.amount = amount
        self.precision = precision
        self.bw_aver = bw_aver
        self.window = window

    def masked(self, keep: np.ndarray) -> "_Flow":
        return _Flow(*(np.where(keep, getattr(self, f), 0.0) for f in self.__slots__))


def _no_flow(n: int) -> _Flow:
    z = np.zeros(n)
    return _Flow(z, z, z, z, z, z)


class _Movement:
    """Per-operand quantities of one spatial variant (``OperandMovement``)."""

    __slots__ = ("D", "bits", "eff_bits", "flows", "psum")

    def __init__(self, D, bits, eff_bits, flows, psum):
        self.D = D
        self.bits = bits
        self.eff_bits = eff_bits
        self.flows = flows
        self.psum = psum


class _OperandInfo:
    """Static data of one layer operand for the batched model (masks over loop numbers and over
    dim codes, i.e. indices into ``LoopTable.dims``; code ``len(dims)`` = a dim without loops)."""

    def __init__(self, operand: Operand, loops: LoopTable):
        self.operand = operand
        self.name = operand.name
        self.n = operand.n
        self.r_of_loop = np.array([d in operand.relevant for d, _ in loops.distinct], dtype=bool)
        self.ir_of_loop = np.array([d in operand.irrelevant for d, _ in loops.distinct], dtype=bool)
        self.keep = operand.relevant | operand.irrelevant
        self.relations = operand.pr_relations
        self.relevant_code = np.array([d in operand.relevant_dec for d in loops.dims] + [False], dtype=bool)
        self.keep_code = np.array([d in self.keep for d in loops.dims] + [False], dtype=bool)
        self._codes = loops.dim_number

    def code_of(self, dim: str) -> int:
        return self._codes.get(dim, -1)


class BatchCostModel:
    """``energy_total`` and ``latency_total2`` of many temporal mappings of one spatial mapping.

    Follows :func:`zigzag.cost.model.analyse` step by step; see the module docstring for why
    the figures are bit-identical.
    """

    def __init__(self, layer: Layer, accelerator: Accelerator, fractional: LevelMapping, integer: LevelMapping,
                 loops: LoopTable, *, access_same_data_considered_as_no_access: bool = True,
                 spatial_mapping_array: dict | None = None):
        self.layer = layer
        self.accelerator = accelerator
        self.loops = loops
        self.flag = access_same_data_considered_as_no_access
        setup = layer_setup(layer, accelerator)
        self.setup = setup
        frac = normalise_levels(fractional)
        integ = normalise_levels(integer)
        frac_key = tuple((op, frac[op]) for op in setup.operands)
        int_key = tuple((op, integ[op]) for op in setup.operands)
        self.spatial = spatial_analysis(setup, frac_key)
        self.same_variant = frac_key == int_key
        self.spatial_int = self.spatial if self.same_variant else spatial_analysis(setup, int_key)
        self.ops = {op: _OperandInfo(o, loops) for op, o in setup.operands.items()}
        out = setup.operands[layer.output]
        if out.pr_relations:
            raise Unsupported("partially relevant output operand")
        # the array's energy does not depend on the temporal mapping (an IMC array's depends on
        # the spatial mapping only, imc.md §8)
        self.mac_energy = array_cost(layer, accelerator, spatial_mapping_array).mac_energy
        self.cpo = setup.cycles_per_op
        self.total_cycle = loops.total
        self.pr_sizes = setup.pr_sizes
        # every port duty (for the per-candidate structure signature), in a fixed order
        self.duties = []
        self.duty_index = {}
        for port in setup.ports:
            for duty in port.duties:
                key = (duty.layer_op, duty.level, duty.direction)
                if key not in self.duty_index:
                    self.duty_index[key] = len(self.duties)
                    self.duties.append(key)
        # static exactness bound: integer-valued quantities stay below 2**53
        biggest = max(layer.total_macs, loops.total)
        for op in setup.operands:
            biggest = max(biggest, layer.operand_size_elem(op))
        prec = max(list(layer.precision.values()) + [1])
        units = max(max(q.unit_count) for q in self.spatial.values())
        if float(biggest) * prec * units * 64 >= _EXACT:
            raise Unsupported("figures too large for exact float64 integers")

    # ----- §5.3-5.4 temporal quantities per operand -------------------------------------------
    def _temporal(self, info: _OperandInfo, ids, cuts, ctx):
        n, length, rows, lsize, prefix = ctx
        irm = info.ir_of_loop[ids]
        rm = info.r_of_loop[ids]
        # next non-ir position at or after p (length if none)
        nxt = np.empty((n, length + 1), dtype=np.int64)
        nxt[:, length] = length
        positions = np.arange(length)
        for p in range(length - 1, -1, -1):
            nxt[:, p] = np.where(irm[:, p], nxt[:, p + 1], positions[p])
        ends = []
        for k in range(info.n - 1):
            ends.append(nxt[rows, cuts[:, k]])
        ends.append(np.full(n, length, dtype=np.int64))
        starts = [np.zeros(n, dtype=np.int64)] + ends[:-1]
        cabl = [prefix[rows, e] for e in ends]
        mac_st = prefix[rows, nxt[:, 0]]

        def run_start(mask):
            rs = np.empty((n, length + 1), dtype=np.int64)
            rs[:, 0] = 0
            for p in range(length):
                rs[:, p + 1] = np.where(mask[:, p], rs[:, p], p + 1)
            return rs

        top_r, top_ir = [1.0], [1.0]
        rs_r, rs_ir = run_start(rm), run_start(irm)
        for k in range(info.n):
            e, s = ends[k], starts[k]
            q = np.maximum(rs_r[rows, e], s)
            top_r.append(prefix[rows, e] / prefix[rows, q])
            q = np.maximum(rs_ir[rows, e], s)
            top_ir.append(prefix[rows, e] / prefix[rows, q])
        return starts, ends, cabl, mac_st, top_r, top_ir, irm, rm

    # ----- §6.2 footprints --------------------------------------------------------------------
    def _footprints(self, info, spatial_levels, starts, ends, rm, ctx, ldim):
        n, length, rows, lsize, prefix = ctx
        operand = info.operand
        relevant = operand.relevant_dec
        D = [np.ones(n)]
        if not info.relations:
            pr = _prefix_products(np.where(rm, lsize, 1.0))
            cumulative = None
            for k in range(info.n):
                per_level = pr[rows, ends[k]] / pr[rows, starts[k]]
                for dim, factor in spatial_levels[k]:
                    if dim in relevant:
                        per_level = per_level * factor
                cumulative = per_level if cumulative is None else cumulative * per_level
                D.append(np.rint(cumulative))
            return D
        return self._pr_footprints(info, spatial_levels, starts, ends, ctx, ldim)

    def _pr_footprints(self, info, spatial_levels, starts, ends, ctx, ldim):
        """Footprints of a pr operand: the pr-decoupling walk (§4.6) replayed for all candidates
        at once, loop by loop in the scalar model's order, so that every float operation (the
        ``X_R`` factors are quotients) happens in the same sequence."""
        n, length, rows, lsize, prefix = ctx
        relevant = info.operand.relevant_dec
        rels = info.relations
        # decoupling state per relation: [cumulative size of dim_a, of dim_b, previous extent,
        # previous reuse]
        state = [[np.ones(n), np.ones(n), np.ones(n), np.ones(n)] for _ in rels]
        D = [np.ones(n)]
        cumulative = None
        zero = np.zeros(n, dtype=bool)  # an extent of 0: the scalar model divides by zero there
        for k in range(info.n):
            per_level = np.ones(n)
            # the temporal loops of stationary level k: positions starts[k] .. ends[k] - 1
            for p in range(int(starts[k].min()), int(ends[k].max())):
                active = (starts[k] <= p) & (p < ends[k])
                if not active.any():
                    continue
                codes, size = ldim[:, p], lsize[:, p]
                per_level = np.where(active & info.relevant_code[codes], per_level * size, per_level)
                decoupled = active & ~info.keep_code[codes]
                for st, rel in zip(state, rels):
                    is_a = codes == info.code_of(rel.dim_a)
                    hit = decoupled & (is_a | (codes == info.code_of(rel.dim_b)))
                    if hit.any():
                        factor = _pr_step(st, rel, hit, is_a, size, self.pr_sizes[rel.data_dim])
                        per_level = np.where(hit, per_level * factor, per_level)
                        zero |= hit & (st[2] == 0)
            # then the spatial unrollings of level k (the same for every candidate)
            for dim, factor in spatial_levels[k]:
                matched = False
                if dim not in info.keep:
                    for st, rel in zip(state, rels):
                        if dim in (rel.dim_a, rel.dim_b):
                            matched = True
                            everywhere = np.ones(n, dtype=bool)
                            x_r = _pr_step(st, rel, everywhere, np.full(n, dim == rel.dim_a), factor,
                                           self.pr_sizes[rel.data_dim])
                            per_level = per_level * x_r
                            zero |= st[2] == 0
                if not matched and dim in relevant:
                    per_level = per_level * factor
            cumulative = per_level if cumulative is None else cumulative * per_level
            D.append(np.rint(cumulative))
        self._zero_extent |= zero
        return D

    # ----- §6.3 psum flags of the (non-pr) output --------------------------------------------
    def _psum(self, info, spatial_levels, starts, ends, irm, lsize, rows):
        n = len(rows)
        irrelevant = info.operand.irrelevant_dec
        counts = np.zeros((n, irm.shape[1] + 1))
        np.cumsum(irm & (lsize > 1), axis=1, out=counts[:, 1:])
        has_ir = [np.full(n, any(d in irrelevant and f > 1 for d, f in spatial_levels[0]))]
        for k in range(info.n):
            temporal = counts[rows, ends[k]] > counts[rows, starts[k]]
            spatial_part = any(d in irrelevant and f > 1 for d, f in spatial_levels[k + 1])
            has_ir.append(temporal | spatial_part)
        psum = []
        for k in range(info.n):
            flag = np.zeros(n, dtype=bool)
            for a in range(k + 1, info.n + 1):
                flag = flag | has_ir[a]
            psum.append(flag)
        psum.append(np.zeros(n, dtype=bool))
        return psum

    # ----- §6-7 data movement per operand and variant -----------------------------------------
    def _movement(self, info, temporal, spatial_q, psum, D) -> _Movement:
        starts, ends, cabl, mac_st, top_r, top_ir, irm, rm = temporal
        operand = info.operand
        n_lv = info.n
        total = float(self.total_cycle)
        boost = spatial_q.boost
        if operand.is_output:
            p_o, p_of = float(operand.precision), float(operand.final_precision)
            prec = [np.where(psum[a], p_o, p_of) for a in range(n_lv + 1)]
            c = [1.0] + cabl
        else:
            prec = [float(operand.precision)] * (n_lv + 1)
            c = [mac_st if self.flag else 1.0] + cabl
        bits = [D[a] * prec[a] for a in range(n_lv + 1)]
        eff_bits = [np.floor_divide(bits[a], top_r[a]) for a in range(n_lv + 1)]
        low = [bits[a] / c[a] for a in range(n_lv + 1)]
        high = [low[a] * boost[a] for a in range(n_lv + 1)]
        flows = []
        nrows = len(ends[0])
        for k in range(n_lv):
            s_low, s_high = top_ir[k], top_ir[k + 1]
            t_low, t_high = c[k], c[k + 1]
            n_low, n_high = np.floor_divide(total, t_low), np.floor_divide(total, t_high)
            w_low = np.trunc(np.divide(t_low, s_low))
            w_high = np.trunc(np.divide(t_high, s_high))
            if operand.is_output:
                amount_low = np.trunc(D[k] * boost[k])
                bw_low = np.trunc(high[k])
                bw_high = np.trunc(low[k + 1])
                fl = _Flow(t_low, n_low, amount_low, np.where(psum[k], p_o, p_of), bw_low, w_low)
                tl = fl.masked(psum[k])
                th = _Flow(t_high, n_high, D[k + 1], np.where(psum[k + 1], p_o, p_of), bw_high, w_high)
                fh = th.masked(psum[k + 1])
            else:
                p = float(operand.precision)
                tl = _Flow(t_low, n_low, D[k] * boost[k], p, np.trunc(high[k]), w_low)
                fh = _Flow(t_high, n_high, D[k + 1], p, np.trunc(low[k + 1]), w_high)
                fl = th = _no_flow(nrows)
            if k == n_lv - 1:
                fh = th = _no_flow(nrows)
            flows.append({"fh": fh, "tl": tl, "fl": fl, "th": th})
        return _Movement(D, bits, eff_bits, flows, psum)

    # ----- full evaluation --------------------------------------------------------------------
    def evaluate(self, ids: np.ndarray, cuts: dict[str, np.ndarray], *, latency: bool = True):
        """``(energy_total, latency_total2, exact)`` arrays; ``exact`` is False for the
        candidates whose figures must come from the scalar model instead."""
        n, length = ids.shape
        if n == 0:
            return np.zeros(0), (np.zeros(0) if latency else None), np.ones(0, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._evaluate(ids, cuts, latency)

    def _evaluate(self, ids, cuts, latency):
        n, length = ids.shape
        rows = np.arange(n)
        ldim = self.loops.dim_of[ids]
        lsize = self.loops.size_of[ids]
        prefix = _prefix_products(lsize)
        ctx = (n, length, rows, lsize, prefix)
        exact = np.ones(n, dtype=bool)
        self._zero_extent = np.zeros(n, dtype=bool)

        temporal, movement, movement_int = {}, {}, {}
        out = self.layer.output
        for op, info in self.ops.items():
            tq = self._temporal(info, ids, cuts[op], ctx)
            temporal[op] = tq
            starts, ends, cabl, mac_st, top_r, top_ir, irm, rm = tq
            sq = self.spatial[op]
            D = self._footprints(info, sq.levels, starts, ends, rm, ctx, ldim)
            psum = self._psum(info, sq.levels, starts, ends, irm, lsize, rows) if op == out else None
            movement[op] = self._movement(info, tq, sq, psum, D)
            if self.same_variant:
                movement_int[op] = movement[op]
            elif latency:
                sq_int = self.spatial_int[op]
                D_int = self._footprints(info, sq_int.levels, starts, ends, rm, ctx, ldim)
                psum_int = self._psum(info, sq_int.levels, starts, ends, irm, lsize, rows) if op == out else None
                movement_int[op] = self._movement(info, tq, sq_int, psum_int, D_int)

        exact &= ~self._zero_extent
        # §7.6 word accesses and §8 energy (fractional variant)
        energy = np.zeros(n)
        integer_costs = False
        for op, info in self.ops.items():
            sq = self.spatial[op]
            for k, lv in enumerate(info.operand.levels):
                instances = float(sq.unit_count[k + 1])
                flows = movement[op].flows[k]
                acc = {}
                for d in DIRECTIONS:
                    flow = flows[d]
                    bw_min, bw_max = lv.bw_min[d], lv.bw_max[d]
                    moving = (flow.amount != 0) & (flow.precision != 0)
                    if bw_min is None and bw_max is None:
                        exact &= ~(flow.amount != 0)  # the scalar model raises there
                        acc[d] = 0.0
                        continue
                    data = flow.amount * flow.precision
                    exact &= data < _EXACT
                    value = np.ceil(data / bw_min) * (bw_min / bw_max) * flow.count * instances
                    value = np.where(moving, np.trunc(value), 0.0)
                    exact &= value < _EXACT
                    acc[d] = value
                e_th = acc["th"] * lv.r_cost
                e_fh = acc["fh"] * lv.w_cost
                e_tl = acc["tl"] * lv.r_cost
                e_fl = acc["fl"] * lv.w_cost
                if not (isinstance(lv.r_cost, float) and isinstance(lv.w_cost, float)):
                    integer_costs = True
                energy = energy + ((e_th + e_tl) + (e_fh + e_fl))
        if integer_costs:
            # the scalar model sums Python ints exactly: stay where float64 does too
            exact &= energy < _EXACT
        energy = energy + self.mac_energy
        if not latency:
            return energy, None, exact

        lat, exact_lat = self._latency(movement, movement_int, n)
        return energy, lat, exact & exact_lat

    # ----- §9 latency ---------------------------------------------------------------------------
    def _latency(self, movement, movement_int, n):
        setup = self.setup
        exact = np.ones(n, dtype=bool)
        # §6.4 effective utilisations, shared sums (fractional variant)
        eff = {}
        for op, info in self.ops.items():
            eff[op] = [movement[op].eff_bits[k + 1] / float(lv.size) for k, lv in enumerate(info.operand.levels)]
        eff_sh = {op: list(v) for op, v in eff.items()}
        for members in setup.sharing_groups:
            e = None
            for op, k in members:
                e = eff[op][k] if e is None else e + eff[op][k]
            for op, k in members:
                eff_sh[op][k] = e
        # §9.1 double buffering (with the reference's in-place update, Q13)
        db = {}
        for op, info in self.ops.items():
            flags = [np.zeros(n, dtype=bool)]
            for k, lv in enumerate(info.operand.levels):
                rule1 = eff_sh[op][k] <= 0.5
                rule2 = ~rule1 & (eff[op][k] <= 1 - eff_sh[op][k])
                flags.append(rule1 | rule2)
                if lv.sharing is not None:
                    for m_op, m_k in lv.sharing:
                        eff_sh[m_op][m_k] = np.where(rule2, eff_sh[m_op][m_k] + eff[op][k], eff_sh[m_op][m_k])
            db[op] = flags
        # §9.2 real and allowed cycles (integer variant)
        real, allowed = {}, {}
        for op, info in self.ops.items():
            real_op, allowed_op = [], []
            for k, lv in enumerate(info.operand.levels):
                flows = movement_int[op].flows[k]
                r, a = {}, {}
                for d in DIRECTIONS:
                    flow = flows[d]
                    bw = lv.bw_max[d]
                    if bw:
                        data = flow.amount * flow.precision
                        exact &= data < _EXACT
                        r[d] = np.ceil(data / bw)
                    else:
                        r[d] = np.zeros(n)
                    buffered = db[op][k + 1] if d in ("th", "fh") else db[op][k]
                    a[d] = np.ceil(np.where(buffered, flow.period, flow.window) * self.cpo)
                real_op.append(r)
                allowed_op.append(a)
            real[op] = real_op
            allowed[op] = allowed_op

        # structure signature per candidate: per duty 0 = no traffic, 1 = once, 2 = repeated
        codes = np.zeros((n, max(len(self.duties), 1)), dtype=np.int8)
        for i, (op, level, d) in enumerate(self.duties):
            count = movement_int[op].flows[level][d].count
            codes[:, i] = np.where(count == 0, 0, np.where(count == 1, 1, 2))
        latency = np.zeros(n)
        if n == 0:
            return latency, exact
        packed = np.zeros(n, dtype=np.int64)
        if codes.shape[1] <= 39:  # base-3 digits fit an int64
            for i in range(codes.shape[1]):
                packed = packed * 3 + codes[:, i]
            keys, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
            signatures = codes[first]
        else:
            signatures, inverse = np.unique(codes, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for g, signature in enumerate(signatures):
            sel = np.nonzero(inverse == g)[0]
            try:
                lat_g, exact_g = self._latency_group(signature, sel, movement_int, real, allowed)
            except Unsupported:
                exact[sel] = False
                continue
            latency[sel] = lat_g
            exact[sel] &= exact_g
        return latency, exact

    def _latency_group(self, signature, sel, movement_int, real, allowed):
        """Latency of the candidates ``sel`` sharing one structure signature (§9.3-9.7)."""
        setup = self.setup
        m = len(sel)

        def code(op, level, d):
            return int(signature[self.duty_index[(op, level, d)]])

        def pick(arr):
            return arr[sel] if isinstance(arr, np.ndarray) else np.full(m, float(arr))

        # §9.3-9.4 stall / slack per port
        exact = np.ones(m, dtype=bool)
        ss_comb = np.zeros(m)
        for port in setup.ports:
            acts = []
            for duty in port.duties:
                op, level, d = duty.layer_op, duty.level, duty.direction
                if code(op, level, d) == 0:
                    continue
                flow = movement_int[op].flows[level][d]
                acts.append((pick(real[op][level][d]), pick(allowed[op][level][d]),
                             np.ceil(pick(flow.period) * self.cpo), pick(flow.count)))
            if not acts:
                continue
            if len(acts) == 1:
                r, a, _, cnt = acts[0]
                ss = (r - a) * (cnt - 1)
            else:
                union = self._window_union(acts, m)
                positive = np.zeros(m)
                negative = np.zeros(m)
                windows = np.zeros(m)
                for r, a, _, cnt in acts:
                    s = (r - a) * (cnt - 1)
                    positive = positive + np.where(s > 0, s, 0.0)
                    negative = negative + np.where(s > 0, 0.0, s)
                    windows = windows + a * (cnt - 1)
                ss = positive + np.maximum(0.0, negative + windows - union)
                exact &= (positive < _EXACT) & (-negative < _EXACT) & (windows < _EXACT) & (union < _EXACT)
            exact &= np.abs(ss) < _EXACT
            ss_comb = np.maximum(ss_comb, ss)

        # §9.5 per-port loading records
        total = float(self.total_cycle)
        tcc = math.ceil(total * self.cpo) + ss_comb
        loading = {op: {} for op in self.layer.inputs}
        offloading = {self.layer.output: {}}

        def record(duty, cycles, shared):
            table = loading if duty.loading else offloading
            table.setdefault(duty.layer_op, {})[duty.key] = (cycles, shared)

        for port in setup.ports:
            shared = port.shared_by_two_inputs
            once = []
            bw_req = 0.0
            for duty in port.loading_duties:
                op, level, d = duty.layer_op, duty.level, duty.direction
                c = code(op, level, d)
                if c == 0:
                    continue
                cycles = pick(real[op][level][d])
                if c == 1:
                    once.append((duty, cycles))
                else:
                    bw_req = bw_req + np.ceil(pick(movement_int[op].flows[level][d].bw_aver) / self.cpo)
                    record(duty, cycles, shared)
            if once:
                totals = [cyc for _, cyc in once]
                minima = [np.ceil(pick(movement_int[d.layer_op].bits[1]) / port.bw_max) for d, _ in once]
                surplus = ((port.bw_max - bw_req) / port.bw_max) * tcc
                remaining = _reduce_balanced(totals, minima, surplus)
                for (duty, _), cyc in zip(once, remaining):
                    record(duty, cyc, shared)

        # §9.6 on-/off-loading
        inputs = self.layer.inputs
        try:
            indiv = {op: 0.0 for op in inputs}
            half = {op: 0.0 for op in inputs}
            shared = {op: 0.0 for op in inputs}
            for op in inputs:
                table = loading[op]
                for k in range(setup.operands[op].n - 1):
                    cyc1, sh1 = table[loading_key(op, k, "fh")]
                    cyc2, sh2 = table[loading_key(op, k + 1, "tl")]
                    longest = np.maximum(cyc1, cyc2)
                    if not sh1 and not sh2:
                        indiv[op] = indiv[op] + longest
                    elif sh1 and sh2:
                        shared[op] = shared[op] + longest
                    else:
                        half[op] = longest
            if not inputs:
                onload = 0.0
            elif len(inputs) == 1:
                onload = indiv[inputs[0]]
            else:
                op1, op2 = inputs[0], inputs[1]
                p1 = shared[op1] + np.maximum(shared[op2] + half[op2] + indiv[op2], half[op1] + indiv[op1])
                p2 = shared[op2] + np.maximum(shared[op1] + half[op1] + indiv[op1], half[op2] + indiv[op2])
                onload = np.minimum(p1, p2)
            out = self.layer.output
            table = offloading[out]
            offload = 0.0
            for k in range(setup.operands[out].n - 1):
                offload = offload + np.maximum(table[loading_key(out, k, "th")][0],
                                               table[loading_key(out, k + 1, "fl")][0])
        except KeyError:
            raise Unsupported("loading table without an expected entry") from None

        latency0 = total * self.cpo + ss_comb
        latency1 = latency0 + onload
        latency2 = latency1 + offload
        return latency2, exact & (np.abs(latency2) < _EXACT)

    @staticmethod
    def _window_union(acts, m):
        """Vectorised ``updating_window_union``; the rare timeline case goes through the scalar
        helper candidate by candidate."""
        union = np.zeros(m)
        found = np.zeros(m, dtype=bool)
        for r, a, period, cnt in acts:
            hit = ~found & (period == a)
            union = np.where(hit, period * cnt, union)
            found |= hit
        rest = np.nonzero(~found)[0]
        if rest.size:
            periods = np.stack([act[2] for act in acts])
            longest = np.argmax(periods, axis=0)  # first of equal periods
            for i in rest:
                pattern = tuple((int(act[2][i]), int(act[1][i])) for act in acts)
                j = int(longest[i])
                union[i] = _marked_slots(pattern, int(acts[j][2][i])) * acts[j][3][i]
        return union


def _pr_step(st, rel, hit, is_a, size, pr_size):
    """One pr loop of the decoupling walk where ``hit``: grows the cumulative size of its dim,
    updates the state ``[cum_a, cum_b, previous extent, previous reuse]`` and returns the
    ``X_R`` factor ``extent / previous extent`` (meaningful where ``hit``)."""
    cum_a = np.where(hit & is_a, st[0] * size, st[0])
    cum_b = np.where(hit & ~is_a, st[1] * size, st[1])
    extent = np.minimum(float(pr_size), _unique_count(rel, np.trunc(cum_a), np.trunc(cum_b)))
    reuse = (cum_a * cum_b) / extent
    factor = extent / st[2]
    st[0], st[1] = cum_a, cum_b
    st[2] = np.where(hit, extent, st[2])
    st[3] = np.where(hit, reuse, st[3])
    return factor


_SLOTS_CACHE: dict = {}


def _marked_slots(pattern: tuple, horizon: int) -> int:
    key = (pattern, horizon)
    value = _SLOTS_CACHE.get(key)
    if value is None:
        acts = [PortActivity("", 0, "", 0, allowed, period, 0) for period, allowed in pattern]
        value = marked_slots(acts, horizon)
        if len(_SLOTS_CACHE) > 100_000:
            _SLOTS_CACHE.clear()
        _SLOTS_CACHE[key] = value
    return value


def _reduce_balanced(cycles: list, minima: list, surplus) -> list:
    """Vectorised ``zigzag.cost.model.reduce_balanced`` (same steps, same float operations)."""
    m = len(cycles)
    n = len(cycles[0])
    current = np.stack(cycles).astype(np.float64)  # (m, n)
    mins = np.stack(minima).astype(np.float64)
    # the scalar takes max(0, surplus) and returns untouched when it is <= 0
    active = surplus > 0
    surplus = np.where(active, surplus, 0.0)
    order = np.argsort(-current, axis=0, kind="stable")  # largest first, stable on ties
    cols = np.arange(n)
    for i in range(m):
        j = order[i]
        step = current[j, cols] - mins[j, cols]
        capacity = step * (i + 1)
        stop = surplus < capacity
        step = np.where(stop, surplus / (i + 1), step)
        for prev in range(i + 1):
            rows = order[prev]
            current[rows, cols] = np.where(active, current[rows, cols] - step, current[rows, cols])
        surplus = np.where(active & ~stop, surplus - capacity, surplus)
        active = active & ~stop
    return [current[i] for i in range(m)]


# =============================================================================================
# The search driver
# =============================================================================================


class _Figures(NamedTuple):
    energy_total: float
    latency_total2: float


def _better(e1, l1, e2, l2, opt: str) -> bool:
    """``zigzag.search.reduce.is_better`` on bare figures."""
    return is_better(_Figures(e1, l1), _Figures(e2, l2), opt)


def best_index(energy: np.ndarray, latency: np.ndarray | None, opt: str) -> int:
    """Index of the candidate the reduction keeps among a batch (first of exact ties)."""
    if opt == "energy":
        best_e = energy.min()
        tie = np.nonzero(energy == best_e)[0]
        if latency is None:
            return int(tie[0])
        sub = latency[tie]
        return int(tie[np.nonzero(sub == sub.min())[0][0]])
    if opt == "latency":
        best_l = latency.min()
        tie = np.nonzero(latency == best_l)[0]
        sub = energy[tie]
        return int(tie[np.nonzero(sub == sub.min())[0][0]])
    if opt == "EDP":
        edp = latency * energy
        return int(np.nonzero(edp == edp.min())[0][0])
    raise ValueError(f"unknown optimisation criterion '{opt}'")


@dataclass
class BatchStats:
    orderings: int = 0  # orderings enumerated (after user constraints)
    evaluated: int = 0  # orderings allocated successfully (= candidates)
    latency_computed: int = 0  # candidates whose latency part was computed
    scalar_fallbacks: int = 0  # candidates evaluated with the scalar model instead


def search_temporal_mappings(
    layer: Layer,
    accelerator: Accelerator,
    fractional: LevelMapping,
    integer: LevelMapping,
    *,
    opt: str = "latency",
    lpf_limit: int | None = 6,
    even: bool = False,
    access_same_data_considered_as_no_access: bool = True,
    spatial_mapping_array: dict | None = None,
    show_progress: bool | None = False,
    chunk: int = DEFAULT_CHUNK,
    stats: BatchStats | None = None,
) -> tuple[CostResult, int]:
    """Best LOMA temporal mapping of one spatial mapping, as the scalar loop would find it.

    Returns ``(scalar CostResult of the winner, number of candidates evaluated)``; raises
    :class:`Unsupported` (before any work is done) when the batched path cannot be used, and
    the scalar path's errors otherwise.
    """
    from zigzag.search.loma import complete_user_ordering, layer_temporal_loops, ordering_factors

    stats = stats if stats is not None else BatchStats()
    temporal = layer_temporal_loops(layer, fractional)
    if complete_user_ordering(layer, temporal) is not None:
        raise Unsupported("complete user temporal ordering: a single candidate")
    constraints, factors = ordering_factors(layer, temporal, lpf_limit)
    loops = LoopTable(factors)
    allocator = BatchAllocator(layer, accelerator, fractional, loops, even=even)
    if not allocator.exact:
        raise Unsupported("allocator costs too large for exact float64 integers")
    model = None  # built at the first allocated candidate, where the scalar loop would first evaluate

    def scalar_eval(row, cut_row):
        tm = temporal_mapping_of(loops, row, cut_row)
        return evaluate(layer, accelerator, fractional, integer, tm,
                               access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
                               spatial_mapping_array=spatial_mapping_array)

    if show_progress is None:
        show_progress = sys.stderr.isatty()
    progress = None
    if show_progress:
        from tqdm import tqdm

        progress = tqdm(total=loops.count(), desc=f"{layer.name}: loop orderings", leave=False, unit="ord")

    best = None  # (energy, latency, row, cuts-dict)
    count = 0
    length = loops.length
    for ids in _chunks(loops.orderings(), length, chunk):
        if progress is not None:
            progress.update(len(ids))
        if constraints:
            ids = ids[_constraint_mask(ids, loops, constraints)]
        stats.orderings += len(ids)
        if not len(ids):
            continue
        alive, cuts = allocator.allocate(ids)
        keep = np.nonzero(alive)[0]
        if not keep.size:
            continue
        ids = ids[keep]
        cuts = {op: c[keep] for op, c in cuts.items()}
        count += len(ids)
        stats.evaluated += len(ids)
        if model is None:
            model = BatchCostModel(
                layer, accelerator, fractional, integer, loops,
                access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
                spatial_mapping_array=spatial_mapping_array,
            )

        if opt == "energy":
            energy, _, exact = model.evaluate(ids, cuts, latency=False)
            energy = _patch(energy, None, exact, ids, cuts, scalar_eval, stats)[0]
            # only the candidates with the lowest energy can win (ties broken by latency)
            low = energy.min()
            if best is not None and low > best[0]:
                continue
            sub = np.nonzero(energy == low)[0]
            ids, cuts = ids[sub], {op: c[sub] for op, c in cuts.items()}
        energy, latency, exact = model.evaluate(ids, cuts)
        stats.latency_computed += len(ids)
        energy, latency = _patch(energy, latency, exact, ids, cuts, scalar_eval, stats)
        i = best_index(energy, latency, opt)
        candidate = (float(energy[i]), float(latency[i]), ids[i].copy(), {op: c[i].tolist() for op, c in cuts.items()})
        if best is None or _better(candidate[0], candidate[1], best[0], best[1], opt):
            best = candidate
    if progress is not None:
        progress.close()
    if best is None:
        from zigzag.search.loma import no_fit_error

        raise no_fit_error(layer, accelerator, fractional, even=even, lpf_limit=lpf_limit)
    result = scalar_eval(best[2], best[3])
    if result.energy_total != best[0] or result.latency_total2 != best[1]:
        raise BatchMismatch(
            f"batched and scalar figures differ for layer {layer.name}: "
            f"{best[0]!r}/{best[1]!r} vs {result.energy_total!r}/{result.latency_total2!r}"
        )
    return result, count


def _patch(energy, latency, exact, ids, cuts, scalar_eval, stats):
    """Replace the figures of the candidates flagged inexact by the scalar model's."""
    bad = np.nonzero(~exact)[0]
    if bad.size:
        stats.scalar_fallbacks += int(bad.size)
        energy = energy.copy()
        latency = None if latency is None else latency.copy()
        for i in bad:
            result = scalar_eval(ids[i], {op: c[i].tolist() for op, c in cuts.items()})
            energy[i] = result.energy_total
            if latency is not None:
                latency[i] = result.latency_total2
    return energy, latency
