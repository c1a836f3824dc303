"""Stream's Stage API, in-process: the seed's (2023) stage names and the late-2024 ones::

    from zigzag.multicore.stages import *

    scme, _ = MainStage([AcceleratorParserStage, StreamONNXModelParserStage, LayerSplittingStage,
                         StreamONNXModelParserStage, GenerateCNWorkloadHybridStage, IntraCoreMappingStage,
                         InterCoreMappingStage], accelerator=..., workload_path=..., mapping_path=..., ...).run()
    scme = scme[0]

Every stage is a thin wrapper around a function of :mod:`zigzag.multicore` (same protocol as
:mod:`zigzag.stages`: each stage adds keyword arguments and builds the next one). The leaf
``GeneticAlgorithmAllocationStage`` yields ``(scme, search)``:
``scme`` is the schedule of the chosen allocation (lowest latency, as Stream), a
:class:`StreamCostModelEvaluation`; ``search`` the :class:`~zigzag.multicore.allocation.AllocationSearch`
with the whole Pareto front. The seed's ``InterCoreMappingStage`` yields two such pairs: the
front's lowest-latency point (what the seed's ``scme, _ = mainstage.run(); scme = scme[0]``
picks) and its lowest-energy point. ZigZag's stages can be mixed in (e.g. ``MinimalLatencyStage`` above
a ``GeneralParameterIteratorStage``), and own stages follow the seed's recipe (subclass ``Stage``,
build the child with ``self.substage(...)``, re-yield or reduce).

The seed's options are recorded in the leaf's ``search.options``; ``plot_hof`` draws the hall of
fame as Stream does (``plot_file_name``, ``plot_full_schedule``, ``plot_data_transfer``;
:mod:`zigzag.multicore.evaluation.hall_of_fame`); ``scheduler_candidate_selection`` is always
Stream's "memory" rule (docs/tutorials/multi-core.md#8-streams-stage-api-and-one-call-api).

The stages are grouped as Stream groups them, one module a group: ``parsing``, ``generation``,
``estimation`` and ``allocation``; this package gives them all as one namespace.
"""

from __future__ import annotations

from zigzag.multicore.evaluation import StreamCostModelEvaluation
from zigzag.multicore.stages.allocation import (
    ConstraintOptimizationAllocationStage,
    GeneticAlgorithmAllocationStage,
    InterCoreMappingStage,
)
from zigzag.multicore.stages.estimation import (
    CustomSpatialMappingGeneratorStage,
    IntraCoreMappingStage,
    SetFixedAllocationPerformanceStage,
    ZigZagCoreMappingEstimationStage,
)
from zigzag.multicore.stages.generation import (
    GenerateCNWorkloadHybridStage,
    LayerStacksGenerationStage,
    SchedulingOrderGenerationStage,
    TiledWorkloadGenerationStage,
    TilingGenerationStage,
)
from zigzag.multicore.stages.parsing import (
    AcceleratorParserStage,
    LayerSplittingStage,
    MainStage,
    ONNXModelParserStage,
    StreamONNXModelParserStage,
)
from zigzag.stages.stage import Stage, StageCallable


__all__ = [
    "AcceleratorParserStage",
    "ConstraintOptimizationAllocationStage",
    "CustomSpatialMappingGeneratorStage",
    "GenerateCNWorkloadHybridStage",
    "GeneticAlgorithmAllocationStage",
    "InterCoreMappingStage",
    "IntraCoreMappingStage",
    "LayerSplittingStage",
    "LayerStacksGenerationStage",
    "MainStage",
    "ONNXModelParserStage",
    "SchedulingOrderGenerationStage",
    "SetFixedAllocationPerformanceStage",
    "Stage",
    "StageCallable",
    "StreamCostModelEvaluation",
    "StreamONNXModelParserStage",
    "TiledWorkloadGenerationStage",
    "TilingGenerationStage",
    "ZigZagCoreMappingEstimationStage",
]
