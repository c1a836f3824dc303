"""Stream's fixed-allocation stage."""

from zigzag.stream.stages import SetFixedAllocationPerformanceStage

__all__ = ["SetFixedAllocationPerformanceStage"]
