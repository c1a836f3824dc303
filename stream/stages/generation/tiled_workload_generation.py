"""Stream's CN-graph stage."""

from zigzag.stream.stages import TiledWorkloadGenerationStage

__all__ = ["TiledWorkloadGenerationStage"]
