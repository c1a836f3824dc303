"""ZigZag's seed-era ``zigzag/classes/stages/Stage.py``."""

from zigzag.stages import (
    MainStage,
    Stage,
)

__all__ = ["MainStage", "Stage"]
