"""Stream's 2023 ``stream.classes.stages``: every stage of :mod:`zigzag.multicore.stages`, the
seed's names (``StreamONNXModelParserStage``, ``GenerateCNWorkloadHybridStage``,
``IntraCoreMappingStage``, ``InterCoreMappingStage``, ...) and the late-2024 ones, with Stream's
``MainStage`` and ``AcceleratorParserStage``: imported after ``from zigzag.classes.stages import
*``, as Stream's scripts do, they take the place of ZigZag's single-core ones."""

from zigzag.multicore import stages as _stages
from zigzag.multicore.stages import *  # noqa: F403 - the seed's import style

__all__ = list(_stages.__all__)
