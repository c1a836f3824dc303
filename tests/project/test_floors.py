"""The package's floors: the import-linter contracts of pyproject.toml hold, no module imports
itself through others, and docs/contributing/architecture.md draws the contracts' floors."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import networkx as nx

from support import REPO

CONTRACTS = {
    c["id"]: c
    for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}


def test_import_linter_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        found = shutil.which("lint-imports")
        assert found, "import-linter is not installed (pip install -e '.[test]' installs it)"
        lint = Path(found)
    completed = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_no_import_circle():
    """No module imports itself through others (imports inside functions and type-only imports
    count): a circle found here is named with the import lines that close it."""
    graph = grimp.build_graph("zigzag", "stream", cache_dir=None)
    edges = nx.DiGraph(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
    )
    circles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    lines = []
    for circle in circles:
        for importer, imported in edges.subgraph(circle).edges:
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"{importer}:{detail['line_number']}: {detail['line_contents']}")
    assert not circles, "import circles:\n" + "\n".join(lines)


def _drawn_floors(heading: str) -> list[str]:
    """The floors the architecture page draws in the code block after ``heading``: its lines that
    start in the first column, up to the first run of two spaces (the floor's description)."""
    text = (REPO / "docs" / "contributing" / "architecture.md").read_text()
    block = re.search(re.escape(heading) + r".*?```\n(.*?)```", text, re.S)
    assert block, f"architecture.md has no code block after {heading!r}"
    return [
        re.split(r"\s{2,}", line.strip())[0]
        for line in block.group(1).splitlines()
        if line.strip() and not line.startswith(" ")
    ]


def _layers(contract: str) -> list[str]:
    return [" ".join(layer.split()) for layer in CONTRACTS[contract]["layers"]]


def test_architecture_page_draws_the_floors_of_the_contract():
    assert _drawn_floors("# Architecture") == _layers("floors")


def test_architecture_page_draws_the_multicore_floors_of_the_contract():
    assert _drawn_floors("## The multi-core package's floors") == _layers("multicore-floors")


def test_command_line_help_imports_no_heavy_library():
    """``zigzag --help`` builds every command's parser; the commands' implementations, and the
    heavy libraries they use, are imported when a command runs."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "zigzag", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in run.stderr.splitlines()
        if line.startswith("import time:")
    }
    heavy = sorted(
        m
        for m in imported
        if m.split(".")[0]
        in ("pandas", "onnx", "networkx", "yaml", "plotly", "ortools", "tqdm", "moocore", "deap")
    )
    assert not heavy, heavy


def test_the_snakefiles_load_imports_no_figure_library():
    """Every run of the workflow, a no-change rerun included, loads the Snakefile: the modules its
    rules import there (``workflow/rules/*.smk``) import no matplotlib, pandas or plotly."""
    modules = sorted(
        {
            match
            for path in (REPO / "workflow" / "rules").glob("*.smk")
            for match in re.findall(
                r"^(?:from|import) (zigzag[\w.]*)", path.read_text(), re.MULTILINE
            )
        }
    )
    assert len(modules) > 5, modules
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, {', '.join(modules)}; "
            "print(' '.join(m for m in ('matplotlib', 'pandas', 'plotly') if m in sys.modules))",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == [], run.stdout
