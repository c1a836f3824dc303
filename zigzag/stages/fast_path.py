"""The batched temporal-mapping search behind a reduction over ``[TemporalMappingGeneratorStage,
CostModelStage]``.

Such a reduction (``MinimalLatencyStage`` & co. without ``reduce_minimal_keep_others``) yields only
the best evaluation of its child, and no stage of the user's sits between it and the cost model,
so nobody can see the individual evaluations: the same search is then run the way the API runs it
(``zigzag.mapping_search.batched``, bit-identical figures and the same first-of-equals choice) and the
reduction yields the same result. Any other pipeline, a subclass of either stage, a missing kwarg
or a case the batched search does not cover runs stage by stage as before.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import weakref

from zigzag.mapping_search import batched
from zigzag.cost.layer_result import LayerCostResult
from zigzag.stages.evaluation import CostModelStage
from zigzag.stages.mapping import TemporalMappingGeneratorStage, is_even_mapping_type
from zigzag.stages.stage import Stage

logger = logging.getLogger(__name__)

#: The kwargs both stages need; without one of them the stages run (and report it) as usual.
_NEEDED = ("accelerator", "layer", "spatial_mapping", "spatial_mapping_int")
#: accelerator -> {search key: best result}: identical layers (same signature, spatial mapping and
#: search settings) on the same accelerator object are searched once, as in the API.
_SEARCHED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def batched_temporal_search(reduction: Stage, criterion: str) -> LayerCostResult | None:
    """The best result the reduction's child would yield under ``criterion``, found by the batched
    search, or None when the child must run stage by stage."""
    kwargs = reduction.kwargs
    pipeline = list(reduction.list_of_callables)
    if pipeline != [TemporalMappingGeneratorStage, CostModelStage] or not batched.batched_enabled():
        return None
    if any(name not in kwargs for name in _NEEDED):
        return None
    layer, accelerator = kwargs["layer"], kwargs["accelerator"]
    flag = kwargs.get("access_same_data_considered_as_no_access", True)
    latency = kwargs.get("latency_model", "zigzag")
    search = {
        "opt": criterion,
        "lpf_limit": kwargs.get("loma_lpf_limit"),
        "even": is_even_mapping_type(
            kwargs.get("temporal_mapping_type", "uneven"), "TemporalMappingGeneratorStage"
        ),
        "access_same_data_considered_as_no_access": flag,
        "spatial_mapping_array": kwargs.get("spatial_mapping_array"),
        "latency_model": {"auto": "zigzag"}.get(latency, latency),
    }
    memo = _SEARCHED.setdefault(accelerator, {})
    key = json.dumps(
        [layer.signature(), kwargs["spatial_mapping"], kwargs["spatial_mapping_int"], search],
        sort_keys=True,
        default=str,
    )
    if key not in memo:
        try:
            memo[key], _ = batched.search_temporal_mappings(
                layer,
                accelerator,
                kwargs["spatial_mapping"],
                kwargs["spatial_mapping_int"],
                **search,
                show_progress=None if kwargs.get("loma_show_progress_bar", False) else False,
            )
        except batched.BatchMismatch as exc:
            logger.warning("%s; using the stage-by-stage evaluation", exc)
            return None
        except batched.Unsupported:
            return None
    result = dataclasses.replace(memo[key], layer_id=layer.id, layer_name=layer.name)
    return LayerCostResult.of(
        result,
        layer,
        accelerator,
        access_same_data_considered_as_no_access=flag,
        latency_model=search["latency_model"],
    )
