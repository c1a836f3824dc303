"""Stream's tiling stage."""

from zigzag.stream.stages import TilingGenerationStage

__all__ = ["TilingGenerationStage"]
