"""Stream's scheduling-order stage."""

from zigzag.multicore.stages import SchedulingOrderGenerationStage

__all__ = ["SchedulingOrderGenerationStage"]
