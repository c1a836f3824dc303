"""Batched cost model: ``energy_total`` and ``latency_total2`` of many temporal mappings of one
spatial mapping, following :mod:`zigzag.cost.model` step by step (docs/models/cost-model.md#spatial-mapping)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from zigzag.cost.array import array_cost
from zigzag.mapping_search.batched.candidates import (
    EXACT,
    FiguresTooLarge,
    LoopTable,
    Unsupported,
    prefix_products,
)
from zigzag.mapping_search.batched.accesses import (
    access_energy,
    idle_flow,
    kept_with,
    word_accesses,
)
from zigzag.mapping_search.batched.latency import batch_latency
from zigzag.cost.model import LATENCY_MODELS
from zigzag.cost.model.quantities import normalise_levels, spatial_analysis
from zigzag.cost.model.setup import layer_setup
from zigzag.hardware.accelerator import DIRECTIONS, Accelerator
from zigzag.mapping_search.batched.operands import OperandInfo, model_static
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.workload.layer import Layer


#: the figures of a flow in :class:`Packed` (cost model ``Flow``'s fields)
FLOW_FIGURES = ("period", "count", "amount", "precision", "bw_aver", "window")
#: no partial-sum flags (an input operand)
_NO_PSUM = np.zeros((0, 0), dtype=bool)
_NO_PSUM.setflags(write=False)


class Packed(NamedTuple):
    """The data movement of every (operand, level) of one spatial variant, for all candidates
    (``movement_kernels.operand_flows`` writes each operand's part): ``flows[s, f]`` the figure
    ``f`` (:data:`FLOW_FIGURES`) of the flow in slot ``s`` (:meth:`BatchCostModel.flow_slots`:
    the (operand, memory level, direction) that may move data; the last slot all 0);
    ``bits`` and ``eff_bits``: per operand its levels ``0 .. N`` (0 the array), the operands
    one after the other (:attr:`BatchCostModel.bits_row`)."""

    flows: np.ndarray
    bits: np.ndarray
    eff_bits: np.ndarray


class _Movement(NamedTuple):
    """Per-operand quantities of one spatial variant (``OperandMovement``): per level ``0 .. N``
    the bits held and ``bits // top_r`` (rows, views of ``packed``), and the slots of its flows
    in ``packed`` (``(N, 4)``, -1 where no data ever moves)."""

    bits: np.ndarray
    eff_bits: np.ndarray
    slots: np.ndarray
    packed: Packed


class _Temporal(NamedTuple):
    """An operand's temporal quantities (``movement_kernels.temporal_levels``): per memory level
    (rows) where its loops end, the products below those ends and of its top r and ir loops;
    the product below the array's first non-ir loop; the candidates' ir and r masks."""

    ends: np.ndarray
    cabl: np.ndarray
    mac_st: np.ndarray
    top_r: np.ndarray
    top_ir: np.ndarray
    irm: np.ndarray
    rm: np.ndarray


class BatchCostModel:
    """``energy_total`` and ``latency_total2`` of many temporal mappings of one spatial mapping.

    Follows :func:`zigzag.cost.model.analyse` step by step; see the module docstring for why
    the figures are bit-identical.
    """

    def __init__(
        self,
        layer: Layer,
        accelerator: Accelerator,
        fractional: LevelMapping,
        integer: LevelMapping,
        loops: LoopTable,
        *,
        access_same_data_considered_as_no_access: bool = True,
        spatial_mapping_array: dict | None = None,
        latency_model: str = "zigzag",
        approximate: bool = False,
    ):
        """``approximate``: build even when the figures may leave the exact range (they then only rank
        the candidates, ``zigzag.mapping_search.batched.ranked``); else :class:`FiguresTooLarge` is raised."""
        self.layer = layer
        self.accelerator = accelerator
        self.loops = loops
        self.flag = access_same_data_considered_as_no_access
        if latency_model not in LATENCY_MODELS:
            raise ValueError(
                f"unknown latency model '{latency_model}'; one of {', '.join(LATENCY_MODELS)}"
            )
        self.latency_model = latency_model
        setup = layer_setup(layer, accelerator)
        self.setup = setup
        frac = normalise_levels(fractional)
        integ = frac if integer is fractional else normalise_levels(integer)
        frac_key = tuple((op, frac[op]) for op in setup.operands)
        int_key = tuple((op, integ[op]) for op in setup.operands)
        self.spatial = spatial_analysis(setup, frac_key)
        self.same_variant = frac_key == int_key
        self.spatial_int = self.spatial if self.same_variant else spatial_analysis(setup, int_key)
        static = model_static(setup, layer, loops)
        self.ops = {op: OperandInfo(o, static.masks[op]) for op, o in setup.operands.items()}
        out = setup.operands[layer.output]
        if out.pr_relations:
            raise Unsupported("partially relevant output operand")
        # the array's energy does not depend on the temporal mapping (an IMC array's depends on
        # the spatial mapping only, docs/models/imc.md#array-energy-per-layer)
        self.mac_energy = array_cost(layer, accelerator, spatial_mapping_array).mac_energy
        self.cpo = setup.cycles_per_op
        self.total_cycle = loops.total
        self.pr_sizes = setup.pr_sizes
        # every port duty (for the per-candidate structure signature), in a fixed order
        self.duties = static.duties
        self.duty_index = static.duty_index
        #: per operand: the row of its level 0 (the array) in :class:`Packed`'s bits
        self.bits_row, at = {}, 0
        for op, info in self.ops.items():
            self.bits_row[op] = at
            at += info.n + 1
        #: per operand the slots of its flows in :class:`Packed`, and how many there are
        self.flow_slots, self.flow_count = kept_with(self.spatial, "flow slots", self._slots_of)
        self._latency_rows = None
        # static exactness bound: integer-valued quantities stay below 2**53
        biggest = max(static.biggest, loops.total)
        prec = static.precision
        units = max(max(q.unit_count) for q in self.spatial.values())
        if float(biggest) * prec * units * 64 >= EXACT and not approximate:
            raise FiguresTooLarge("figures too large for exact float64 integers")

    def _slots_of(self) -> tuple:
        """Per operand, the slot in :class:`Packed`'s flows of each (memory level, direction)
        that may move data (``(N, 4)``, -1 elsewhere), and the number of slots."""
        slots, count = {}, 0
        for op, info in self.ops.items():
            table = np.full((info.n, len(DIRECTIONS)), -1, dtype=np.int64)
            for k in range(info.n):
                for d, direction in enumerate(DIRECTIONS):
                    if not idle_flow(info.operand, k, direction):
                        table[k, d], count = count, count + 1
            table.setflags(write=False)
            slots[op] = table
        return slots, count

    # ----- docs/models/cost-model.md#temporal-mapping temporal quantities per operand -------------------------------------------
    def _temporal(self, info: OperandInfo, ids, cuts, prefix) -> "_Temporal":
        """The levels' loop ends and products (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.temporal_levels`)."""
        from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

        irm = info.ir_of_loop[ids]
        rm = info.r_of_loop[ids]
        ends, cabl, mac_st, top_r, top_ir = movement_kernels.temporal_levels(
            irm, rm, cuts[:, : info.n - 1].astype(np.int64, copy=False), prefix
        )
        return _Temporal(ends, cabl, mac_st, top_r, top_ir, irm, rm)

    def _spatial_steps(self, info, spatial_q) -> tuple:
        """What the compiled footprints and partial-sum flags read of the operand's spatial
        levels: per memory level its relevant factors (offsets, factors), per level whether an
        irrelevant dim is unrolled above 1, and the levels' boosts (kept with ``spatial_q``)."""

        def make():
            levels = spatial_q.levels
            relevant, irrelevant = info.operand.relevant_dec, info.operand.irrelevant_dec
            factors = [[f for d, f in levels[k] if d in relevant] for k in range(info.n)]
            ptr = np.zeros(info.n + 1, dtype=np.int64)
            ptr[1:] = np.cumsum([len(f) for f in factors])
            steps = (
                ptr,
                np.array([f for level in factors for f in level], dtype=np.float64),
                np.array(
                    [any(d in irrelevant and f > 1 for d, f in lv) for lv in levels], dtype=bool
                ),
                np.array(spatial_q.boost, dtype=np.float64),
            )
            for array in steps:
                array.setflags(write=False)
            return steps

        return kept_with(spatial_q, (info.name, "steps"), make)

    # ----- docs/models/cost-model.md#data-held-per-level footprints --------------------------------------------------------------------
    def _footprints(self, info, steps, temporal, lsize, ldim, spatial_levels) -> np.ndarray:
        """The footprints ``(levels + 1, candidates)``, level 0 the array's 1 (compiled:
        :func:`~zigzag.mapping_search.batched.movement_kernels.plain_footprints`)."""
        from zigzag.mapping_search.batched import movement_kernels

        if not info.relations:
            return movement_kernels.plain_footprints(temporal.ends, temporal.rm, lsize, *steps[:2])
        return self._pr_footprints(info, spatial_levels, temporal.ends, lsize, ldim)

    def _pr_footprints(self, info, spatial_levels, ends, lsize, ldim):
        """Footprints of a pr operand (level 0 the array's 1): the pr-decoupling walk (docs/models/cost-model.md#spatial-mapping)
        replayed candidate by candidate, loop by loop in the scalar model's order, so that every
        float operation (the ``X_R`` factors are quotients) happens in the same sequence
        (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.pr_footprints`)."""
        from zigzag.mapping_search.batched import movement_kernels

        rels = info.relations
        rel_codes = np.array(
            [[info.code_of(rel.dim_a), info.code_of(rel.dim_b)] for rel in rels], dtype=np.int64
        )
        rel_figures = np.array(
            [[*rel.reduced_coefficients, self.pr_sizes[rel.data_dim]] for rel in rels],
            dtype=np.float64,
        )
        # each level's spatial unrollings: a relation's step (on its dim a or b) where the dim is
        # decoupled, else the factor of a relevant dim
        ptr, steps = [0], []
        for level in spatial_levels[: info.n]:
            for dim, factor in level:
                matched = [
                    (r, dim == rel.dim_a, factor)
                    for r, rel in enumerate(rels)
                    if dim not in info.keep and dim in (rel.dim_a, rel.dim_b)
                ]
                steps += matched
                if not matched and dim in info.operand.relevant_dec:
                    steps.append((-1, False, factor))
            ptr.append(len(steps))
        D, zero = movement_kernels.pr_footprints(
            ends,
            ldim,
            lsize,
            info.relevant_code,
            info.keep_code,
            rel_codes,
            rel_figures,
            np.array(ptr, dtype=np.int64),
            np.array([s[0] for s in steps], dtype=np.int64),
            np.array([s[1] for s in steps], dtype=bool),
            np.array([s[2] for s in steps], dtype=np.float64),
        )
        self._zero_extent |= zero
        return D

    # ----- docs/models/cost-model.md#data-held-per-level data movement per operand and variant -----------------------------------------
    def _movement(self, info, temporal, steps, lsize, D, packed) -> _Movement:
        """The operand's partial-sum flags (the output), bits and flows, written into its part of
        ``packed`` (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.psum_flags`
        and :func:`~zigzag.mapping_search.batched.movement_kernels.operand_flows`)."""
        from zigzag.mapping_search.batched import movement_kernels

        operand = info.operand
        psum = None
        if operand.is_output:
            psum = movement_kernels.psum_flags(temporal.ends, temporal.irm, lsize, steps[2])
        row = self.bits_row[info.name]
        bits = packed.bits[row : row + info.n + 1]
        eff_bits = packed.eff_bits[row : row + info.n + 1]
        slots = self.flow_slots[info.name]
        movement_kernels.operand_flows(
            D,
            _NO_PSUM if psum is None else psum,
            temporal.top_r,
            temporal.top_ir,
            temporal.cabl,
            temporal.mac_st,
            steps[3],
            float(self.total_cycle),
            operand.is_output,
            self.flag,
            float(operand.precision),
            float(operand.final_precision),
            bits,
            eff_bits,
            packed.flows,
            slots,
        )
        return _Movement(bits, eff_bits, slots, packed)

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
        n = ids.shape[0]
        accesses, exact, movement, movement_int = self._parts(ids, cuts, latency)
        energy, exact = access_energy(accesses, self.level_costs(), self.mac_energy, n, exact)
        if not latency:
            return energy, None, exact
        lat, exact_lat = batch_latency(self, movement, movement_int, n)
        return energy, lat, exact & exact_lat

    def _parts(self, ids, cuts, latency, moved=None, memo=None):
        """Word accesses, exactness flags and the data movement (fractional, integer) of the
        candidates; ``moved``: their :meth:`movements`, when known (``memo``: its
        ``LatencyMemo``, which keeps the accesses by the bandwidths for the variants to come)."""
        n = ids.shape[0]
        movement, movement_int, zero_extent = moved or self.movements(ids, cuts, latency)
        exact = ~zero_extent
        return word_accesses(self, movement, n, exact, memo), exact, movement, movement_int

    def movements(self, ids, cuts, latency=True):
        """``(movement, movement_int, zero_extent)``: the data movement of the candidates under
        the fractional and (with ``latency``) the integer spatial mapping, and where an extent of
        0 makes them inexact; reads no memory's size, bandwidth or cost."""
        n = ids.shape[0]
        ldim = self.loops.dim_of[ids]
        lsize = self.loops.size_of[ids]
        prefix = prefix_products(lsize)
        self._zero_extent = np.zeros(n, dtype=bool)

        shape = (sum(info.n + 1 for info in self.ops.values()), n)
        packed = self._packed(n, shape)
        integer_apart = not self.same_variant and latency
        packed_int = self._packed(n, shape) if integer_apart else packed
        movement, movement_int = {}, {}
        for op, info in self.ops.items():
            tq = self._temporal(info, ids, cuts[op], prefix)
            variants = [(movement, self.spatial[op], packed)]
            if integer_apart:
                variants.append((movement_int, self.spatial_int[op], packed_int))
            for per_op, sq, into in variants:
                steps = self._spatial_steps(info, sq)
                D = self._footprints(info, steps, tq, lsize, ldim, sq.levels)
                per_op[op] = self._movement(info, tq, steps, lsize, D, into)
            if self.same_variant:
                movement_int[op] = movement[op]

        return movement, movement_int, self._zero_extent

    def evaluate_accesses(
        self, ids: np.ndarray, cuts: dict[str, np.ndarray], moved=None, memo=None, siblings=()
    ):
        """What :meth:`evaluate`'s figures are made of, without the memories' energy costs:
        ``(accesses, latency_total2, exact)``; :func:`access_energy` turns ``accesses`` into
        ``energy_total`` for any costs, with the float operations :meth:`evaluate` does.
        ``moved``: the candidates' :meth:`movements` (with ``latency``), when known; ``memo``:
        the :class:`~zigzag.mapping_search.batched.latency.LatencyMemo` of that movement, and
        ``siblings`` the bandwidth sets whose latencies to keep there for the variants to come
        (:func:`~zigzag.mapping_search.batched.latency.batch_latency`)."""
        n = ids.shape[0]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if moved is None:
                moved = self.movements(ids, cuts, True)
            accesses, exact, movement, movement_int = self._parts(ids, cuts, True, moved, memo)
            lat, exact_lat = batch_latency(self, movement, movement_int, n, memo, siblings)
        return accesses, lat, exact & exact_lat

    def level_costs(self) -> list[tuple]:
        """``(r_cost, w_cost)`` of every (operand, level) in the order of the word accesses."""
        return [(lv.r_cost, lv.w_cost) for info in self.ops.values() for lv in info.operand.levels]

    def level_memories(self) -> list[str]:
        """The memory of every (operand, level), in the order of :meth:`level_costs`."""
        return [lv.memory.name for info in self.ops.values() for lv in info.operand.levels]

    def _packed(self, n: int, shape: tuple) -> Packed:
        """Room for the data movement of ``n`` candidates (the flows' last slot all 0)."""
        flows = np.empty((self.flow_count + 1, len(FLOW_FIGURES), n))
        flows[-1] = 0.0
        return Packed(flows, np.empty(shape), np.empty(shape))

    def latency_rows(self) -> tuple:
        """Where the compiled latency reads :class:`Packed`: per port duty (``duties``) the slot
        of its flow (the last, all 0, where no data moves) and the row of its operand's level-1
        bits; per (operand, memory level) the row of its bits (kept, read-only)."""
        rows = self._latency_rows
        if rows is None:
            index = {d: j for j, d in enumerate(DIRECTIONS)}
            slot = [self.flow_slots[op][k, index[d]] for op, k, d in self.duties]
            rows = self._latency_rows = tuple(
                np.array(values, dtype=np.int64)
                for values in (
                    [self.flow_count if s < 0 else s for s in slot],
                    [self.bits_row[op] + 1 for op, _, _ in self.duties],
                    [
                        self.bits_row[op] + k + 1
                        for op, info in self.ops.items()
                        for k in range(info.operand.n)
                    ],
                )
            )
            for array in rows:
                array.setflags(write=False)
        return rows


def movement_arrays(moved) -> list[np.ndarray]:
    """The arrays of :meth:`BatchCostModel.movements`' result, each once."""
    movement, movement_int, zero_extent = moved
    arrays = {id(zero_extent): zero_extent}
    for per_op in (movement, movement_int):
        for m in per_op.values():
            arrays.update((id(v), v) for v in m.packed)
    return list(arrays.values())
