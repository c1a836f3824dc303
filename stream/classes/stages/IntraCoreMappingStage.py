"""Stream's 2023 ``stream/classes/stages/IntraCoreMappingStage.py``."""

from zigzag.multicore.stages import IntraCoreMappingStage

__all__ = ["IntraCoreMappingStage"]
