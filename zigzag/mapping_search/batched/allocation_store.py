"""Allocation tables kept in a cache folder, so the batch jobs of a sweep share them.

A hardware sweep's batch jobs each run in a process of their own; the ~10 jobs of one array
shape would each allocate the same layers' candidates again
(:class:`~zigzag.mapping_search.batched.structural.Allocations`, in memory). The allocation of a
chunk of loop orderings reads what :func:`~zigzag.mapping_search.batched.structural.problem_key`
names and the memories' sizes, and each candidate records the size intervals within which it
holds. So the tables of one allocation problem are written to
``<cache>/allocations/<problem digest>/``, a file per table (the problem's text and the
package's model version, hashed: a change to the search's code gives other folders), the last
``alternatives`` of them kept (about: the folder is listed again to drop the oldest only when
the files this process saw there and wrote reach that number, so writers running together may
leave a few more), and a later job of that problem reads them and takes the first
whose intervals hold its sizes, as it takes a table of its own: the same arrays, so the same
results. Only the allocations are written (ids, alive flags, cuts, bounds: each concatenated
over the table's chunks, written raw), not the data movement or latency memos derived from them.

A file starts with a line naming the format and the SHA-256 of the rest; a file that fails that
check, or whose arrays do not make a table of the problem it is named for, is reported in one
warning, never used, and removed (the next job that needs it allocates again). Writes are
atomic (:mod:`zigzag.io.atomic`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zigzag.io.atomic import write_bytes_atomic
from zigzag.io.sealed import DamagedFile, damage_warning
from zigzag.mapping_search.jobs import versioned_digest

_LOG = logging.getLogger(__name__)

#: the folder under the cache
FOLDER = "allocations"
#: the first bytes of a file (the format's name and version)
MAGIC = b"zigzag-allocations 2 "


@dataclass(frozen=True)
class AllocationStore:
    """The allocation tables kept under ``cache``: :meth:`load` and :meth:`save` by problem key,
    the last ``alternatives`` tables of a problem kept."""

    cache: Path
    alternatives: int = 8
    #: folder -> how many files this store last saw or wrote there (a folder is listed again to
    #: drop the oldest only when that reaches ``alternatives``)
    seen: dict = field(default_factory=dict, compare=False, repr=False)

    def folder(self, problem: tuple) -> Path:
        """The folder of the tables of ``problem`` (a ``structural.problem_key``)."""
        return Path(self.cache) / FOLDER / digest(problem)

    def load(self, problem: tuple) -> list[list[tuple]]:
        """The tables kept for ``problem``, oldest first, each a list of chunks ``(ids, alive,
        cuts, bounds)`` (read-only arrays); a damaged file is said in one warning and removed."""
        key = digest(problem)
        tables = []
        files = _files(self.folder(problem))
        self.seen[self.folder(problem)] = len(files)
        for path in files:
            try:
                tables.append(_table(path.read_bytes(), path, key))
            except FileNotFoundError:  # removed by another job meanwhile
                continue
            except DamagedFile as exc:
                _LOG.warning(damage_warning(exc, "removed; allocated again"))
                path.unlink(missing_ok=True)
        return tables

    def save(self, problem: tuple, table: list[tuple]) -> None:
        """Keep ``table`` (a list of chunks as :meth:`load` gives them) for ``problem``; drop the
        oldest beyond ``alternatives``."""
        key = digest(problem)
        fields: dict[str, list] = {}
        lengths, layout = [], None
        for ids, alive, cuts, bounds in table:
            parts = {"ids": ids, "alive": alive, **{f"cut.{op}": c for op, c in cuts.items()}}
            for memory, (low, high) in bounds.items():
                parts[f"low.{memory}"], parts[f"high.{memory}"] = low, high
            if layout is None:
                layout = [list(cuts), list(bounds), list(parts)]
            for name, array in parts.items():
                fields.setdefault(name, []).append(array)
            lengths.append(len(ids))
        arrays = {name: np.ascontiguousarray(np.concatenate(a)) for name, a in fields.items()}
        head = {
            "key": key,
            "lengths": lengths,
            "layout": layout,
            "arrays": [[n, a.dtype.str, list(a.shape)] for n, a in arrays.items()],
        }
        payload = b"".join(
            [json.dumps(head).encode(), b"\n", *(a.tobytes() for a in arrays.values())]
        )
        folder = self.folder(problem)
        name = hashlib.sha256(payload).hexdigest()
        path = folder / f"{time.time_ns():020d}-{name[:16]}.bin"
        write_bytes_atomic(path, MAGIC + name.encode() + b"\n" + payload)
        seen = self.seen.get(folder)
        if seen is not None and seen < self.alternatives:  # room left when last seen
            self.seen[folder] = seen + 1
            return
        files = _files(folder)
        for old in files[: -self.alternatives]:
            old.unlink(missing_ok=True)
        self.seen[folder] = min(len(files), self.alternatives)


def digest(problem: tuple) -> str:
    """The name of ``problem``'s folder: its text and the model version, hashed."""
    return versioned_digest(repr(problem))


def _files(folder: Path) -> list[Path]:
    """The table files of a folder, oldest first (their names start with the time written)."""
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".bin" and p.name[0] != ".")
    except FileNotFoundError:
        return []


def _table(data: bytes, path: Path, key: str) -> list[tuple]:
    """The chunks of a file's bytes, checked (a DamagedFile when they are not what
    :meth:`AllocationStore.save` wrote for ``key``)."""
    first, _, payload = data.partition(b"\n")
    if not first.startswith(MAGIC):
        raise DamagedFile(path, "not an allocation table file")
    if hashlib.sha256(payload).hexdigest().encode() != first[len(MAGIC) :]:
        raise DamagedFile(path, "checksum mismatch (cut short or altered)")
    try:
        text, _, raw = payload.partition(b"\n")
        head = json.loads(text)
        if head["key"] != key:
            raise DamagedFile(path, f"written for {head['key']!r}, not for {key!r}")
        arrays, offset = {}, 0
        for name, dtype, shape in head["arrays"]:
            dtype = np.dtype(dtype)
            count = int(np.prod(shape))
            arrays[name] = np.frombuffer(raw, dtype, count, offset).reshape(shape)
            offset += count * dtype.itemsize
        operands, memories, names = head["layout"]
        lengths = head["lengths"]
        if offset != len(raw) or set(names) != set(arrays) or arrays["alive"].dtype != bool:
            raise ValueError("arrays not as named")
        if any(len(a) != sum(lengths) for a in arrays.values()):
            raise ValueError("arrays of different lengths")
    except DamagedFile:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the bytes are, the file is not used
        raise DamagedFile(path, f"unreadable ({type(exc).__name__})") from None
    chunks, start = [], 0
    for n in lengths:
        part = {name: a[start : start + n] for name, a in arrays.items()}
        chunks.append(
            (
                part["ids"],
                part["alive"],
                {op: part[f"cut.{op}"] for op in operands},
                {m: (part[f"low.{m}"], part[f"high.{m}"]) for m in memories},
            )
        )
        start += n
    return chunks
