"""Assembling the report page: the template, style and script of ``assets/`` with the folder's
data inlined, and one copy of plotly.js per folder, shared by the page and the Gantt charts."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic
from zigzag.plots.plotlyjs import PLOTLY_FILE, PLOTLY_PACKED, ensure_plotly, ensure_plotly_packed
from zigzag.report.gather import check_folder, folder_kind, gather

REPORT_FILE = "report.html"
#: the page's script, in order: data, formats, tabs and table; the plot views; why, and the start
SCRIPTS = ("report.js", "views.js", "why.js")


def _asset(name: str) -> str:
    return resources.files("zigzag.report").joinpath("assets", name).read_text(encoding="utf-8")


def render(data: dict, plotly_src: str = PLOTLY_FILE) -> str:
    """The page's HTML for ``data`` (from :func:`zigzag.report.gather.gather`)."""
    payload = json.dumps(data, separators=(",", ":"), default=str, allow_nan=False).replace(
        "</", "<\\/"
    )
    page = _asset("template.html")
    script = "".join(_asset(name) for name in SCRIPTS)
    # the data last, so that nothing in it is taken for a placeholder
    for key, value in (
        ("STYLE", _asset("report.css")),
        ("SCRIPT", script),
        ("PLOTLY", _escape(plotly_src)),
        ("TITLE", _escape(data["title"])),
        ("DATA", payload),
    ):
        page = page.replace(f"%%{key}%%", value)
    return page


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def write_report(folder: str | Path, *, links: list[dict] | None = None) -> Path:
    """Write ``<folder>/report.html`` (and plotly.js beside it: ``plotly.min.js`` in a folder of
    multi-core runs, whose Gantt pages load it too, else packed as ``plotly.gz.js``) for the
    results in ``folder``; ``links``: other pages to link from it. Returns the page's path."""
    folder = Path(folder)
    data = gather(folder)
    data["links"] = (links or []) + data["links"]
    target = folder / REPORT_FILE
    if data["kind"] == "multicore":
        ensure_plotly(folder)
        script = PLOTLY_FILE
    else:
        ensure_plotly_packed(folder)
        script = PLOTLY_PACKED
    write_text_atomic(target, render(data, script))
    return target


def write_reports(root: str | Path) -> list[Path]:
    """A report for ``root`` and for each results folder below it (``stream/``,
    ``hardware_sweeps/<name>/``); the root's page links to the others. Returns the pages written."""
    root = Path(root)
    check_folder(root)
    children = [
        p
        for p in [root / "multicore", *sorted((root / "hardware_sweeps").glob("*"))]
        if p.is_dir() and folder_kind(p)
    ]
    pages = [write_report(child) for child in children]
    links = [
        {
            "text": f"report of {page.parent.relative_to(root).as_posix()}",
            "href": page.relative_to(root).as_posix(),
        }
        for page in pages
    ]
    if folder_kind(root):
        pages.insert(0, write_report(root, links=links))
    elif pages:
        target = root / REPORT_FILE
        write_text_atomic(target, _index(root, links))
        pages.insert(0, target)
    else:
        raise InputError(
            str(root),
            None,
            "no results here (no experiments.csv, variants.csv or multicore.csv, "
            "in it or in stream/ or hardware_sweeps/*/); give the folder the workflow, "
            "zigzag sweep --output or zigzag multicore run --output wrote",
        )
    return pages


def _index(root: Path, links: list[dict]) -> str:
    items = "".join(
        f'<li><a href="{_escape(link["href"])}">{_escape(link["text"])}</a></li>' for link in links
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Reports in {_escape(root.name)}</title>"
        f"<style>{_asset('report.css')}</style></head><body><header><h1>Reports in {_escape(root.name)}</h1>"
        f"</header><main><ul>{items}</ul></main></body></html>\n"
    )
