"""The best mapping of one layer on one accelerator: spatial candidates x temporal candidates.

This is the single-core evaluation step: a pure function of (layer, accelerator, options), so the
workflow, the API and the Stage API all call it, and its result can be cached on its inputs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.vector import UNCOSTED, VECTOR_UNIT, compute_unit, on_vector_unit
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search import batched
from zigzag.mapping_search.batched.shared import build_table, score_table
from zigzag.mapping_search.loma import temporal_mappings
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.reduce import keep_best
from zigzag.mapping_search.salsa import salsa_search
from zigzag.mapping_search.spatial_generator import fitting_spatial_mappings
from zigzag.workload.layer import Layer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LayerSearchStats:
    spatial_mappings: int
    evaluations: int


def evaluate_spatial_mapping(
    layer: Layer,
    accelerator: Accelerator,
    array_mapping: spatial_mapping.ArrayMapping,
    options: SearchOptions,
    *,
    show_progress: bool | None = None,
    shared=None,
) -> tuple[CostResult, int]:
    """Best result over the temporal mappings of one spatial mapping, and how many were evaluated.
    ``shared``: ``(SharedCandidates, key)`` to re-score the candidates another variant with the
    same cost-free key allocated (``zigzag.mapping_search.batched.shared``; same result), or
    ``(SharedCandidates, key, structure key)`` to also take, on a new table, the allocations of
    variants of the same structure (``zigzag.mapping_search.batched.structural``; same result)."""
    if (
        shared is not None
        and options.temporal_mapping_search_engine != "salsa"
        and options.cost_latency_model == "zigzag"  # the shared tables hold ZigZag's latency
        and batched.batched_enabled()
    ):
        try:
            return _shared_search(layer, accelerator, array_mapping, options, shared)
        except batched.BatchMismatch as exc:
            logger.warning("%s; using the scalar evaluation path", exc)
        except batched.Unsupported:
            pass  # the unshared path below decides between the batched and the scalar search
    fractional, integer = spatial_mapping.convert(array_mapping, layer, accelerator)
    if options.temporal_mapping_search_engine == "salsa":
        return salsa_search(layer, accelerator, array_mapping, fractional, integer, options)
    if batched.batched_enabled():
        try:
            return batched.search_temporal_mappings(
                layer,
                accelerator,
                fractional,
                integer,
                opt=options.opt,
                lpf_limit=options.lpf_limit,
                even=options.temporal_mapping_type == "even",
                access_same_data_considered_as_no_access=options.access_same_data_considered_as_no_access,
                spatial_mapping_array=array_mapping,
                show_progress=show_progress,
                latency_model=options.cost_latency_model,
            )
        except batched.BatchMismatch as exc:
            logger.warning("%s; using the scalar evaluation path", exc)
        except batched.Unsupported:
            pass  # e.g. a complete user temporal ordering (one candidate): the scalar loop below
    best = None
    count = 0
    for temporal in temporal_mappings(
        layer,
        accelerator,
        fractional,
        lpf_limit=options.lpf_limit,
        even=options.temporal_mapping_type == "even",
        show_progress=show_progress,
    ):
        result = evaluate(
            layer,
            accelerator,
            fractional,
            integer,
            temporal,
            spatial_mapping_array=array_mapping,
            **options.model_options(),
        )
        count += 1
        best = keep_best(best, result, options.opt)
    return best, count


def _shared_search(layer, accelerator, array_mapping, options, shared):
    """The batched search through a shared candidate table (the spatial mapping converted once per
    table: the conversion reads the array, the served dimensions and the layer, never a cost)."""
    tables, key = shared[:2]
    structure = shared[2] if len(shared) > 2 else None
    settings = dict(
        lpf_limit=options.lpf_limit,
        even=options.temporal_mapping_type == "even",
        access_same_data_considered_as_no_access=options.access_same_data_considered_as_no_access,
        spatial_mapping_array=array_mapping,
    )

    def build():
        allocations = None if structure is None else (tables.allocations, structure)
        memo = {} if structure is None else tables.allocations.memo(structure)
        if "spatial" not in memo:  # the conversion reads no size, bandwidth or cost either
            memo["spatial"] = spatial_mapping.convert(array_mapping, layer, accelerator)
        fractional, integer = memo["spatial"]
        return build_table(
            layer,
            accelerator,
            fractional,
            integer,
            allocations=allocations,
            siblings=tables.siblings.told(accelerator),
            ready=None if allocations is None else tables.ready,
            **settings,
        )

    table = tables.table(key, build)
    return score_table(
        table, layer, accelerator, table.fractional, table.integer, opt=options.opt, **settings
    )


def search_layer(
    layer: Layer,
    accelerator: Accelerator,
    options: SearchOptions = SearchOptions(),
    *,
    show_progress: bool | None = None,
    shared=None,
) -> tuple[CostResult, LayerSearchStats]:
    """The best evaluation of ``layer`` on ``accelerator`` under ``options``: on the MAC array, or
    for a vector layer on the accelerator's vector unit (docs/models/operators.md). ``shared``:
    ``(SharedCandidates, key)``, the key naming the layer job without its memory costs
    (``zigzag.mapping_search.batched.shared.cost_free_job``), to share candidates across such variants;
    a third item, the key of the job without its memories' sizes and bandwidths either
    (``zigzag.mapping_search.batched.structural.structure_free_job``), shares allocations too."""
    unit = compute_unit(layer, accelerator)
    if unit == UNCOSTED:
        raise InputError(
            None,
            f"layer '{layer.name}'",
            f"its operation class '{layer.vector_op}' runs on no unit of "
            f"accelerator '{accelerator.name}'; declare a vector_unit with operations.{layer.vector_op}",
        )
    if unit == VECTOR_UNIT:
        layer, accelerator = on_vector_unit(layer, accelerator)
        shared = None  # candidates are shared between views of the MAC array only
    return _search(layer, accelerator, options, show_progress, shared)


def _search(
    layer: Layer,
    accelerator: Accelerator,
    options: SearchOptions,
    show_progress: bool | None,
    shared,
) -> tuple[CostResult, LayerSearchStats]:
    candidates = fitting_spatial_mappings(
        layer,
        accelerator,
        nb_mappings=options.nb_spatial_mappings_generated,
        enable_mixing=options.enable_mix_spatial_mapping,
    )
    best = None
    evaluations = 0
    for array_mapping in candidates:
        result, count = evaluate_spatial_mapping(
            layer,
            accelerator,
            array_mapping,
            options,
            show_progress=show_progress,
            # the spatial mapping itself in the key: a table is one spatial mapping's candidates
            shared=None
            if shared is None
            else (shared[0], *((key, repr(array_mapping)) for key in shared[1:])),
        )
        evaluations += count
        best = keep_best(best, result, options.opt)
    return best, LayerSearchStats(len(candidates), evaluations)
