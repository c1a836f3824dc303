"""The workflow's files that carry their own integrity (:mod:`zigzag.io.sealed`), checked when
the Snakefile loads: cached layer results and cost-table entries (content-keyed, shared by every
experiment), and the intermediate files a later step reads (parsed inputs, plans, an experiment's
results, a hardware sweep's batches of points, an experiment's layer jobs and the records of its
chunks). A damaged one is removed so that the run computes it again (``workflow/rules/common.smk``).

A file found sound is recorded with its size, modification and change times and inode
(``<cache>/status/sound_files.json``), and checked again only when one of them differs: a rerun
that changed nothing reads no file, and any write to a file (a crash, a full disk, a hand edit, even
one that puts the modification time back) changes its change time, so it is checked again. A
file a job wrote whole and noted with its stamp (:mod:`zigzag.io.written_notes`: the layer results)
is recorded from that note while its stamp is unchanged, without being read back."""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterator
from pathlib import Path

from zigzag.io.atomic import write_text_atomic
from zigzag.io.sealed import is_sound, remove_damaged
from zigzag.io.written_notes import drop_notes, file_stamp, read_notes

#: where the cache records the sealed files found sound: absolute path -> stamp
RECORD = Path("status") / "sound_files.json"

#: (folder pattern under the results folder or the cache, whether its files are named by their key)
_IN_RESULTS = ("*/plan.json", "*/results.json", "hardware_sweeps/*/points/*.json")
_IN_CACHE = (
    ("results/*.json", True),
    ("multicore-cost/entries/*.json", True),
    ("parsed/*/*.json", False),
    ("layer-jobs/*.json", False),
    ("chunks/*/*.json", False),
)


def sealed_files(results: str | Path, cache: str | Path) -> Iterator[tuple[str, str, str | None]]:
    """(path, its absolute path, the key it must hold or None) of every sealed file of a results
    folder and cache, each pattern's paths sorted as text. The folders are listed with
    :func:`os.scandir` and the paths kept as text (``Path.glob`` and a ``Path`` per file cost
    more than the check itself on the ~40,000 layer results of a 1,000-variant sweep)."""
    for pattern in _IN_RESULTS:
        for path, absolute, _ in _matches(results, pattern):
            yield path, absolute, None
    for pattern, keyed in _IN_CACHE:
        for path, absolute, name in _matches(cache, pattern):
            yield path, absolute, _stem(name) if keyed else None


def _matches(root: str | Path, pattern: str) -> list[tuple[str, str, str]]:
    """(path, absolute path, name) of the entries under ``root`` matching ``pattern``
    (``/``-separated names and shell wildcards, hidden names included), sorted by path: what
    ``Path(root).glob(pattern)`` finds, as text."""
    base = str(Path(root))
    found = [("" if base == "." else base + "/", os.path.abspath(base) + "/", "")]
    for depth, part in enumerate(pattern.split("/"), 1):
        last = depth == len(pattern.split("/"))
        found = [
            (f"{path}{name}{'' if last else '/'}", f"{absolute}{name}{'' if last else '/'}", name)
            for path, absolute, _ in found
            for name in _names(absolute, part, folders_only=not last)
        ]
    return sorted(found)


def _names(folder: str, pattern: str, *, folders_only: bool) -> list[str]:
    """The names in ``folder`` (ending with ``/``) matching ``pattern`` (folders only, or any entry)."""
    if not any(c in pattern for c in "*?["):
        exists = os.path.isdir if folders_only else os.path.lexists
        return [pattern] if exists(folder + pattern) else []
    try:
        with os.scandir(folder) as entries:
            return [
                e.name
                for e in entries
                if fnmatch.fnmatchcase(e.name, pattern) and (not folders_only or e.is_dir())
            ]
    except OSError:
        return []


def _stem(name: str) -> str:
    """``Path(name).stem``: the name without its last suffix (a dot first or last starts none)."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def is_dry_run(arguments: list[str]) -> bool:
    """Whether Snakemake's command line asks for a dry run (``-n``, ``-np``, ``--dry-run``)."""
    return any(
        a in ("--dry-run", "--dryrun")
        or (a.startswith("-") and not a.startswith("--") and a[1:].isalpha() and "n" in a)
        for a in arguments
    )


def check_sealed_files(
    results: str | Path, cache: str | Path, *, dry_run: bool = False, remove: bool = True
) -> list[str]:
    """Check the sealed files of ``results`` and ``cache`` not found sound as they are now (every
    file the first time), remove the damaged ones (:func:`remove_damaged`; ``remove=False``: leave
    them to the next check) and record the sound ones (not on a dry run). The warning lines."""
    record_path = Path(cache) / RECORD
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        record = {}
    stored = dict(record)
    noted, notes_files = read_notes(cache)  # files the jobs wrote whole (zigzag.io.written_notes)
    record.update(noted)
    sound, suspect = {}, []
    for path, name, key in sealed_files(results, cache):
        stamp = file_stamp(path)  # before the check: a write while checking shows at the next check
        if stamp is not None and (record.get(name) == stamp or is_sound(Path(path), key)):
            sound[name] = stamp
        elif stamp is not None:
            suspect.append((Path(path), key))
    lines = remove_damaged(suspect, dry_run=dry_run) if remove else []
    if not dry_run and sound != stored:
        try:
            write_text_atomic(record_path, json.dumps(sound, separators=(",", ":")))
        except OSError:  # a read-only cache: said by the check that follows
            return lines
    if not dry_run:
        drop_notes(notes_files)
    return lines
