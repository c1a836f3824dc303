"""Stream's 2023 ``stream/classes/stages/CustomSpatialMappingGeneratorStage.py``."""

from zigzag.multicore.stages import CustomSpatialMappingGeneratorStage

__all__ = ["CustomSpatialMappingGeneratorStage"]
