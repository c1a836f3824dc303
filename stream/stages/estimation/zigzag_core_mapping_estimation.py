"""Stream's cost-table stage."""

from zigzag.multicore.stages import ZigZagCoreMappingEstimationStage

__all__ = ["ZigZagCoreMappingEstimationStage"]
