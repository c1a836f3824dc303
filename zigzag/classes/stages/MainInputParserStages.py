"""ZigZag's seed-era ``zigzag/classes/stages/MainInputParserStages.py``."""

from zigzag.stages import (
    AcceleratorParserStage,
    WorkloadParserStage,
)

__all__ = ["AcceleratorParserStage", "WorkloadParserStage"]
