"""ZigZag's seed-era ``zigzag.classes.stages``: every stage of :mod:`zigzag.stages` (``from
zigzag.classes.stages import *``), and one module per stage file the seed-era documentation links
(``zigzag.classes.stages.SaveStage``, ``.ReduceStages``, ...)."""

import importlib

from zigzag import stages as _stages

#: the seed-era modules, one per stage file of that era
MODULES = (
    "CostModelStage",
    "DumpStage",
    "ExploitInterLayerDataLocalityStage",
    "GeneralParameterIteratorStage",
    "LomaStage",
    "MainInputParserStages",
    "ONNXModelParserStage",
    "PlotTemporalMappingsStage",
    "ReduceStages",
    "RemoveUnusedMemoryStage",
    "RunOptStages",
    "SalsaStage",
    "SaveStage",
    "SearchInterLayerDataLocalityStage",
    "SearchUnusedMemoryStage",
    "SpatialMappingConversionStage",
    "SpatialMappingGeneratorStage",
    "Stage",
    "TemporalMappingGeneratorStage",
    "TemporalOrderingConversionStage",
    "WorkloadStage",
)
for _module in MODULES:
    importlib.import_module(f"{__name__}.{_module}")

# imported after the modules (importing one binds its name here to it): the names are the stages
from zigzag.stages import *  # noqa: E402, F403 - the seed's import style

__all__ = list(_stages.__all__)
