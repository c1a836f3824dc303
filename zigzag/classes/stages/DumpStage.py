"""ZigZag's seed-era ``zigzag/classes/stages/DumpStage.py``."""

from zigzag.stages import DumpStage

__all__ = ["DumpStage"]
