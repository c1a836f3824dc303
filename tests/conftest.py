"""Fixtures shared by every test folder; the helpers that are not fixtures are in tests/support/."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from support.faults import read_only_folder_fixture  # noqa: F401 (a fixture: read_only_folder)
from support.workflow import WorkflowRun, small_workflow_folder, snakemake


def _once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` run once per test session, also under pytest-xdist: the workers share
    pytest's temporary root, and the first to take the lock builds while the others wait."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / f"{name}.built").exists():
            build(folder)
            (root / f"{name}.built").touch()
    return folder


@pytest.fixture(scope="session")
def small_workflow(tmp_path_factory) -> WorkflowRun:
    """The workflow run once on a small config (support.workflow.small_workflow_folder: three
    experiments of four convolutions on two accelerator files), shared by every test that reads
    its results. Read it only; a test that edits and reruns works on ``small_workflow.copy_to``."""

    def build(folder: Path) -> None:
        small_workflow_folder(folder)
        (folder.parent / "small_workflow.log").write_text(snakemake(folder))

    folder = _once(tmp_path_factory, "small_workflow", build)
    return WorkflowRun(folder, (folder.parent / "small_workflow.log").read_text())
