"""The tests are grouped by what they test (docs/contributing/development.md#where-the-tests-live):
no test file at the top of tests/, every test folder on pytest's import path, file names unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conftest import TESTS


def grouped_files() -> list:
    """Every test file (tests/data/ aside)."""
    return sorted(
        path for path in TESTS.rglob("test_*.py") if path.relative_to(TESTS).parts[0] != "data"
    )


def test_no_test_file_at_the_top_of_tests():
    assert not sorted(TESTS.glob("test_*.py")), "put a new test file in the folder of what it tests"


def test_every_test_folder_is_on_the_import_path(pytestconfig):
    listed = {Path(path).resolve() for path in pytestconfig.getini("pythonpath")}
    folders = {path.parent for path in grouped_files()}
    missing = sorted(str(folder.relative_to(TESTS.parent)) for folder in folders - listed)
    assert len(folders) > 10 and not missing, f"add to pythonpath in pyproject.toml: {missing}"


def test_test_file_names_are_unique():
    repeated = [
        name for name, count in Counter(path.name for path in grouped_files()).items() if count > 1
    ]
    assert not repeated, repeated
