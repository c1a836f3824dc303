"""Packed layer results: a sweep batch job's results appended to one file of its own instead of
one file per result (:mod:`zigzag.mapping_search.result_store`).

Creating a file costs the file system far more than appending to one: in a batch job of 25
variants (~880 layer results) the per-result files took 0.5–1.0 CPU s of its ~3.5 s
(docs/performance.md). A packing writer (:class:`PackWriter`) keeps each job's results in
``<cache>/results/packs/<time>-<pid>.pack``: the same sealed text a result's own file would
hold, one record per line, each appended whole by one write, so the records written before a
job is killed survive it. Beside the pack, ``.keys`` lists ``key offset length`` per record,
written after the record, so a listed record is whole. A reader (:class:`PackIndex`) reads the
folder's key lists once per process and checks a record's seal when it takes it, as it checks
a result's own file: a damaged record is reported in one warning, never used, and its result
computed again and appended anew (the newest record of a key is read first).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

#: the packs' folder under the result store's folder, and their suffixes
FOLDER = "packs"
PACK, KEYS = ".pack", ".keys"


class PackDamaged(Exception):
    """A packed record that must not be used: where it is (``pack#key``) and why."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.path, self.reason = where, reason


@dataclass
class PackIndex:
    """Where the packs of one result store folder hold each key's records (oldest first)."""

    folder: str
    places: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)

    @classmethod
    def load(cls, results: str) -> PackIndex:
        """The index of the packs under ``results`` (the store's folder) as they are now."""
        index = cls(os.path.join(results, FOLDER))
        try:
            names = sorted(n for n in os.listdir(index.folder) if n.endswith(KEYS))
        except OSError:  # no packs (yet)
            return index
        for name in names:
            pack = os.path.join(index.folder, name[: -len(KEYS)] + PACK)
            try:
                with open(os.path.join(index.folder, name), "rb") as file:
                    lines = file.read().split(b"\n")
            except OSError:
                continue
            for line in lines:
                parts = line.split()
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    index.add(
                        parts[0].decode("ascii", "replace"), pack, int(parts[1]), int(parts[2])
                    )
        return index

    def add(self, key: str, pack: str, offset: int, length: int) -> None:
        self.places.setdefault(key, []).append((pack, offset, length))

    def records(self, key: str):
        """(where, bytes) of ``key``'s records, newest first (one no longer readable is skipped)."""
        for pack, offset, length in reversed(self.places.get(key, ())):
            try:
                fd = os.open(pack, os.O_RDONLY)
            except OSError:  # a pack removed meanwhile (zigzag cache prune)
                continue
            try:
                data = os.pread(fd, length, offset)
            finally:
                os.close(fd)
            if len(data) == length:  # (shorter: not yet seen here, e.g. over NFS; not damaged)
                yield f"{pack}#{key}", data


class PackWriter:
    """This process's pack in one store folder, opened at its first record."""

    def __init__(self, results: str, index: PackIndex):
        self.results, self.index = results, index
        self.fds: tuple[int, int] | None = None
        self.pack, self.size = "", 0

    def add(self, key: str, text: str) -> None:
        """Append ``key``'s sealed ``text`` (one line), then its place in the key list."""
        if self.fds is None:
            self._open()
        data = text.encode()
        try:
            _write_all(self.fds[0], data)
            _write_all(self.fds[1], f"{key} {self.size} {len(data)}\n".encode())
        except OSError:  # (a full disk): the next record starts a new pack, whose offsets are known
            for fd in self.fds:
                os.close(fd)
            self.fds = None
            raise
        self.index.add(key, self.pack, self.size, len(data))
        self.size += len(data)

    def _open(self) -> None:
        folder = os.path.join(self.results, FOLDER)
        os.makedirs(folder, exist_ok=True)
        stem = os.path.join(folder, f"{time.time_ns():020d}-{os.getpid()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        self.pack, self.size = stem + PACK, 0
        self.fds = (os.open(self.pack, flags, 0o666), os.open(stem + KEYS, flags, 0o666))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pack_files(results: str) -> list[tuple[str, set[str]]]:
    """(pack, the keys it holds) of every pack under ``results``, with its key list as a second
    file beside it (for ``zigzag cache prune``)."""
    index = PackIndex.load(results)
    held: dict[str, set[str]] = {}
    for key, places in index.places.items():
        for pack, _, _ in places:
            held.setdefault(pack, set()).add(key)
    try:
        names = os.listdir(index.folder)
    except OSError:
        return []
    packs = sorted(os.path.join(index.folder, n) for n in names if n.endswith(PACK))
    return [(pack, held.get(pack, set())) for pack in packs]
