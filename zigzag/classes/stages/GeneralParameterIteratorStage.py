"""ZigZag's seed-era ``zigzag/classes/stages/GeneralParameterIteratorStage.py``."""

from zigzag.stages import GeneralParameterIteratorStage

__all__ = ["GeneralParameterIteratorStage"]
