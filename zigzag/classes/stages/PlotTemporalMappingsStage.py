"""ZigZag's seed-era ``zigzag/classes/stages/PlotTemporalMappingsStage.py``."""

from zigzag.stages import PlotTemporalMappingsStage

__all__ = ["PlotTemporalMappingsStage"]
