"""Stages that choose mappings: spatial (over the MAC array) and temporal (loop orders).

Keyword arguments passed down to the cost model:

* ``spatial_mapping_array``: the array form ``{OA dim: {layer dim: factor}}``;
* ``spatial_mapping`` / ``spatial_mapping_int``: its fractional / integer per-level forms
  (``zigzag.mapping_search.spatial_mapping``);
* ``temporal_mapping``: ``{layer operand: [[(dim, size), ...] per memory level]}``.
"""

from __future__ import annotations

import logging
import math

from zigzag.errors import InputError
from zigzag.mapping_search import spatial_mapping as spatial
from zigzag.mapping_search.memory_levels import LevelAssignmentFailed, MemoryLevelAssigner
from zigzag.mapping_search.loma import layer_temporal_loops, temporal_mappings
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.salsa import salsa_search
from zigzag.mapping_search.spatial_generator import fitting_spatial_mappings
from zigzag.stages.stage import Stage

logger = logging.getLogger(__name__)


def is_even_mapping_type(value, stage_name: str) -> bool:
    """``temporal_mapping_type``: "even"/"uneven", or an enum whose value or name is one of them."""
    text = str(getattr(value, "value", value)).lower()
    if text not in ("even", "uneven"):
        text = str(getattr(value, "name", "")).lower()
    if text not in ("even", "uneven"):
        raise InputError(
            None, stage_name, f"temporal_mapping_type '{value}' is not 'even' or 'uneven'"
        )
    return text == "even"


def _run_with(stage: Stage, temporal_mapping):
    """Run the rest of the pipeline on one temporal mapping; yield ``(result, (tm, extra_info))``."""
    child = stage.substage(
        accelerator=stage.accelerator,
        layer=stage.layer,
        spatial_mapping=stage.spatial_mapping,
        temporal_mapping=temporal_mapping,
    )
    for result, extra_info in child.run():
        yield result, (temporal_mapping, extra_info)


