"""The workflow's Snakemake files stay formatted with snakefmt."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support import REPO


def test_snakemake_files_are_formatted():
    snakefmt = Path(sys.executable).with_name("snakefmt")
    if not snakefmt.exists():
        found = shutil.which("snakefmt")
        assert found, "snakefmt is not installed (pip install -e '.[test]' installs it)"
        snakefmt = Path(found)
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    completed = subprocess.run(
        [str(snakefmt), "--check", *map(str, files)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
