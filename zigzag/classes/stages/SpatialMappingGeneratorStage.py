"""ZigZag's seed-era ``zigzag/classes/stages/SpatialMappingGeneratorStage.py``."""

from zigzag.stages import SpatialMappingGeneratorStage

__all__ = ["SpatialMappingGeneratorStage"]
