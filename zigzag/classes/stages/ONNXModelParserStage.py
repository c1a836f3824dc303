"""ZigZag's seed-era ``zigzag/classes/stages/ONNXModelParserStage.py``."""

from zigzag.stages import ONNXModelParserStage

__all__ = ["ONNXModelParserStage"]
