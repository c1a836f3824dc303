"""The result store: the best result of every layer search, kept by its job's content key
(:mod:`zigzag.mapping_search.jobs`) in ``<cache>/results/<key>.json``, sealed (:mod:`zigzag.io.sealed`).

One store per cache folder, shared by the workflow's experiments, hardware sweeps (their batch
jobs, ``zigzag sweep``, the Python API) and everything else that passes a cache: this module is
the only one that reads or writes it. A result is computed once: a process that needs a key not
stored yet takes the key's lock (``<cache>/locks/<key>.lock``, released when the process ends,
however it ends), looks again, and only then searches; another process needing the same key
meanwhile waits for it and reads its result. A sweep's batch job skips the lock: the layers of
its variants are its own, and a result's text is deterministic and written atomically, so two
processes meeting on a key would at worst both search it and write the same file. A store opened
``packed`` (the workflow's sweep batch jobs) appends such results to one file of the process
instead (:mod:`zigzag.mapping_search.result_packs`); every store reads them. A layer no
mapping fits is stored as a failure record (``{"failed": {"step", "reason"}}``), so it is not
searched again either. A damaged file is reported in one warning naming it, never used, and
replaced.
"""

from __future__ import annotations

import fcntl
import logging
import os
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.io.atomic import write_bytes_atomic
from zigzag.io.sealed import DamagedFile, damage_warning, read_sealed, sealed_text, unseal
from zigzag.io.written_notes import note_written
from zigzag.mapping_search.jobs import job_key, job_result_text, layer_from_job
from zigzag.mapping_search.result_packs import PackIndex, PackWriter

_LOG = logging.getLogger(__name__)

#: (folder under the cache, its files' suffix) of what one stored result leaves
STORE_FILES = (("results", ".json"), ("locks", ".lock"))


def failure_record(step: str, reason: str) -> dict:
    """The record of a step that could not do its work (``zigzag/steps/failures.py``)."""
    return {"failed": {"step": step, "reason": " ".join(str(reason).split())}}


