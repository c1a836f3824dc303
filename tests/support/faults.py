"""Faults shared by the fault tests (tests/errors/test_faults.py, tests/integration/
test_workflow_faults.py): a sealed file damaged as a crash, a full disk or a hand edit would, and a
folder nobody can write in."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from zigzag.io.sealed import sealed_text

DATA_SEALED = {"result": {"energy_total": 12.5, "memory_names": ["a", "b"]}, "stats": {"n": 3}}


def damage(path: Path, how: str) -> None:
    """Damage a sealed file as a crash, a full disk or a hand edit would."""
    text = path.read_text()
    if how == "truncated":
        path.write_text(text[: len(text) // 2])
    elif how == "empty":
        path.write_text("")
    elif how == "garbage":
        path.write_bytes(os.urandom(64))
    elif how == "altered":  # still valid JSON, one energy x 1000
        data = json.loads(text)
        data["result"]["energy_total"] *= 1000
        path.write_text(json.dumps(data))
    elif how == "other key":
        path.write_text(sealed_text(DATA_SEALED, "0123"))


@pytest.fixture(name="read_only_folder")
def read_only_folder_fixture(tmp_path):
    """A folder nobody can write in, root included: a read-only tmpfs (CI runs as root, where a
    chmod does not stop writes); /sys (where root cannot create files) when mounting is refused."""
    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        yield Path("/sys")
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)
