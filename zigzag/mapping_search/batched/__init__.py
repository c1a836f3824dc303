"""Batched LOMA search: allocate and cost many temporal mappings of one spatial mapping at once.

The scalar path (``zigzag.mapping_search.loma.temporal_mappings`` + ``zigzag.cost.model.evaluate``)
handles one loop ordering at a time in plain Python.  This module does the same work for a
whole chunk of orderings with numpy arrays whose first axis runs over the candidates:

1. :class:`~zigzag.mapping_search.batched.memory_levels.BatchLevelAssigner` cuts every ordering of the chunk into per-memory-level temporal
   mappings, exactly as :class:`zigzag.mapping_search.memory_levels.MemoryLevelAssigner` does (same feasible
   slices, same cost function, same "last of equal costs" choice, same failures).  A candidate
   is represented compactly: its ordering (indices into the distinct loop factors) and, per
   layer operand, the end position of each memory level in that ordering.
2. :class:`~zigzag.mapping_search.batched.model.BatchCostModel` computes, for every candidate, the two figures the reduction
   compares -- ``energy_total`` and ``latency_total2`` -- following ``zigzag/cost/model/``
   step by step (docs/models/cost-model.md#spatial-mapping), its latency part in
   :mod:`zigzag.mapping_search.batched.latency` (one loop compiled with numba,
   :mod:`zigzag.mapping_search.batched.kernels`).
3. :func:`search_temporal_mappings` (this module) drives both over the LOMA orderings in Williams' order,
   keeps the best candidate with the reduction rules of ``zigzag.mapping_search.reduce`` (first found
   wins on exact ties) and re-evaluates the winner with the scalar model, which produces the
   full :class:`~zigzag.cost.result.CostResult`.

Exactness.  The figures must be *bit-identical* to the scalar model's, otherwise ties between
candidates could be broken differently.  Two facts make that possible:

* every float operation of the scalar model is reproduced in the same order on float64
  arrays (IEEE operations are the same in numpy and in Python; ``round`` is half-to-even in
  both, ``int`` is ``trunc``, ``math.ceil`` is ``ceil``); where the order depends on the
  candidate (the pr-decoupling walk of docs/models/cost-model.md#spatial-mapping), the walk is replayed position by position with
  masks, so each candidate sees its own sequence of operations;
* where the scalar model computes with Python integers, the batched path computes with float64
  or int64 values that are exact integers; both agree as long as every such integer stays
  below 2**53.  This is checked (``EXACT``): statically per spatial mapping for the
  assigner's cost comparisons (else the whole spatial mapping goes to the scalar path), and
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
``zigzag.mapping_search.layer_search.evaluate_spatial_mapping``).

Not copied from anywhere: this is a vectorised restatement of our own scalar model.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.mapping_search.batched.candidates import (
    FiguresTooLarge,
    LoopTable,
    Unsupported,
    constraint_mask,
    ordering_chunks,
    temporal_mapping_of,
)
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.mapping_search.batched.ranked import rank_then_rescore
from zigzag.mapping_search.loma import (
    complete_user_ordering,
    layer_temporal_loops,
    no_fit_error,
    ordering_factors,
)
from zigzag.mapping_search.reduce import is_better
from zigzag.workload.layer import Layer

#: candidates handled per numpy pass (bounds memory with millions of orderings)
DEFAULT_CHUNK = 8192

#: environment variable: set to "scalar" to force the one-candidate-at-a-time path
ENGINE_ENV = "ZIGZAG_EVAL"


class BatchMismatch(Unsupported):
    """The winner's scalar figures differ from the batched ones (not expected to happen; the
    caller redoes the spatial mapping on the scalar path)."""


def assigned_chunks(
    loops: LoopTable, assigner: BatchLevelAssigner, constraints, chunk: int, seen=None
):
    """The orderings of ``loops`` in chunks of ``chunk``: those ``constraints`` allow and the
    assigner can place, with their memory cuts; ``seen(drawn, allowed)`` is told every chunk's
    counts before and after the constraints."""
    for ids in ordering_chunks(loops, chunk):
        drawn = len(ids)
        if constraints:
            ids = ids[constraint_mask(ids, loops, constraints)]
        if seen is not None:
            seen(drawn, len(ids))
        if not len(ids):
            continue
        alive, cuts = assigner.assign(ids)
        keep = np.nonzero(alive)[0]
        if keep.size:
            yield ids[keep], {op: c[keep] for op, c in cuts.items()}


def batched_enabled() -> bool:
    """False when the environment asks for the scalar evaluation path."""
    return os.environ.get(ENGINE_ENV, "batched").strip().lower() not in ("scalar", "0", "off", "no")


# =============================================================================================
# The search driver
# =============================================================================================


class _Figures(NamedTuple):
    energy_total: float
    latency_total2: float


def _better(e1, l1, e2, l2, opt: str) -> bool:
    """``zigzag.mapping_search.reduce.is_better`` on bare figures."""
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
    """Counts of one batched search, for tests and benchmarks."""

    orderings: int = 0  # orderings enumerated (after user constraints)
    evaluated: int = 0  # orderings allocated successfully (= candidates)
    latency_computed: int = 0  # candidates whose latency part was computed
    scalar_fallbacks: int = 0  # candidates evaluated with the scalar model instead


def candidate_loops(layer, accelerator, fractional, *, lpf_limit, even, memo=None):
    """The ordering constraints, loop table and memory-level assigner of one spatial mapping's
    temporal candidates; raises :class:`Unsupported` where the batched path cannot be used.
    ``memo``: a dict kept by the caller for variants of one structure
    (``zigzag.mapping_search.batched.structural``), where the constraints and the loop table,
    which read the layer and the spatial mapping only, are kept."""
    ordering = None if memo is None else memo.get("loops")
    if ordering is None:
        temporal = layer_temporal_loops(layer, fractional)
        if complete_user_ordering(layer, temporal) is not None:
            raise Unsupported("complete user temporal ordering: a single candidate")
        constraints, factors = ordering_factors(layer, temporal, lpf_limit)
        ordering = constraints, LoopTable(factors)
        if memo is not None:
            memo["loops"] = ordering
    constraints, loops = ordering
    assigner = BatchLevelAssigner(layer, accelerator, fractional, loops, even=even)
    if not assigner.exact:
        raise Unsupported("assigner costs too large for exact float64 integers")
    return constraints, loops, assigner


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
    latency_model: str = "zigzag",
) -> tuple[CostResult, int]:
    """Best LOMA temporal mapping of one spatial mapping, as the scalar loop would find it.

    Returns ``(scalar CostResult of the winner, number of candidates evaluated)``; raises
    :class:`Unsupported` (before any work is done) when the batched path cannot be used, and
    the scalar path's errors otherwise.
    """
    stats = stats if stats is not None else BatchStats()
    constraints, loops, assigner = candidate_loops(
        layer, accelerator, fractional, lpf_limit=lpf_limit, even=even
    )
    model = (
        None  # built at the first allocated candidate, where the scalar loop would first evaluate
    )

    def scalar_eval(row, cut_row):
        tm = temporal_mapping_of(loops, row, cut_row)
        return evaluate(
            layer,
            accelerator,
            fractional,
            integer,
            tm,
            access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
            spatial_mapping_array=spatial_mapping_array,
            latency_model=latency_model,
        )

    if show_progress is None:
        show_progress = sys.stderr.isatty()
    progress = None
    if show_progress:
        from tqdm import tqdm

        progress = tqdm(
            total=loops.count(), desc=f"{layer.name}: loop orderings", leave=False, unit="ord"
        )

    def seen(drawn: int, allowed: int) -> None:
        if progress is not None:
            progress.update(drawn)
        stats.orderings += allowed

    best = None  # (energy, latency, row, cuts-dict)
    count = 0
    pending = assigned_chunks(loops, assigner, constraints, chunk, seen)
    for ids, cuts in pending:
        count += len(ids)
        stats.evaluated += len(ids)
        if model is None:
            settings = dict(
                access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
                spatial_mapping_array=spatial_mapping_array,
                latency_model=latency_model,
            )
            try:
                model = BatchCostModel(layer, accelerator, fractional, integer, loops, **settings)
            except FiguresTooLarge:  # rank with the batched model, decide with the scalar one
                result, count = rank_then_rescore(
                    layer,
                    accelerator,
                    fractional,
                    integer,
                    opt=opt,
                    candidates=itertools.chain([(ids, cuts)], pending),
                    loops=loops,
                    **settings,
                )
                if progress is not None:
                    progress.close()
                return result, count

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
        candidate = (
            float(energy[i]),
            float(latency[i]),
            ids[i].copy(),
            {op: c[i].tolist() for op, c in cuts.items()},
        )
        if best is None or _better(candidate[0], candidate[1], best[0], best[1], opt):
            best = candidate
    if progress is not None:
        progress.close()
    if best is None:
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