@dataclass(frozen=True)
class ResultStore:
    """The layer results of one cache folder; ``packed``: a batch job's results (searched with
    shared candidates) are appended to this process's pack instead of a file each."""

    cache: Path
    packed: bool = False

    def path(self, key: str) -> Path:
        """Where the result of job ``key`` is kept (in a file of its own)."""
        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """:meth:`path` as text (no Path made on the hot path)."""
        return os.path.join(self.cache, "results", key + ".json")

    def read(self, key: str) -> dict | None:
        """The checked data of ``key``'s file or newest packed record (its result or its failure
        record); None when there is none, or when it is damaged (said in one warning: the caller
        computes it again)."""
        try:
            return read_sealed(self._file(key), key)
        except FileNotFoundError:
            pass
        except DamagedFile as exc:
            _LOG.warning(damage_warning(exc))
            return None
        record = _index(os.path.join(self.cache, "results")).record(key)
        if record is None:
            return None
        where, data = record
        try:
            return unseal(data.decode(), where, key)
        except UnicodeDecodeError:
            _LOG.warning(damage_warning(DamagedFile(where, "not text (garbage)")))
        except DamagedFile as exc:
            _LOG.warning(damage_warning(exc))
        return None

    def best(
        self, job: dict | None, layer, accelerator, options, *, shared=None, key=None, keys=None
    ):
        """The best result of ``job`` (its ``layer`` on ``accelerator`` with ``options``): read, or
        searched once and stored. A MappingError when no mapping fits (a stored failure record
        raises it too). ``key``: the job's key, when known; ``keys``: the keys of the job without
        its memories' costs and without their sizes and bandwidths too, when known
        (``zigzag.mapping_search.job_keys``); with both, ``job`` may be None."""
        from zigzag.mapping_search.layer_search import search_layer

        key = key or job_key(job)
        data = self.read(key)
        if data is not None:
            return _result_of(data)
        # a batch job (``shared``) searches the layers of its own variants, which no other job
        # plans: it takes no lock (a file made per key) and does not read again; two processes
        # that met on a key anyway would each write the same result, atomically
        with self._lock(key) if shared is None else nullcontext():
            data = None if shared is not None else self.read(key)
            if data is not None:
                return _result_of(data)
            share = None
            if shared is not None and keys is not None:
                share = (shared, *keys)
            elif shared is not None:
                from zigzag.mapping_search.batched.shared import COST_FIELDS, cost_free_job
                from zigzag.mapping_search.batched.structural import structure_free_job

                share = (
                    shared,
                    job_key(cost_free_job(job)),
                    job_key(structure_free_job(job, COST_FIELDS)),
                )
            result, stats = search_layer(
                layer, accelerator, options, show_progress=False, shared=share
            )
            self._write(key, job_result_text(result, stats, key), pack=shared is not None)
            return result

    def evaluate(self, key: str, job: dict, label: str | None = None) -> tuple[dict, bool]:
        """The data of job ``key`` (a job as :func:`zigzag.mapping_search.jobs.layer_job` writes it) and
        whether it was searched now (False: it was stored already). A layer that cannot be
        searched (no mapping fits, a bad job) is stored as a failure record, its reason naming
        ``label`` (the experiment that planned it)."""
        data = self.read(key)
        if data is not None:
            return data, False
        from zigzag.io.accelerator_dict import accelerator_from_dict
        from zigzag.mapping_search.options import SearchOptions

        with self._lock(key):
            data = self.read(key)
            if data is not None:
                return data, False
            try:
                self.best(
                    job,
                    layer_from_job(job),
                    accelerator_from_dict(job["accelerator"]),
                    SearchOptions(**job["options"]),
                    key=key,
                )
            except (InputError, MappingError) as exc:
                self._write_failure(key, "evaluate", _labelled(exc, label))
        return self.read(key), True

    def _write_failure(self, key: str, step: str, reason: str) -> None:
        self._write(key, sealed_text(failure_record(step, reason), key))

    def _write(self, key: str, text: str, *, pack: bool = False) -> None:
        """Store ``text`` (sealed) as ``key``'s file, noted as written whole; with ``pack`` (a
        batch job's result in a ``packed`` store), appended to this process's pack instead."""
        if pack and self.packed:
            results = os.path.join(self.cache, "results")
            slot = (results, os.getpid())
            if slot not in _WRITERS:
                _WRITERS[slot] = PackWriter(results, _index(results))
            _WRITERS[slot].add(key, text)
            return
        path = self._file(key)
        write_bytes_atomic(path, text.encode())
        note_written(self.cache, path)

    @contextmanager
    def _lock(self, key: str):
        """Hold ``key``'s lock (re-entrant within a process: a second take is a no-op)."""
        if key in _HELD:
            yield
            return
        folder = Path(self.cache) / "locks"
        if folder not in _FOLDERS:
            folder.mkdir(parents=True, exist_ok=True)
            _FOLDERS.add(folder)
        fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        _HELD.add(key)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # a file system without locks: at worst two jobs search the same layer
                pass
            yield
        finally:
            _HELD.discard(key)
            os.close(fd)


_HELD: set[str] = set()  # the keys whose lock this process holds
_FOLDERS: set[Path] = set()  # lock folders made by this process
#: per store folder, the packs' index as this process first read it, with its own records added
_INDEXES: dict[str, PackIndex] = {}
#: (store folder, process id) -> this process's pack there (a forked child opens its own)
_WRITERS: dict[tuple[str, int], PackWriter] = {}


def _index(results: str) -> PackIndex:
    if results not in _INDEXES:
        _INDEXES[results] = PackIndex.load(results)
    return _INDEXES[results]


def _result_of(data: dict):
    """The CostResult of a stored file's data; a MappingError with its reason for a failure record."""
    from zigzag.cost.result import CostResult

    if "failed" in data:
        raise MappingError(data["failed"]["reason"])
    return CostResult.from_dict(data["result"])


def _labelled(exc: Exception, label: str | None) -> str:
    """An error's one line, naming ``label`` where the error names no place of its own."""
    if label is None:
        return str(exc)
    if isinstance(exc, InputError):
        return str(InputError(exc.file, exc.where or label, exc.message))
    return f"{label}: {exc}"
