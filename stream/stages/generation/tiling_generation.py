"""Stream's tiling stage."""

from zigzag.multicore.stages import TilingGenerationStage

__all__ = ["TilingGenerationStage"]
