"""Stream's layer-stack stage."""

from zigzag.stream.stages import LayerStacksGenerationStage

__all__ = ["LayerStacksGenerationStage"]
