"""ZigZag's seed-era ``zigzag/classes/stages/RemoveUnusedMemoryStage.py``."""

from zigzag.stages import RemoveUnusedMemoryStage

__all__ = ["RemoveUnusedMemoryStage"]
