"""Stream's 2023 ``stream/classes/stages/InterCoreMappingStage.py``."""

from zigzag.multicore.stages import InterCoreMappingStage

__all__ = ["InterCoreMappingStage"]
