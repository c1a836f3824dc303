"""ZigZag's seed-era ``zigzag/classes/stages/SearchUnusedMemoryStage.py``."""

from zigzag.stages import SearchUnusedMemoryStage

__all__ = ["SearchUnusedMemoryStage"]
