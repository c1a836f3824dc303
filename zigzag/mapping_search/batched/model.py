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
from zigzag.mapping_search.batched.latency import batch_latency
from zigzag.cost.model import LATENCY_MODELS
from zigzag.cost.model.quantities import normalise_levels, spatial_analysis
from zigzag.cost.model.setup import layer_setup
from zigzag.hardware.accelerator import DIRECTIONS, Accelerator
from zigzag.mapping_search.batched.operands import OperandInfo, model_static
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.workload.layer import Layer


class _Flow(NamedTuple):
    """One direction of one memory level for all candidates (cost model ``Flow``)."""

    period: np.ndarray
    count: np.ndarray
    amount: np.ndarray
    precision: np.ndarray
    bw_aver: np.ndarray
    window: np.ndarray
    idle: bool = False  # no candidate moves data here (all figures zero)

    def masked(self, keep: np.ndarray) -> "_Flow":
        return _Flow(*(np.where(keep, value, 0.0) for value in self[:-1]))


def _no_flow(n: int) -> _Flow:
    z = np.zeros(n)
    return _Flow(z, z, z, z, z, z, idle=True)


class _Movement(NamedTuple):
    """Per-operand quantities of one spatial variant (``OperandMovement``)."""

    D: list
    bits: list
    eff_bits: list
    flows: list  # per memory level: direction -> _Flow
    psum: list | None


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
        # static exactness bound: integer-valued quantities stay below 2**53
        biggest = max(static.biggest, loops.total)
        prec = static.precision
        units = max(max(q.unit_count) for q in self.spatial.values())
        if float(biggest) * prec * units * 64 >= EXACT and not approximate:
            raise FiguresTooLarge("figures too large for exact float64 integers")

    # ----- docs/models/cost-model.md#temporal-mapping temporal quantities per operand -------------------------------------------
    def _temporal(self, info: OperandInfo, ids, cuts, ctx):
        """The levels' loop ends and products (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.temporal_levels`)."""
        from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

        n, length, rows, lsize, prefix = ctx
        irm = info.ir_of_loop[ids]
        rm = info.r_of_loop[ids]
        ends, cabl, mac_st, top_r, top_ir = movement_kernels.temporal_levels(
            irm, rm, cuts[:, : info.n - 1].astype(np.int64, copy=False), prefix
        )
        ends, cabl = list(ends), list(cabl)
        starts = [np.zeros(n, dtype=np.int64)] + ends[:-1]
        top_r, top_ir = [1.0, *top_r], [1.0, *top_ir]
        return starts, ends, cabl, mac_st, top_r, top_ir, irm, rm

    # ----- docs/models/cost-model.md#data-held-per-level footprints --------------------------------------------------------------------
    def _footprints(self, info, spatial_levels, starts, ends, rm, ctx, ldim):
        n, length, rows, lsize, prefix = ctx
        operand = info.operand
        relevant = operand.relevant_dec
        D = [np.ones(n)]
        if not info.relations:
            pr = prefix_products(np.where(rm, lsize, 1.0))
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
        """Footprints of a pr operand: the pr-decoupling walk (docs/models/cost-model.md#spatial-mapping)
        replayed candidate by candidate, loop by loop in the scalar model's order, so that every
        float operation (the ``X_R`` factors are quotients) happens in the same sequence
        (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.pr_footprints`)."""
        from zigzag.mapping_search.batched import movement_kernels

        n, length, rows, lsize, prefix = ctx
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
            np.array(ends),
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
        return [np.ones(n), *D]

    # ----- docs/models/cost-model.md#data-held-per-level psum flags of the (non-pr) output --------------------------------------------
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

    # ----- docs/models/cost-model.md#data-held-per-level data movement per operand and variant -----------------------------------------
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
                th = _Flow(
                    t_high, n_high, D[k + 1], np.where(psum[k + 1], p_o, p_of), bw_high, w_high
                )
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
        n = ids.shape[0]
        accesses, exact, movement, movement_int = self._parts(ids, cuts, latency)
        energy, exact = access_energy(accesses, self.level_costs(), self.mac_energy, n, exact)
        if not latency:
            return energy, None, exact
        lat, exact_lat = batch_latency(self, movement, movement_int, n)
        return energy, lat, exact & exact_lat

    def _parts(self, ids, cuts, latency, moved=None, memo=None):
        """Word accesses, exactness flags and the data movement (fractional, integer) of the
        candidates; ``moved``: their :meth:`movements`, when known (``memo``: its memo)."""
        n = ids.shape[0]
        movement, movement_int, zero_extent = moved or self.movements(ids, cuts, latency)
        exact = ~zero_extent
        return self._accesses(movement, n, exact, memo), exact, movement, movement_int

    def movements(self, ids, cuts, latency=True):
        """``(movement, movement_int, zero_extent)``: the data movement of the candidates under
        the fractional and (with ``latency``) the integer spatial mapping, and where an extent of
        0 makes them inexact; reads no memory's size, bandwidth or cost."""
        n, length = ids.shape
        rows = np.arange(n)
        ldim = self.loops.dim_of[ids]
        lsize = self.loops.size_of[ids]
        prefix = prefix_products(lsize)
        ctx = (n, length, rows, lsize, prefix)
        self._zero_extent = np.zeros(n, dtype=bool)

        temporal, movement, movement_int = {}, {}, {}
        out = self.layer.output
        for op, info in self.ops.items():
            tq = self._temporal(info, ids, cuts[op], ctx)
            temporal[op] = tq
            starts, ends, cabl, mac_st, top_r, top_ir, irm, rm = tq
            sq = self.spatial[op]
            D = self._footprints(info, sq.levels, starts, ends, rm, ctx, ldim)
            psum = (
                self._psum(info, sq.levels, starts, ends, irm, lsize, rows) if op == out else None
            )
            movement[op] = self._movement(info, tq, sq, psum, D)
            if self.same_variant:
                movement_int[op] = movement[op]
            elif latency:
                sq_int = self.spatial_int[op]
                D_int = self._footprints(info, sq_int.levels, starts, ends, rm, ctx, ldim)
                psum_int = (
                    self._psum(info, sq_int.levels, starts, ends, irm, lsize, rows)
                    if op == out
                    else None
                )
                movement_int[op] = self._movement(info, tq, sq_int, psum_int, D_int)

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
        """``(r_cost, w_cost)`` of every (operand, level) in the order of :meth:`_accesses`."""
        return [(lv.r_cost, lv.w_cost) for info in self.ops.values() for lv in info.operand.levels]

    def level_memories(self) -> list[str]:
        """The memory of every (operand, level), in the order of :meth:`level_costs`."""
        return [lv.memory.name for info in self.ops.values() for lv in info.operand.levels]

    def _accesses(self, movement, n, exact, memo=None):
        """Word accesses per direction of every (operand, level) (docs/models/cost-model.md#data-movement);
        clears ``exact`` where a figure leaves the exact range. The flows that move data are
        computed together as rows of one array (the same float operations, row by row); their
        bandwidth-free part is kept in ``memo`` (the movement's ``LatencyMemo``), when given."""
        accesses = Accesses()
        rows = []  # (level index in accesses, direction, flow, bw_min, bw_max, instances, where)
        for op, info in self.ops.items():
            sq = self.spatial[op]
            for k, lv in enumerate(info.operand.levels):
                instances = float(sq.unit_count[k + 1])
                flows = movement[op].flows[k]
                acc = {}
                for d in DIRECTIONS:
                    flow = flows[d]
                    acc[d] = 0.0
                    if flow.idle:  # no accesses, as the arrays below would find
                        continue
                    bw_min, bw_max = lv.bw_min[d], lv.bw_max[d]
                    if bw_min is None and bw_max is None:
                        exact &= ~(flow.amount != 0)  # the scalar model raises there
                        continue
                    rows.append((len(accesses), d, flow, bw_min, bw_max, instances, (op, k)))
                accesses.append(acc)
        accesses.slots = np.full((len(accesses), 4), -1, dtype=np.int64)
        if not rows:
            accesses.value = np.zeros((0, n))
            accesses.inputs = ((), None, None, None, None, None, exact.copy())
            return accesses
        from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

        flows = [row[2] for row in rows]
        if memo is None:
            data, count, moving, small = _access_rows(flows, n)
        else:  # the rows are the structure's: which flows move data, which have a port
            key = ("access rows", tuple((*row[6], row[1]) for row in rows))
            data, count, moving, small = memo.get(key, lambda: _access_rows(flows, n))
        instances = np.array([row[5] for row in rows], dtype=np.float64)
        keys = tuple((*row[6], row[1]) for row in rows)
        accesses.inputs = (keys, data, count, moving, small, instances, exact.copy())
        value = movement_kernels.word_accesses(
            data,
            count,
            moving,
            small,
            np.array([row[3] for row in rows], dtype=np.float64),
            np.array([row[3] / row[4] for row in rows], dtype=np.float64),
            instances,
            exact,
        )
        for r, ((level, d, *_), figures) in enumerate(zip(rows, value)):
            accesses[level][d] = figures
            accesses.slots[level, _ENERGY_ORDER[d]] = r
        accesses.value = value
        return accesses


