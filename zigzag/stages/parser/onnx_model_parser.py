"""ZigZag's module path for :class:`ONNXModelParserStage`."""

from zigzag.stages.parsers import ONNXModelParserStage

__all__ = ["ONNXModelParserStage"]
