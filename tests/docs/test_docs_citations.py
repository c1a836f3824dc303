"""Code and tests cite pages of docs/, never outside specification files or issue numbers.

`tools/cite_docs.py` rewrites such citations (rerun it after a merge brings new ones); these tests
find any left, and check that every cited docs page, and the section its anchor names, exists.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from support import REPO

_SPEC = importlib.util.spec_from_file_location("cite_docs", REPO / "tools" / "cite_docs.py")
cite_docs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cite_docs)

DOCS_LINK = re.compile(r"\bdocs/[\w/.-]+?\.md(?:#[\w-]+)?")


def github_slug(title: str) -> str:
    """The anchor MyST gives a heading (GitHub's rule: lower case, spaces to hyphens, no punctuation)."""
    return re.sub(r"[^\w\- ]", "", title.lower().replace(" ", "-"))


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks)."""
    found, in_code = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{1,6} ", line):
            found.add(github_slug(line.lstrip("#").strip()))
    return found


def test_no_outside_specification_or_issue_is_cited():
    left = cite_docs.leftovers()
    assert not left, "run: python tools/cite_docs.py\n" + "\n".join(left)


def test_the_rewrite_changes_nothing_more():
    changed = [
        str(path.relative_to(REPO))
        for path in cite_docs.scanned_files()
        if cite_docs.rewrite(
            text := path.read_text(errors="replace"), path.relative_to(REPO).as_posix()
        )
        != text
    ]
    assert not changed, f"run: python tools/cite_docs.py ({changed})"


def test_the_rewrite_of_typical_citations():
    assert (
        cite_docs.rewrite("(spec search.md §A.1)", "zigzag/x.py")
        == "(docs/models/mapping-search.md#spatial-mappings)"
    )
    assert (
        cite_docs.rewrite("clock period (§6)", "zigzag/hardware/imc.py")
        == "clock period (docs/models/imc.md#clock-period)"
    )
    assert (
        cite_docs.rewrite("Benchmark it (issue #14, point 2): x", "benchmarks/b.py")
        == "Benchmark it: x"
    )
    assert (
        cite_docs.rewrite("as the reference does (Q13):", "zigzag/cost/x.py")
        == "as the reference does:"
    )


def test_every_cited_docs_page_and_section_exists():
    links = [
        ("tools/cite_docs.py", link)
        for pages in cite_docs.SECTIONS.values()
        for link in pages.values()
    ]
    for path in [
        *cite_docs.scanned_files(),
        REPO / "README.md",
        *sorted((REPO / "docs").rglob("*.md")),
    ]:
        links += [
            (str(path.relative_to(REPO)), link)
            for link in DOCS_LINK.findall(path.read_text(errors="replace"))
        ]
    missing = []
    for where, link in links:
        page, _, anchor = link.partition("#")
        target = REPO / page
        if not target.is_file() or (anchor and anchor not in anchors(target)):
            missing.append(f"{where}: {link}")
    assert not missing, missing
