"""Stream's accelerator parsing stage."""

from zigzag.multicore.stages import AcceleratorParserStage

__all__ = ["AcceleratorParserStage"]
