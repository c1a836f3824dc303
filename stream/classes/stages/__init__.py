"""Stream's 2023 ``stream.classes.stages``: every stage of :mod:`zigzag.multicore.stages`, the
seed's names (``StreamONNXModelParserStage``, ``GenerateCNWorkloadHybridStage``,
``IntraCoreMappingStage``, ``InterCoreMappingStage``, ...) and the late-2024 ones, with Stream's
``MainStage`` and ``AcceleratorParserStage``: imported after ``from zigzag.classes.stages import
*``, as Stream's scripts do, they take the place of ZigZag's single-core ones."""

import importlib

from zigzag.multicore import stages as _stages

#: the seed-era modules, one per stage file of that era
MODULES = (
    "CustomSpatialMappingGeneratorStage",
    "GenerateCNWorkloadHybridStage",
    "InterCoreMappingStage",
    "IntraCoreMappingStage",
    "LayerSplittingStage",
    "ModelParserStage",
)
for _module in MODULES:
    importlib.import_module(f"{__name__}.{_module}")

# imported after the modules (importing one binds its name here to it): the names are the stages
from zigzag.multicore.stages import *  # noqa: E402, F403 - the seed's import style

__all__ = list(_stages.__all__)