class SpatialMappingGeneratorStage(Stage):
    """Generates the ``nb_mappings_generated`` best spatial mappings of the layer (or the one the
    mapping file fixes) and runs a :class:`SpatialMappingConversionStage` with the rest of the
    pipeline for each; yields ``(result, (spatial_mapping_array, extra_info))``."""

    def __init__(
        self,
        list_of_callables,
        *,
        accelerator,
        layer,
        enable_mix_spatial_mapping_generation=False,
        enable_weight_diagonal_mapping=False,
        nb_mappings_generated=3,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        if enable_weight_diagonal_mapping:
            raise InputError(
                None, type(self).__name__, "enable_weight_diagonal_mapping is not supported"
            )
        if nb_mappings_generated < 1:
            raise InputError(None, type(self).__name__, "nb_mappings_generated must be at least 1")
        self.accelerator = accelerator
        self.layer = layer
        self.enable_mixing = enable_mix_spatial_mapping_generation
        self.nb_mappings = nb_mappings_generated

    def run(self):
        mappings = fitting_spatial_mappings(
            self.layer,
            self.accelerator,
            nb_mappings=self.nb_mappings,
            enable_mixing=self.enable_mixing,
        )
        for index, mapping in enumerate(mappings, start=1):
            logger.info(
                "%s: Launching spatial mapping %d/%d: %s.",
                self.layer.name,
                index,
                len(mappings),
                mapping,
            )
            conversion = SpatialMappingConversionStage(
                self.list_of_callables,
                **{
                    **self.kwargs,
                    "accelerator": self.accelerator,
                    "layer": self.layer,
                    "spatial_mapping_array": mapping,
                },
            )
            for result, extra_info in conversion.run():
                yield result, (mapping, extra_info)


class SpatialMappingConversionStage(Stage):
    """Converts a spatial mapping in array form (``spatial_mapping_array``; by default the one the
    layer's mapping entry fixes) into the per-level forms ``spatial_mapping`` and
    ``spatial_mapping_int`` for the rest of the pipeline. Passes results through."""

    def __init__(
        self, list_of_callables, *, accelerator, layer, spatial_mapping_array=None, **kwargs
    ):
        super().__init__(list_of_callables, **kwargs)
        if spatial_mapping_array is None:
            fixed = layer.mapping.spatial_mapping
            if fixed is None:
                raise InputError(
                    None,
                    type(self).__name__,
                    f"layer {layer.name}'s mapping entry '{layer.mapping.name}' fixes no spatial mapping; "
                    "add one or put SpatialMappingGeneratorStage before this stage",
                )
            spatial_mapping_array = {oa: dict(pairs) for oa, pairs in fixed.items()}
        self.accelerator = accelerator
        self.layer = layer
        self.mapping = spatial_mapping_array

    def run(self):
        fractional, integer = spatial.convert(self.mapping, self.layer, self.accelerator)
        yield from self.substage(
            accelerator=self.accelerator,
            layer=self.layer,
            spatial_mapping=fractional,
            spatial_mapping_int=integer,
            spatial_mapping_array=self.mapping,
        ).run()


class _TemporalMappingStage(Stage):
    """A stage finding the temporal mapping of one spatial mapping (kwargs ``accelerator``,
    ``layer``, ``spatial_mapping`` and ``temporal_mapping_type``)."""

    def __init__(
        self,
        list_of_callables,
        *,
        accelerator,
        layer,
        spatial_mapping,
        temporal_mapping_type="uneven",
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator
        self.layer = layer
        self.spatial_mapping = spatial_mapping
        self.even = is_even_mapping_type(temporal_mapping_type, type(self).__name__)


class TemporalMappingGeneratorStage(_TemporalMappingStage):
    """Runs the rest of the pipeline for every temporal mapping LOMA finds (in ZigZag's order);
    yields ``(result, (temporal_mapping, extra_info))``.

    Also reads ``loma_lpf_limit`` (default: no limit) and ``loma_show_progress_bar``.
    """

    def run(self):
        mappings = temporal_mappings(
            self.layer,
            self.accelerator,
            self.spatial_mapping,
            lpf_limit=self.kwargs.get("loma_lpf_limit"),
            even=self.even,
            show_progress=None if self.kwargs.get("loma_show_progress_bar", False) else False,
        )
        for temporal_mapping in mappings:
            yield from _run_with(self, temporal_mapping)


#: The name of TemporalMappingGeneratorStage in older ZigZag versions.
LomaStage = TemporalMappingGeneratorStage


class SalsaStage(_TemporalMappingStage):
    """Searches the temporal mapping by simulated annealing (SALSA) and runs the rest of the
    pipeline once with the best one; yields ``(result, (temporal_mapping, extra_info))``.

    Reads ``salsa_iteration_number`` (1000), ``salsa_start_temperature`` (0.05),
    ``salsa_opt_criterion`` ("energy" or "latency") and ``salsa_seed`` (ours, 0: the search is
    reproducible). ``salsa_number_of_core`` is accepted and ignored: one seeded chain is run.
    """

    def search_options(self) -> SearchOptions:
        """The SALSA options given to this stage, defaults for the others."""
        kwargs = self.kwargs
        defaults = SearchOptions()
        return SearchOptions(
            temporal_mapping_search_engine="salsa",
            temporal_mapping_type="even" if self.even else "uneven",
            access_same_data_considered_as_no_access=kwargs.get(
                "access_same_data_considered_as_no_access",
                defaults.access_same_data_considered_as_no_access,
            ),
            **{
                name: kwargs[name]
                for name in (
                    "salsa_iteration_number",
                    "salsa_start_temperature",
                    "salsa_opt_criterion",
                    "salsa_seed",
                    "latency_model",
                )
                if name in kwargs
            },
        )

    def run(self):
        best, _ = salsa_search(
            self.layer,
            self.accelerator,
            self.kwargs.get("spatial_mapping_array"),
            self.spatial_mapping,
            self.kwargs.get("spatial_mapping_int", self.spatial_mapping),
            self.search_options(),
        )
        temporal_mapping = best.temporal_mapping
        yield from _run_with(self, temporal_mapping)


def resolve_ordering(ordering, temporal_loops: dict[str, int]) -> list[tuple[str, float]]:
    """A user loop ordering (innermost first) with ``"all"``/``"*"``/None sizes replaced by what is
    left of that dim; it must cover the temporal loops exactly."""
    given: dict[str, float] = {}
    for dim, size in ordering:
        if isinstance(size, (int, float)) and not isinstance(size, bool):
            given[dim] = given.get(dim, 1) * size
    resolved = []
    for dim, size in ordering:
        if dim not in temporal_loops:
            continue
        if not isinstance(size, (int, float)) or isinstance(size, bool):
            size = temporal_loops[dim] / given.get(dim, 1)
            given[dim] = temporal_loops[dim]
        resolved.append((dim, size))
    covered = {dim: math.prod(s for d, s in resolved if d == dim) for dim in temporal_loops}
    if any(not math.isclose(covered[d], temporal_loops[d]) for d in temporal_loops):
        raise ValueError(
            f"ordering {list(ordering)} does not cover the temporal loops {temporal_loops}"
        )
    return resolved


class TemporalOrderingConversionStage(_TemporalMappingStage):
    """Turns one user loop ordering into a temporal mapping (no search) and runs the rest of the
    pipeline with it; yields ``(result, (temporal_mapping, extra_info))``.

    The ordering is the kwarg ``temporal_ordering`` or else the layer's mapping-entry
    ``temporal_ordering``: ``[(dim, size), ...]`` innermost first, a size ``"all"`` (or ``"*"``)
    standing for the rest of that dim.
    """

    def __init__(
        self,
        list_of_callables,
        *,
        accelerator,
        layer,
        spatial_mapping,
        temporal_ordering=None,
        temporal_mapping_type="uneven",
        **kwargs,
    ):
        super().__init__(
            list_of_callables,
            accelerator=accelerator,
            layer=layer,
            spatial_mapping=spatial_mapping,
            temporal_mapping_type=temporal_mapping_type,
            **kwargs,
        )
        self.ordering = (
            temporal_ordering if temporal_ordering is not None else layer.mapping.temporal_ordering
        )
        if not self.ordering:
            raise InputError(
                None,
                type(self).__name__,
                f"needs a temporal ordering for layer {layer.name}: give the keyword argument "
                "'temporal_ordering' or a temporal_ordering in the layer's mapping entry",
            )

    def run(self):
        temporal_loops = layer_temporal_loops(self.layer, self.spatial_mapping)
        where = f"{type(self).__name__}: layer {self.layer.name}"
        try:
            ordering = resolve_ordering(self.ordering, temporal_loops)
            assigner = MemoryLevelAssigner(
                self.layer, self.accelerator, self.spatial_mapping, even=self.even
            )
            temporal_mapping = assigner.assign(ordering)
        except (ValueError, LevelAssignmentFailed) as exc:
            raise InputError(None, where, f"temporal ordering cannot be used: {exc}") from None
        yield from _run_with(self, temporal_mapping)
