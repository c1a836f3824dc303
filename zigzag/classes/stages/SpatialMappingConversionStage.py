"""ZigZag's seed-era ``zigzag/classes/stages/SpatialMappingConversionStage.py``."""

from zigzag.stages import SpatialMappingConversionStage

__all__ = ["SpatialMappingConversionStage"]
