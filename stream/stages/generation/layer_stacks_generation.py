"""Stream's layer-stack stage."""

from zigzag.multicore.stages import LayerStacksGenerationStage

__all__ = ["LayerStacksGenerationStage"]
