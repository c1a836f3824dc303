"""ZigZag's module path for :class:`AcceleratorParserStage`."""

from zigzag.stages.parsers import AcceleratorParserStage

__all__ = ["AcceleratorParserStage"]
