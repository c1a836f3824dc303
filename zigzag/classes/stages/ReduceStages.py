"""ZigZag's seed-era ``zigzag/classes/stages/ReduceStages.py``."""

from zigzag.stages import (
    ListifyStage,
    MinimalEDPStage,
    MinimalEnergyStage,
    MinimalLatencyStage,
    SumStage,
)

__all__ = [
    "ListifyStage",
    "MinimalEDPStage",
    "MinimalEnergyStage",
    "MinimalLatencyStage",
    "SumStage",
]
