"""ZigZag's seed-era ``zigzag/classes/stages/WorkloadStage.py``."""

from zigzag.stages import WorkloadStage

__all__ = ["WorkloadStage"]
