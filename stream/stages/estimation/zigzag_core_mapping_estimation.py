"""Stream's cost-table stage."""

from zigzag.stream.stages import ZigZagCoreMappingEstimationStage

__all__ = ["ZigZagCoreMappingEstimationStage"]
