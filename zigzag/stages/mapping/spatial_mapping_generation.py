"""ZigZag's module path for :class:`SpatialMappingGeneratorStage`."""

from zigzag.stages.mapping import SpatialMappingGeneratorStage

__all__ = ["SpatialMappingGeneratorStage"]
