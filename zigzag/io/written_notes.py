"""Notes of the sealed files a process wrote whole, so that the workflow's integrity check
(``zigzag/steps/integrity.py``) can record them as sound without reading them back.

A writer that has just renamed a sealed file into a cache notes its stamp (size, modification and
change times, inode) in ``<cache>/status/written/<pid>.jsonl``. The check takes a noted stamp as
proof of soundness only while the file's stamp is still the same: any later write to the file (a
crash, a full disk, a hand edit) changes its change time, so such a file is read and checked as
before. A note that is lost (a killed process, a torn line, a notes file removed meanwhile) only
costs that read (a notes file taken while its process still writes to it, say).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: where writers note the sealed files they wrote, under a cache folder
NOTES = Path("status") / "written"


def file_stamp(path: str | Path) -> list[int] | None:
    """What any write to ``path`` changes: size, modification and change times, inode (None when
    the file cannot be read)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]


def note_written(cache: str | Path, path: str | Path) -> None:
    """Note that ``path``, a sealed file of ``cache``, was just written whole (renamed into place)."""
    stamp = file_stamp(path)
    if stamp is None:
        return
    line = json.dumps([os.path.abspath(path), stamp], separators=(",", ":")) + "\n"
    try:
        os.write(_notes_file(Path(cache)), line.encode())
    except OSError:  # a read-only or full cache: the file is checked by reading it
        pass


#: (cache folder, process id) -> this process's open notes file there (opened once: appending a
#: line is then one write; a forked child opens its own)
_OPEN: dict[tuple[Path, int], int] = {}


def _notes_file(cache: Path) -> int:
    """This process's notes file under ``cache``, opened for appending."""
    slot = (cache, os.getpid())
    if slot not in _OPEN:
        folder = cache / NOTES
        folder.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        _OPEN[slot] = os.open(folder / f"{os.getpid()}.jsonl", flags, 0o644)
    return _OPEN[slot]


def read_notes(cache: str | Path) -> tuple[dict[str, list[int]], list[Path]]:
    """The noted stamps of ``cache`` (absolute path -> stamp; the last note of a path wins) and the
    notes files they came from (for :func:`drop_notes` once they are recorded elsewhere)."""
    notes: dict[str, list[int]] = {}
    files = sorted((Path(cache) / NOTES).glob("*.jsonl"), key=str)
    for file in files:
        try:
            lines = file.read_text().splitlines()
        except OSError:
            continue
        try:  # every line whole (as a run leaves them): one parse for the file
            entries = json.loads("[" + ",".join(lines) + "]")
        except ValueError:
            entries = None
        if entries is None or len(entries) != len(lines):  # a torn line: line by line
            entries = [_entry(line) for line in lines]
        for entry in entries:
            if isinstance(entry, list) and len(entry) == 2:
                name, stamp = entry
                if isinstance(name, str) and isinstance(stamp, list):
                    notes[name] = stamp
    return notes, files


def _entry(line: str):
    """A notes line's ``[path, stamp]``, or None for a torn line (that file is read instead)."""
    try:
        return json.loads(line)
    except ValueError:
        return None


def drop_notes(files: list[Path]) -> None:
    """Remove notes files already taken into the integrity record."""
    for file in files:
        try:
            file.unlink()
        except OSError:
            pass
