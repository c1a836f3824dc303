"""ZigZag's module path for :class:`SpatialMappingConversionStage`."""

from zigzag.stages.mapping import SpatialMappingConversionStage

__all__ = ["SpatialMappingConversionStage"]
