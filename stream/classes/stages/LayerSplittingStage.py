"""Stream's 2023 ``stream/classes/stages/LayerSplittingStage.py``."""

from zigzag.multicore.stages import LayerSplittingStage

__all__ = ["LayerSplittingStage"]
