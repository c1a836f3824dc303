"""ZigZag's module path for the save stages (``zigzag.stages.results.save``)."""

from zigzag.stages.save import CompleteSaveStage, DumpStage, PickleSaveStage, SimpleSaveStage

__all__ = ["CompleteSaveStage", "DumpStage", "PickleSaveStage", "SimpleSaveStage"]
