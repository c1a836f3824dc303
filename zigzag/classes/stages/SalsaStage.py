"""ZigZag's seed-era ``zigzag/classes/stages/SalsaStage.py``."""

from zigzag.stages import SalsaStage

__all__ = ["SalsaStage"]
