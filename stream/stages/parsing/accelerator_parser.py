"""Stream's accelerator parsing stage."""

from zigzag.stream.stages import AcceleratorParserStage

__all__ = ["AcceleratorParserStage"]
