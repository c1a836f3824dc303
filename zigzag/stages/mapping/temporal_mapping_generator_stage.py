"""ZigZag's module path for :class:`TemporalMappingGeneratorStage` (LOMA)."""

from zigzag.stages.mapping import TemporalMappingGeneratorStage

__all__ = ["TemporalMappingGeneratorStage"]
