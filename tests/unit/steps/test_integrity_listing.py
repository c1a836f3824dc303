"""The integrity check lists its sealed files with os.scandir and text paths
(zigzag/steps/integrity.py): the same files, paths, order and keys as ``Path.glob``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zigzag.steps import integrity

FILES = [
    "results/a/plan.json",
    "results/.hidden/plan.json",
    "results/b/results.json",
    "results/hardware_sweeps/g/points/x+3.json",
    "results/hardware_sweeps/g/points/.partial.json",
    "results/hardware_sweeps/g/points/notes.txt",
    "results/.cache/results/abc.json",
    "results/.cache/results/d.e.json",
    "results/.cache/results/.json",
    "results/.cache/results/..json",
    "results/.cache/multicore-cost/entries/k.json",
    "results/.cache/parsed/workloads/w.json",
    "results/.cache/layer-jobs/j.json",
    "results/.cache/chunks/e/1.json",
    "results/.cache/chunks/f.json",
]


def _globbed(results, cache) -> list[tuple[str, str, str | None]]:
    """What the check listed before: Path.glob per pattern, sorted as text, stems as keys."""
    found = []
    for pattern in integrity._IN_RESULTS:
        for path in sorted(Path(results).glob(pattern), key=str):
            found.append((str(path), os.path.abspath(path), None))
    for pattern, keyed in integrity._IN_CACHE:
        for path in sorted(Path(cache).glob(pattern), key=str):
            found.append((str(path), os.path.abspath(path), path.stem if keyed else None))
    return found


@pytest.mark.parametrize("where", ["relative", "dotted", "absolute", "inside", "missing"])
def test_sealed_files_are_those_path_glob_finds(tmp_path, monkeypatch, where):
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / "results/.cache/results/folder.json").mkdir()
    (tmp_path / "results/.cache/results/broken.json").symlink_to("nowhere")
    monkeypatch.chdir(tmp_path)
    results, cache = {
        "relative": ("results", "results/.cache"),
        "dotted": ("./results/", "results//.cache"),
        "absolute": (tmp_path / "results", tmp_path / "results" / ".cache"),
        "inside": (".", ".cache"),
        "missing": ("elsewhere", "elsewhere/.cache"),
    }[where]
    if where == "inside":
        monkeypatch.chdir(tmp_path / "results")
    listed = list(integrity.sealed_files(results, cache))
    assert listed == _globbed(results, cache)
    assert len(listed) == (0 if where == "missing" else 15)
