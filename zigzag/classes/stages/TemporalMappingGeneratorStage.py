"""ZigZag's seed-era ``zigzag/classes/stages/TemporalMappingGeneratorStage.py``."""

from zigzag.stages import TemporalMappingGeneratorStage

__all__ = ["TemporalMappingGeneratorStage"]
