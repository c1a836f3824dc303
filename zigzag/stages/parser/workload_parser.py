"""ZigZag's module path for :class:`WorkloadParserStage`."""

from zigzag.stages.parsers import WorkloadParserStage

__all__ = ["WorkloadParserStage"]
