"""The batched search for a spatial mapping whose figures may leave float64's exact integer range (the
largest matrix products of an LLM prefill): the batched model ranks every candidate, the scalar model
re-evaluates those that could win, and the scalar rules pick among them.

Why the result is the scalar loop's: float64 figures of the same formulas differ from the scalar ones by
rounding only (relative ~1e-12 at worst here), so the scalar winner's ranked figure lies within
:data:`TOLERANCE` (1e-6, relative) of the best ranked figure; every candidate within it is re-evaluated
with the scalar model, in LOMA's order, and kept by ``zigzag.mapping_search.reduce`` (first of exact ties). Each
re-evaluated candidate's ranked figures are checked against its scalar ones: a deviation beyond 1e-9
raises :class:`BatchMismatch` and the caller runs the scalar loop, so no result depends on the bound.
"""

from __future__ import annotations

import numpy as np

from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.spatial_mapping import LevelMapping
from zigzag.mapping_search.batched.candidates import Unsupported, temporal_mapping_of
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.mapping_search.reduce import keep_best
from zigzag.workload.layer import Layer

#: ranked figures within this relative distance of the best are re-evaluated with the scalar model
TOLERANCE = 1e-6
#: the largest relative gap between a ranked and a scalar figure accepted
AGREEMENT = 1e-9


class RankMismatch(Unsupported):
    """A ranked figure strays from its scalar value (not expected; the scalar loop decides)."""


def rank_then_rescore(
    layer: Layer,
    accelerator: Accelerator,
    fractional: LevelMapping,
    integer: LevelMapping,
    *,
    opt: str,
    candidates,
    loops,
    access_same_data_considered_as_no_access: bool,
    spatial_mapping_array: dict | None,
    latency_model: str,
) -> tuple[CostResult, int]:
    """Best scalar result over ``candidates`` (``(ids, cuts)`` chunks in LOMA's order) and their count."""
    model = BatchCostModel(
        layer,
        accelerator,
        fractional,
        integer,
        loops,
        access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
        spatial_mapping_array=spatial_mapping_array,
        latency_model=latency_model,
        approximate=True,
    )
    rows, energies, latencies = [], [], []
    for ids, cuts in candidates:
        energy, latency, _ = model.evaluate(ids, cuts)
        energies.append(energy)
        latencies.append(latency)
        rows += [(ids[i], {op: c[i].tolist() for op, c in cuts.items()}) for i in range(len(ids))]
    if not rows:
        raise Unsupported("no candidate to rank")
    energy, latency = np.concatenate(energies), np.concatenate(latencies)
    key = {"energy": energy, "latency": latency, "EDP": energy * latency}[opt]
    near = np.nonzero(key <= key.min() * (1 + TOLERANCE))[0]
    best = None
    for i in near.tolist():
        row, cut = rows[i]
        result = evaluate(
            layer,
            accelerator,
            fractional,
            integer,
            temporal_mapping_of(loops, row, cut),
            access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
            spatial_mapping_array=spatial_mapping_array,
            latency_model=latency_model,
        )
        for ranked, exact in (
            (energy[i], result.energy_total),
            (latency[i], result.latency_total2),
        ):
            if abs(ranked - exact) > AGREEMENT * abs(exact):
                raise RankMismatch(
                    f"ranked and scalar figures differ for layer {layer.name}: {ranked!r} vs {exact!r}"
                )
        best = keep_best(best, result, opt)
    return best, len(rows)
