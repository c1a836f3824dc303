"""The tests are grouped by what they test (docs/contributing/development.md#where-the-tests-live):
no test file at the top of tests/, file names unique, shared helpers in tests/support/ only."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from support import TESTS


def grouped_files() -> list:
    """Every test file (tests/data/ aside)."""
    return sorted(
        path for path in TESTS.rglob("test_*.py") if path.relative_to(TESTS).parts[0] != "data"
    )


def test_no_test_file_at_the_top_of_tests():
    assert not sorted(TESTS.glob("test_*.py")), "put a new test file in the folder of what it tests"


def test_only_tests_is_on_the_import_path(pytestconfig):
    listed = [Path(path).resolve() for path in pytestconfig.getini("pythonpath")]
    assert listed == [TESTS], "shared helpers go into tests/support/, imported as `support`"


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules ``path`` imports (inside functions too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_test_modules_import_helpers_from_support_only():
    python_files = [TESTS / "conftest.py", *grouped_files(), *(TESTS / "support").glob("*.py")]
    offenders = {
        path.name: sorted(name for name in imported_modules(path) if name.startswith("test_"))
        for path in python_files
    }
    offenders = {name: modules for name, modules in offenders.items() if modules}
    assert not offenders, f"move what is shared into tests/support/: {offenders}"
    importing_conftest = [p.name for p in python_files if "conftest" in imported_modules(p)]
    assert not importing_conftest, "conftest.py holds fixtures; import helpers from support"


def test_test_file_names_are_unique():
    repeated = [
        name for name, count in Counter(path.name for path in grouped_files()).items() if count > 1
    ]
    assert not repeated, repeated
