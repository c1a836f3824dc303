"""The suite runs on a bare clone: CI runs the README's commands, and no test reads outside the repository."""

from __future__ import annotations

import ast
import re

from support import REPO

TESTS = REPO / "tests"


def readme_setup_commands() -> list[str]:
    """The commands of the README's set-up code block, without their trailing comments."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Set-up") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("   #")[0].strip() for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_setup_commands_verbatim():
    commands = readme_setup_commands()
    assert len(commands) == 2 and commands[1] == ".venv/bin/python -m pytest", commands
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for command in commands:
        assert command in ci_lines, f".ci/run does not run the README's command {command!r}"


def test_ci_runs_from_a_fresh_clone_with_nothing_beside_it():
    script = (REPO / ".ci" / "run").read_text()
    clone = re.search(r"^git clone .*\"\$scratch/([\w-]+)\"$", script, re.M)
    assert clone, "CI must clone the checkout into a fresh folder"
    assert 'scratch="$(mktemp -d)"' in script
    assert script.index(clone.group(0)) < script.index(".venv/bin/python -m pytest")


def python_files() -> list:
    """Every Python file of the tests (tests/data/ aside)."""
    return sorted(
        path for path in TESTS.rglob("*.py") if path.relative_to(TESTS).parts[0] != "data"
    )


def test_tests_read_only_files_inside_the_repository():
    outside = re.compile(r"/work/|\.\./shared|parents\[2\]|REPO\.parent|/ \"shared\"|SHARED\b")
    offenders = [
        f"{path.name}:{number}: {line.strip()}"
        for path in python_files()
        if path.name != "test_ci.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if outside.search(line)
    ]
    assert not offenders, offenders


def _skip_reasons(path) -> list[str]:
    """The reasons of every pytest.skip / importorskip / mark.skip(if) call in ``path``."""
    reasons = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in ("pytest.skip", "pytest.importorskip", "pytest.mark.skip", "pytest.mark.skipif"):
            texts = [
                a
                for a in [*node.args, *(k.value for k in node.keywords if k.arg == "reason")]
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            reasons.append(texts[-1].value if texts else name)
    return reasons


def test_no_test_skips_for_missing_files():
    """The allowed skips: the browser tests without Chromium, the SLURM profile's without the
    SLURM executor plugin, CACTI's without its package (Python < 3.12); CI has all three."""
    skips = [
        (path.name, reason)
        for path in python_files()
        if path.name != "test_ci.py"
        for reason in _skip_reasons(path)
    ]
    allowed = (
        "chromium is not installed (apt-get install -y chromium)",
        "chromium is not installed (apt-get install -y chromium chromium-driver)",
        "the SLURM executor plugin is not installed (pip install -e '.[cluster]')",
        "hwcomponents-cacti is not installed (Python < 3.12)",
    )
    assert skips and all(reason in allowed for _, reason in skips), skips
