"""Stages that change how the pipeline runs (memory, ordering, skipping, parallelism), not what
it computes."""

from __future__ import annotations

import logging
import multiprocessing
import os
from pathlib import Path

from zigzag.stages.stage import Stage, missing_kwarg_error

logger = logging.getLogger(__name__)


class RemoveExtraInfoStage(Stage):
    """Yields ``(result, None)`` for every pair of its child (drops extra_info to save memory)."""

    def run(self):
        for result, _ in self.substage().run():
            yield result, None


class CacheBeforeYieldStage(Stage):
    """Runs its child to exhaustion before yielding any of its pairs."""

    def run(self):
        yield from list(self.substage().run())


class SkipIfDumpExistsStage(Stage):
    """Skips the rest of the pipeline (yields nothing) if its output file already exists.

    The file is ``dump_filename_pattern`` (as used by :class:`DumpStage` below it) or, failing
    that, ``dump_folder``, formatted with this stage's kwargs, e.g. ``"out/{layer}.pickle"``.
    The pattern is passed on unformatted.
    """

    def __init__(
        self, list_of_callables, *, dump_filename_pattern=None, dump_folder=None, **kwargs
    ):
        super().__init__(list_of_callables, **kwargs)
        if dump_filename_pattern is not None:
            self.kwargs["dump_filename_pattern"] = self.pattern = dump_filename_pattern
        elif dump_folder is not None:
            self.kwargs["dump_folder"] = self.pattern = dump_folder
        else:
            raise missing_kwarg_error(
                type(self).__name__, "dump_filename_pattern", "or 'dump_folder'"
            )

    def run(self):
        path = Path(str(self.pattern).format(**self.kwargs))
        if path.exists():
            print(f"Dump {path} already existed. Skip!")
            return
        yield from self.substage().run()


# One pool per gather: created by the first spawn, closed when the gather is done.
_pool: multiprocessing.pool.Pool | None = None


def _shared_pool(processes: int):
    global _pool
    if _pool is None:
        _pool = multiprocessing.Pool(processes)
    return _pool


def _close_pool(*, terminate: bool = False) -> None:
    global _pool
    if _pool is not None:
        _pool.terminate() if terminate else _pool.close()
        _pool.join()
        _pool = None


def run_to_list(list_of_callables, kwargs: dict) -> list:
    """Build the first stage of ``list_of_callables`` and return everything it yields."""
    return list(list_of_callables[0](list_of_callables[1:], **kwargs).run())


class MultiProcessingSpawnStage(Stage):
    """Runs the rest of the pipeline in a worker process and yields one ``(None, None)``
    placeholder; the :class:`MultiProcessingGatherStage` above collects the real results.

    ``multiprocessing_callback`` (set by the gather stage) receives the pending job;
    ``nb_multiprocessing_threads`` (default: CPU count) sizes the worker pool. Stages and kwargs
    below must be picklable (stage classes defined at module level, no lambdas).
    """

    def __init__(
        self,
        list_of_callables,
        *,
        multiprocessing_callback,
        nb_multiprocessing_threads=None,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.callback = multiprocessing_callback
        self.processes = nb_multiprocessing_threads or os.cpu_count() or 1

    def run(self):
        pool = _shared_pool(self.processes)
        self.callback(pool.apply_async(run_to_list, (self.list_of_callables, self.kwargs)))
        yield None, None


class MultiProcessingGatherStage(Stage):
    """Collects the results of the jobs started by the :class:`MultiProcessingSpawnStage` below it
    and yields them, **in submission order** (ZigZag yields them in completion order, so its
    order can vary between runs). Only iterating stages belong between the two (e.g.
    :class:`WorkloadStage`): they see placeholders, not results. A failing job re-raises its
    error here."""

    def run(self):
        pending = []
        try:
            for result, extra_info in self.substage(multiprocessing_callback=pending.append).run():
                if result is not None:  # not a placeholder
                    yield result, extra_info
            for index, job in enumerate(pending, start=1):
                yield from job.get()
                logger.info("%s: %d/%d jobs gathered", type(self).__name__, index, len(pending))
        except BaseException:
            _close_pool(terminate=True)
            raise
        _close_pool()
