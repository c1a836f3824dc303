"""Stream's ONNX model parsing stage."""

from zigzag.stream.stages import ONNXModelParserStage

__all__ = ["ONNXModelParserStage"]