def _access_rows(flows: list, n: int) -> tuple:
    """What the word accesses of the flows read besides bandwidths, a row per flow: the bits
    moved, the transfer counts, where data moves and where the bits stay exact."""
    amount, precision, count = (np.empty((len(flows), n)) for _ in range(3))
    for i, flow in enumerate(flows):
        amount[i], precision[i], count[i] = flow.amount, flow.precision, flow.count
    data = amount * precision
    return data, count, (amount != 0) & (precision != 0), data < EXACT


def movement_arrays(moved) -> list[np.ndarray]:
    """The arrays of :meth:`BatchCostModel.movements`' result, each once."""
    movement, movement_int, zero_extent = moved
    arrays = {id(zero_extent): zero_extent}
    for per_op in (movement, movement_int):
        for m in per_op.values():
            values = [*m.D, *m.bits, *m.eff_bits, *(m.psum or ())]
            values += [v for flows in m.flows for flow in flows.values() for v in flow[:-1]]
            arrays.update((id(v), v) for v in values if isinstance(v, np.ndarray))
    return list(arrays.values())


class Accesses(list):
    """:meth:`BatchCostModel._accesses`' word accesses: per (operand, level) a dict direction ->
    figures (an array, or 0.0 where no data moves); ``value`` holds the arrays as the rows of one
    array, ``slots[l]`` the rows of level ``l``'s th, tl, fh and fl accesses (-1: 0.0);
    ``inputs``: what the rows read besides bandwidths, ``((operand, level, direction) of each
    row, bits, counts, moving, small, instances, exactness before)``, for the same candidates
    under a sibling's bandwidths (``zigzag.mapping_search.batched.together``)."""

    value: np.ndarray
    slots: np.ndarray
    inputs: tuple


#: the column of each direction in :attr:`Accesses.slots` (reads, then writes, as summed)
_ENERGY_ORDER = {"th": 0, "tl": 1, "fh": 2, "fl": 3}


def access_energy(
    accesses: Accesses, costs: list[tuple], mac_energy: float, n: int, exact: np.ndarray
):
    """``energy_total`` of the candidates from their word accesses (:meth:`BatchCostModel._accesses`)
    and the ``(r_cost, w_cost)`` of each (operand, level) (docs/models/cost-model.md#energy), and
    ``exact`` narrowed where integer costs leave the exact range; the same float operations in
    the same order whoever calls it, so equal inputs give bit-identical energies (compiled:
    :func:`~zigzag.mapping_search.batched.movement_kernels.access_energies`)."""
    from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

    energy = movement_kernels.access_energies(
        accesses.value,
        accesses.slots,
        np.array([float(r) for r, _ in costs], dtype=np.float64),
        np.array([float(w) for _, w in costs], dtype=np.float64),
    )
    if not all(isinstance(r, float) and isinstance(w, float) for r, w in costs):
        # the scalar model sums Python ints exactly: stay where float64 does too
        exact = exact & (energy < EXACT)
    return energy + mac_energy, exact
