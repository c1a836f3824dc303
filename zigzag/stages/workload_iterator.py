"""ZigZag's module path for :class:`WorkloadStage` (``zigzag.stages.workload_iterator``)."""

from zigzag.stages.iterators import WorkloadStage

__all__ = ["WorkloadStage"]
