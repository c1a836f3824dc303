"""Stream's ONNX model parsing stage."""

from zigzag.multicore.stages import ONNXModelParserStage

__all__ = ["ONNXModelParserStage"]
