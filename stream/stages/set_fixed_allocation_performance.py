"""Stream's fixed-allocation stage."""

from zigzag.multicore.stages import SetFixedAllocationPerformanceStage

__all__ = ["SetFixedAllocationPerformanceStage"]
