"""Stream's scheduling-order stage."""

from zigzag.stream.stages import SchedulingOrderGenerationStage

__all__ = ["SchedulingOrderGenerationStage"]
