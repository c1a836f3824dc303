"""The tree passes ``ruff check`` and ``ruff format --check`` with the settings of pyproject.toml
([tool.ruff]): the package, the tests, the benchmarks and the tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO


def _ruff() -> Path:
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        found = shutil.which("ruff")
        assert found, "ruff is not installed (pip install -e '.[test]' installs it)"
        ruff = Path(found)
    return ruff


@pytest.mark.parametrize(
    "command, fix",
    [(["check"], "ruff check --fix ."), (["format", "--check"], "ruff format .")],
    ids=["check", "format"],
)
def test_tree_passes_ruff(command, fix):
    completed = subprocess.run(
        [str(_ruff()), *command, "--no-cache", "."], cwd=REPO, capture_output=True, text=True
    )
    assert completed.returncode == 0, f"run `{fix}`:\n{completed.stdout}{completed.stderr}"
