"""Stages that combine everything their child yields into one pair."""

from __future__ import annotations

from zigzag.cost.result import sum_results
from zigzag.mapping_search.reduce import keep_best
from zigzag.stages.fast_path import batched_temporal_search
from zigzag.stages.stage import Stage


class _MinimalStage(Stage):
    """Yields the best result of its child under ``criterion`` (the first of equals), once the
    child is exhausted: ``(best, [])``, or ``(best, all pairs received)`` with
    ``reduce_minimal_keep_others=True``. Yields nothing if the child yielded nothing."""

    criterion: str

    def __init__(self, list_of_callables, *, reduce_minimal_keep_others=False, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.keep_others = reduce_minimal_keep_others

    def run(self):
        fast = None if self.keep_others else batched_temporal_search(self, self.criterion)
        if fast is not None:
            yield fast, []
            return
        best = None
        received = []
        for result, extra_info in self.substage().run():
            best = keep_best(best, result, self.criterion)
            if self.keep_others:
                received.append((result, extra_info))
        if best is not None:
            yield best, received


class MinimalEnergyStage(_MinimalStage):
    """Keeps the result with the lowest energy (ties: lowest latency)."""

    criterion = "energy"


class MinimalLatencyStage(_MinimalStage):
    """Keeps the result with the lowest latency (ties: lowest energy)."""

    criterion = "latency"


class MinimalEDPStage(_MinimalStage):
    """Keeps the result with the lowest energy x latency product."""

    criterion = "EDP"


class SumStage(Stage):
    """Adds up all results of its child (in the order received) into one
    :class:`~zigzag.cost.result.CumulativeResult`; yields ``(total, all pairs received)``."""

    def run(self):
        received = list(self.substage().run())
        yield sum_results(result for result, _ in received), received


class ListifyStage(Stage):
    """Yields once: ``(list of all pairs its child yielded, None)``."""

    def run(self):
        yield list(self.substage().run()), None
