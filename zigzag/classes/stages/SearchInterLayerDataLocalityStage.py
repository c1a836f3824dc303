"""ZigZag's seed-era ``zigzag/classes/stages/SearchInterLayerDataLocalityStage.py``."""

from zigzag.stages import SearchInterLayerDataLocalityStage

__all__ = ["SearchInterLayerDataLocalityStage"]
