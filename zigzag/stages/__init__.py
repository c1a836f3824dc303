"""ZigZag's Stage API: build a search as a list of stages and run it in-process::

    from zigzag.stages import *

    cmes = MainStage(
        [WorkloadParserStage, AcceleratorParserStage, SimpleSaveStage, SumStage, WorkloadStage,
         MinimalLatencyStage, SpatialMappingGeneratorStage, MinimalLatencyStage,
         TemporalMappingGeneratorStage, CostModelStage],
        workload="workload.yaml", accelerator="hardware.yaml", mapping="mapping.yaml",
        dump_folder="outputs", loma_lpf_limit=6,
    ).run()
    total, per_layer = cmes[0]

The stages wrap the same functions as :func:`zigzag.api.get_hardware_performance_zigzag`, so
both give the same numbers. Writing your own stage: docs/tutorials/custom-stage.md.
"""

from zigzag.stages.data_locality import (
    ExploitInterLayerDataLocalityStage,
    RemoveUnusedMemoryStage,
    SearchInterLayerDataLocalityStage,
    SearchUnusedMemoryStage,
)
from zigzag.stages.evaluation import CostModelStage, LayerCostResult
from zigzag.stages.iterators import GeneralParameterIteratorStage, WorkloadStage
from zigzag.stages.mapping import (
    LomaStage,
    SalsaStage,
    SpatialMappingConversionStage,
    SpatialMappingGeneratorStage,
    TemporalMappingGeneratorStage,
    TemporalOrderingConversionStage,
)
from zigzag.stages.parsers import AcceleratorParserStage, ONNXModelParserStage, WorkloadParserStage
from zigzag.stages.plot import PlotTemporalMappingsStage, VisualizationStage
from zigzag.stages.reduce import (
    ListifyStage,
    MinimalEDPStage,
    MinimalEnergyStage,
    MinimalLatencyStage,
    SumStage,
)
from zigzag.stages.run_opt import (
    CacheBeforeYieldStage,
    MultiProcessingGatherStage,
    MultiProcessingSpawnStage,
    RemoveExtraInfoStage,
    SkipIfDumpExistsStage,
)
from zigzag.stages.save import CompleteSaveStage, DumpStage, PickleSaveStage, SimpleSaveStage
from zigzag.stages.stage import MainStage, Stage, StageCallable

__all__ = [
    "AcceleratorParserStage",
    "CacheBeforeYieldStage",
    "CompleteSaveStage",
    "CostModelStage",
    "DumpStage",
    "ExploitInterLayerDataLocalityStage",
    "GeneralParameterIteratorStage",
    "LayerCostResult",
    "ListifyStage",
    "LomaStage",
    "MainStage",
    "MinimalEDPStage",
    "MinimalEnergyStage",
    "MinimalLatencyStage",
    "MultiProcessingGatherStage",
    "MultiProcessingSpawnStage",
    "ONNXModelParserStage",
    "PickleSaveStage",
    "PlotTemporalMappingsStage",
    "RemoveExtraInfoStage",
    "RemoveUnusedMemoryStage",
    "SalsaStage",
    "SearchInterLayerDataLocalityStage",
    "SearchUnusedMemoryStage",
    "SimpleSaveStage",
    "SkipIfDumpExistsStage",
    "SpatialMappingConversionStage",
    "SpatialMappingGeneratorStage",
    "Stage",
    "StageCallable",
    "SumStage",
    "TemporalMappingGeneratorStage",
    "TemporalOrderingConversionStage",
    "VisualizationStage",
    "WorkloadParserStage",
    "WorkloadStage",
]
