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


def sealed_files(results: str | Path, cache: str | Path) -> Iterator[tuple[Path, str | None]]:
    """(path, the key it must hold or None) of every sealed file of a results folder and cache."""
    # sorted by their text (comparing Path objects costs ~10x more: ~3 s for 40,000 files)
    for pattern in _IN_RESULTS:
        for path in sorted(Path(results).glob(pattern), key=str):
            yield path, None
    for pattern, keyed in _IN_CACHE:
        for path in sorted(Path(cache).glob(pattern), key=str):
            yield path, path.stem if keyed else None


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
    for path, key in sealed_files(results, cache):
        stamp = file_stamp(path)  # before the check: a write while checking shows at the next check
        name = os.path.abspath(path)
        if stamp is not None and (record.get(name) == stamp or is_sound(path, key)):
            sound[name] = stamp
        elif stamp is not None:
            suspect.append((path, key))
    lines = remove_damaged(suspect, dry_run=dry_run) if remove else []
    if not dry_run and sound != stored:
        try:
            write_text_atomic(record_path, json.dumps(sound, separators=(",", ":")))
        except OSError:  # a read-only cache: said by the check that follows
            return lines
    if not dry_run:
        drop_notes(notes_files)
    return lines
