"""The package passes ``ruff check`` with the rules of pyproject.toml ([tool.ruff])."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_package_passes_ruff_check():
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        found = shutil.which("ruff")
        assert found, "ruff is not installed (pip install -e '.[test]' installs it)"
        ruff = Path(found)
    completed = subprocess.run([str(ruff), "check", "--no-cache", "zigzag", "stream"], cwd=REPO,
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
