"""ZigZag's seed-era ``zigzag/classes/stages/SaveStage.py``."""

from zigzag.stages import (
    CompleteSaveStage,
    PickleSaveStage,
    SimpleSaveStage,
)

__all__ = ["CompleteSaveStage", "PickleSaveStage", "SimpleSaveStage"]
