"""ZigZag's module path for :class:`MainStage` (``zigzag.stages.main``)."""

from zigzag.stages.stage import MainStage

__all__ = ["MainStage"]
