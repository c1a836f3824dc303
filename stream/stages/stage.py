"""Stream's ``stream.stages.stage``: the stage protocol and the entry point."""

from zigzag.multicore.stages import MainStage, Stage, StageCallable

__all__ = ["MainStage", "Stage", "StageCallable"]
