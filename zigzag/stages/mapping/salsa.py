"""ZigZag's module path for :class:`SalsaStage` (``zigzag.stages.mapping.salsa``)."""

from zigzag.stages.mapping import SalsaStage

__all__ = ["SalsaStage"]
