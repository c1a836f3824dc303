"""ZigZag's seed-era ``zigzag/classes/stages/LomaStage.py``."""

from zigzag.stages import LomaStage

__all__ = ["LomaStage"]
