"""Every `bash` and `python` code block of the README and of docs/ runs.

A page's blocks run in the order they are written, from a fresh copy of the repository (its
tracked files, without the tests but with the files under tests/data/ the page names), with the
virtual environment's tools first on PATH: each bash block in its own `bash -euo pipefail` (blocks
share the folder and its files, not shell variables), every python block of the page in one
namespace (a later block sees the names an earlier one defined). A block preceded by the line `<!-- norun: <reason> -->` is not run; the
reason is required.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO

RUNNABLE = ("bash", "python")
_FENCE = re.compile(r"^```(\w*)\s*$")
_NORUN = re.compile(r"^<!--\s*norun:\s*(.*?)\s*-->$")
# The longest page (the multi-core tutorial) takes about a minute on a loaded 2-core machine.
BLOCK_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    language: str
    code: str
    norun_reason: str | None


def pages() -> list[Path]:
    """The README and every Markdown page of the documentation site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def code_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a page, each with the `norun` reason written right above it."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, language = i, match.group(1)
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        norun = _NORUN.match(before)
        blocks.append(
            Block(
                str(path.relative_to(REPO)),
                start + 1,
                language,
                "\n".join(lines[start + 1 : end]),
                norun.group(1) if norun else None,
            )
        )
        i = end + 1
    return blocks


def runnable_pages() -> list[str]:
    return [
        str(p.relative_to(REPO))
        for p in pages()
        if any(b.language in RUNNABLE and b.norun_reason is None for b in code_blocks(p))
    ]


def test_every_norun_mark_gives_its_reason():
    for path in pages():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "norun" in line and line.strip().startswith("<!--"):
                match = _NORUN.match(line.strip())
                assert match and match.group(1), (
                    f"{path.name}:{number}: write <!-- norun: <reason> -->"
                )


def test_pages_have_runnable_examples():
    assert {"README.md", "docs/getting-started.md"} <= set(runnable_pages())


def _test_data_named(page: str) -> tuple[str, ...]:
    """The paths under tests/data/ that a page's text names (its examples may use them, as a user's clone has them)."""
    text = (REPO / page).read_text()
    return tuple(
        path.rstrip(".,)")
        for path in re.findall(r"tests/data/[\w./{},-]+", text)
        if "{" not in path
    )


def _repository_copy(tmp_path: Path, page: str) -> Path:
    """The tracked files of the checkout in a fresh folder, with the running venv as `.venv`: the tests are
    left out, except the files under tests/data/ that the page names."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    named = _test_data_named(page)
    copy = tmp_path / "repo"
    for name in files.decode().split("\0"):
        if not name or not (REPO / name).is_file():
            continue
        if name.startswith("tests/") and not (named and name.startswith(named)):
            continue
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    if sys.prefix != sys.base_prefix:  # the examples may call `.venv/bin/...` or activate the venv
        (copy / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    return copy


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env["ZIGZAG_FLOW_IDLE"] = "5"  # a job server started by a block does not outlive the test long
    return env


@pytest.mark.slow
@pytest.mark.parametrize("page", runnable_pages())
def test_code_blocks_run(page, tmp_path, monkeypatch):
    copy = _repository_copy(tmp_path, page)
    env = _environment()
    monkeypatch.chdir(copy)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__docs__"}
    for block in code_blocks(REPO / page):
        if block.language not in RUNNABLE or block.norun_reason is not None:
            continue
        where = f"{page}:{block.line} ({block.language} block)"
        if block.language == "bash":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.code],
                cwd=copy,
                env=env,
                capture_output=True,
                text=True,
                timeout=BLOCK_TIMEOUT_SECONDS,
            )
            assert done.returncode == 0, (
                f"{where} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        else:
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as error:  # noqa: BLE001 - report which block failed
                pytest.fail(f"{where} raised {type(error).__name__}: {error}")
