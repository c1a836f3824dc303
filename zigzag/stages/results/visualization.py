"""ZigZag's module path for :class:`VisualizationStage`."""

from zigzag.stages.plot import VisualizationStage

__all__ = ["VisualizationStage"]
