"""Stream's 2023 ``stream/classes/stages/ModelParserStage.py``."""

from zigzag.multicore.stages import ONNXModelParserStage

__all__ = ["ONNXModelParserStage"]
