"""Stream's CN-graph stage."""

from zigzag.multicore.stages import TiledWorkloadGenerationStage

__all__ = ["TiledWorkloadGenerationStage"]
