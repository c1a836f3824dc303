"""Stream's 2023 ``stream/classes/stages/GenerateCNWorkloadHybridStage.py``."""

from zigzag.multicore.stages import GenerateCNWorkloadHybridStage

__all__ = ["GenerateCNWorkloadHybridStage"]
