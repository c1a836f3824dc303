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
computed again and appended anew (the newest record of a key is the one read).
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field

#: the packs' folder under the result store's folder, and their suffixes
FOLDER = "packs"
PACK, KEYS = ".pack", ".keys"


@dataclass
class PackIndex:
    """Which pack of one result store folder holds each key's newest record: ``listed``, key ->
    the number of its pack in ``lists`` (the pack and its key list's text, read once), and the
    places of the records this process packed itself (``own``)."""

    folder: str
    listed: dict[str, int] = field(default_factory=dict)
    lists: list[tuple[str, str]] = field(default_factory=list)
    own: dict[str, tuple[str, int, int]] = field(default_factory=dict)

    @classmethod
    def load(cls, results: str) -> PackIndex:
        """The index of the packs under ``results`` (the store's folder) as they are now: of a
        key packed more than once (a damaged record packed again), the last pack's record."""
        index = cls(os.path.join(results, FOLDER))
        try:
            names = sorted(n for n in os.listdir(index.folder) if n.endswith(KEYS))
        except OSError:  # no packs (yet)
            return index
        for name in names:
            try:
                with open(os.path.join(index.folder, name), "rb") as file:
                    text = file.read().decode("ascii", "replace")
            except OSError:
                continue
            text = text[: text.rfind("\n") + 1]  # without a last line cut short (a killed writer)
            words = text.split()
            if len(words) == 3 * text.count("\n"):  # every line whole: its first words
                keys = words[0::3]
            else:  # a garbled line: line by line
                keys = [line.split()[0] for line in text.splitlines() if len(line.split()) == 3]
            index.listed.update(zip(keys, itertools.repeat(len(index.lists))))
            index.lists.append((os.path.join(index.folder, name[: -len(KEYS)] + PACK), text))
        return index

    @property
    def keys(self) -> set[str]:
        return set(self.listed) | set(self.own)

    def add(self, key: str, pack: str, offset: int, length: int) -> None:
        self.own[key] = (pack, offset, length)

    def place(self, key: str) -> tuple[str, int, int] | None:
        """(pack, offset, length) of ``key``'s newest record, if any is listed whole."""
        if key in self.own:
            return self.own[key]
        if key not in self.listed:
            return None
        pack, text = self.lists[self.listed[key]]
        at = text.rfind(f"\n{key} ", 0) + 1 or (0 if text.startswith(f"{key} ") else -1)
        parts = text[at : text.find("\n", at)].split() if at >= 0 else []
        if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
            return None
        return pack, int(parts[1]), int(parts[2])

    def record(self, key: str) -> tuple[str, bytes] | None:
        """(where, bytes) of ``key``'s newest record; None when there is none, or when it is not
        readable whole (its pack removed meanwhile, or, over NFS, another node still writing)."""
        place = self.place(key)
        if place is None:
            return None
        pack, offset, length = place
        try:
            fd = os.open(pack, os.O_RDONLY)
        except OSError:
            return None
        try:
            data = os.pread(fd, length, offset)
        finally:
            os.close(fd)
        return (f"{pack}#{key}", data) if len(data) == length else None


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
    """(pack, the keys whose newest record it holds) of every pack under ``results``, with its
    key list as a second file beside it (for ``zigzag cache prune``)."""
    index = PackIndex.load(results)
    held: dict[str, set[str]] = {pack: set() for pack, _ in index.lists}
    for key, number in index.listed.items():
        held[index.lists[number][0]].add(key)
    try:
        names = os.listdir(index.folder)
    except OSError:
        return []
    packs = sorted(os.path.join(index.folder, n) for n in names if n.endswith(PACK))
    return [(pack, held.get(pack, set())) for pack in packs]
