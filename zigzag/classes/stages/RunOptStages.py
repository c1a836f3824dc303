"""ZigZag's seed-era ``zigzag/classes/stages/RunOptStages.py``."""

from zigzag.stages import (
    CacheBeforeYieldStage,
    MultiProcessingGatherStage,
    MultiProcessingSpawnStage,
    RemoveExtraInfoStage,
    SkipIfDumpExistsStage,
)

__all__ = [
    "CacheBeforeYieldStage",
    "MultiProcessingGatherStage",
    "MultiProcessingSpawnStage",
    "RemoveExtraInfoStage",
    "SkipIfDumpExistsStage",
]
