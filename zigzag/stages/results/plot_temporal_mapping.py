"""ZigZag's module path for :class:`PlotTemporalMappingsStage`."""

from zigzag.stages.plot import PlotTemporalMappingsStage

__all__ = ["PlotTemporalMappingsStage"]
