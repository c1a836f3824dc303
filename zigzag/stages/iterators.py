"""Stages that run the rest of the pipeline several times: per layer, per parameter value."""

from __future__ import annotations

import itertools
import logging

from zigzag.hardware.vector import VECTOR_UNIT, compute_unit, on_vector_unit
from zigzag.mapping_search.capacity import check_capacity
from zigzag.mapping_search.network import plan_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.stages.stage import Stage

logger = logging.getLogger(__name__)


class WorkloadStage(Stage):
    """Runs the rest of the pipeline once per layer, in processing (topological) order, with the
    kwarg ``layer``; yields ``(result, (layer, extra_info))``. Dependency-only ONNX nodes are
    skipped, and so are pooling and element-wise layers on an in-memory-computing array and vector
    layers no unit runs. A vector layer goes on with the vector view of the accelerator as its
    ``accelerator`` (docs/models/operators.md). The workload itself is not passed on."""

    def __init__(self, list_of_callables, *, workload, accelerator, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.workload = workload
        self.accelerator = accelerator

    def run(self):
        plan = plan_network(self.workload.layers, self.accelerator)
        if plan.note:
            logger.warning(plan.note)
        inference = getattr(self.workload, "inference", None)
        latency = SearchOptions(latency_model=self.kwargs.get("latency_model", "auto")).resolved(
            inference is not None
        )
        if inference is not None:  # an LLM step: it must fit its memories as a whole
            step = dict(inference) if isinstance(inference, dict) else inference.to_dict()
            check_capacity(self.workload.layers, plan.accelerators, step)
        for layer, accelerator in plan.layers:
            logger.info("Processing %s...", layer.name)
            if compute_unit(layer, accelerator) == VECTOR_UNIT:
                layer, accelerator = on_vector_unit(layer, accelerator)
            child = self.substage(
                layer=layer, accelerator=accelerator, latency_model=latency.latency_model
            )
            for result, extra_info in child.run():
                yield result, (layer, extra_info)


class GeneralParameterIteratorStage(Stage):
    """Runs the rest of the pipeline for every combination of keyword-argument values.

    ``general_parameter_iterations`` maps a kwarg name to the list of its values, or a tuple of
    names to a list of value tuples (set together). Combinations are visited with the first key
    outermost. Yields ``(result, (((name, value), ...), extra_info))``.
    """

    def __init__(self, list_of_callables, *, general_parameter_iterations, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.iterations = general_parameter_iterations

    def run(self):
        keys = list(self.iterations)
        for values in itertools.product(*(self.iterations[key] for key in keys)):
            settings = []
            for key, value in zip(keys, values):
                settings.extend(zip(key, value) if isinstance(key, tuple) else [(key, value)])
            for result, extra_info in self.substage(**dict(settings)).run():
                yield result, (tuple(settings), extra_info)
