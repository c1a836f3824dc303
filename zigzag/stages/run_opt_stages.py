"""ZigZag's module path for the run-optimisation stages (``zigzag.stages.run_opt_stages``)."""

from zigzag.stages.run_opt import (
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
