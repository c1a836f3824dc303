"""Stages that write results to files while passing them through unchanged.

File names follow ZigZag: ``<dump_folder>/<layer name, '/' -> '_'>_complete.json`` /
``..._simple.json`` per layer result, ``overall_complete.json`` / ``overall_simple.json`` for a
network sum, ``<dump_folder>/list_of_cmes.pickle`` for the per-layer results.

Other results save through the same stages when they say how (e.g. Stream's schedule object in
a Stream chain): a ``save_stem`` attribute (the file is ``<dump_folder>/<save_stem>_<suffix>.json``),
``simple_dict()`` and ``complete_dict()``.
"""

from __future__ import annotations

import logging
import pickle
from datetime import datetime
from pathlib import Path

from zigzag.cost.result import CostResult, CumulativeResult
from zigzag.io.atomic import write_json_atomic
from zigzag.cost.json_forms import complete_json, cumulative_json
from zigzag.io.run_files import file_stem
from zigzag.stages.stage import Stage, missing_kwarg_error

logger = logging.getLogger(__name__)


def result_file(dump_folder, result, suffix: str) -> Path:
    """``<dump_folder>/<layer>_<suffix>.json``, or ``overall_<suffix>.json`` for a network sum."""
    if isinstance(result, CumulativeResult):
        return Path(dump_folder) / f"overall_{suffix}.json"
    if isinstance(result, CostResult):
        return Path(dump_folder) / f"{file_stem(result.layer_name)}_{suffix}.json"
    if isinstance(getattr(result, "save_stem", None), str):
        return Path(dump_folder) / f"{result.save_stem}_{suffix}.json"
    raise NotImplementedError(
        f"cannot save a {type(result).__name__}: not a CostResult or CumulativeResult, "
        "and it has no save_stem"
    )


class _ResultSaveStage(Stage):
    """Passes every result through and saves it as JSON: one file per result in ``dump_folder``
    and/or, with older ZigZag's ``filename_pattern`` (e.g. ``"outputs/{datetime}.json"``), the
    list of all results in one file once the child is exhausted. Both kwargs are passed on."""

    suffix: str

    def __init__(self, list_of_callables, *, dump_folder=None, filename_pattern=None, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        if dump_folder is None and filename_pattern is None:
            raise missing_kwarg_error(
                type(self).__name__,
                "dump_folder",
                "or 'filename_pattern' of older ZigZag; give it to MainStage",
            )
        self.dump_folder = dump_folder
        self.filename_pattern = filename_pattern
        self.kwargs.update(dump_folder=dump_folder, filename_pattern=filename_pattern)

    def json_data(self, result) -> dict:
        raise NotImplementedError

    def run(self):
        collected = []
        for result, extra_info in self.substage().run():
            path = result_file(self.dump_folder or ".", result, self.suffix)  # rejects non-results
            data = self.json_data(result)
            if self.dump_folder is not None:
                write_json_atomic(path, data)
                logger.info(
                    "Saved %s with energy %.3e and latency %.3e to %s",
                    getattr(result, "layer_name", None) or path.stem,
                    result.energy_total,
                    result.latency_total2,
                    path,
                )
            collected.append(data)
            yield result, extra_info
        if self.filename_pattern is not None:
            path = Path(
                self.filename_pattern.format(datetime=datetime.now().strftime("%Y-%m-%d_%H-%M-%S"))
            )
            write_json_atomic(path, collected)
            logger.info("Saved %d results to %s", len(collected), path)


class CompleteSaveStage(_ResultSaveStage):
    """Saves every result passing up as ZigZag's "complete" JSON (``<layer>_complete.json`` /
    ``overall_complete.json``). A per-layer result must know its layer and accelerator (results
    of :class:`CostModelStage` do)."""

    suffix = "complete"

    def json_data(self, result) -> dict:
        if isinstance(result, CumulativeResult):
            return cumulative_json(result)
        if not isinstance(result, CostResult) and hasattr(result, "complete_dict"):
            return result.complete_dict()
        if getattr(result, "layer", None) is None or getattr(result, "accelerator", None) is None:
            raise ValueError(
                f"{type(self).__name__} needs results that hold their layer and accelerator "
                "(LayerCostResult, as CostModelStage yields)"
            )
        return complete_json(result, result.layer, result.accelerator)


class SimpleSaveStage(_ResultSaveStage):
    """Saves ``{"energy": ..., "latency": ...}`` of every result passing up
    (``<layer>_simple.json`` / ``overall_simple.json``)."""

    suffix = "simple"

    def json_data(self, result) -> dict:
        return result.simple_dict()


class PickleSaveStage(Stage):
    """Passes everything through; once its child is exhausted, pickles a list of results to
    ``pickle_filename`` (default ``<dump_folder>/list_of_cmes.pickle``): the per-layer results
    held in the last extra_info received when it is a list of pairs (above :class:`SumStage`),
    else every result received (e.g. Stream's schedule objects in a Stream chain)."""

    def __init__(self, list_of_callables, *, pickle_filename=None, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        if pickle_filename is None:
            if kwargs.get("dump_folder") is None:
                raise missing_kwarg_error(
                    type(self).__name__,
                    "pickle_filename",
                    "or 'dump_folder' to save to <dump_folder>/list_of_cmes.pickle",
                )
            pickle_filename = Path(kwargs["dump_folder"]) / "list_of_cmes.pickle"
        self.pickle_filename = Path(pickle_filename)

    def run(self):
        last_extra = None
        received = []
        for result, extra_info in self.substage().run():
            received.append(result)
            last_extra = extra_info
            yield result, extra_info
        if not received:
            logger.warning(
                "%s received nothing: %s not written", type(self).__name__, self.pickle_filename
            )
            return
        results = _pair_results(last_extra)
        if results is None:
            results = received
        self.pickle_filename.parent.mkdir(parents=True, exist_ok=True)
        with open(self.pickle_filename, "wb") as handle:
            pickle.dump(results, handle, protocol=pickle.HIGHEST_PROTOCOL)
        logger.info("Saved %d results to %s", len(results), self.pickle_filename)


def _pair_results(extra_info) -> list | None:
    """The results of ``extra_info`` when it is a list of ``(result, extra_info)`` pairs."""
    if isinstance(extra_info, (list, tuple)) and all(
        isinstance(pair, tuple) and len(pair) == 2 for pair in extra_info
    ):
        return [pair[0] for pair in extra_info]
    return None


class DumpStage(Stage):
    """Passes everything through; once its child is exhausted, pickles the list of all pairs to
    ``dump_filename_pattern`` formatted with this stage's kwargs (e.g. ``"out/{layer}.pickle"``)."""

    def __init__(self, list_of_callables, *, dump_filename_pattern, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.pattern = dump_filename_pattern
        self.kwargs["dump_filename_pattern"] = dump_filename_pattern

    def run(self):
        received = []
        for pair in self.substage().run():
            received.append(pair)
            yield pair
        path = Path(self.pattern.format(**self.kwargs))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            pickle.dump(received, handle, protocol=pickle.HIGHEST_PROTOCOL)
