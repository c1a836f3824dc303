"""ZigZag's seed-era ``zigzag/classes/stages/TemporalOrderingConversionStage.py``."""

from zigzag.stages import TemporalOrderingConversionStage

__all__ = ["TemporalOrderingConversionStage"]
