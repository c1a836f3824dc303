"""One copy of plotly.js per results folder, shared by every interactive page in it (the HTML
report, the Gantt charts): a page refers to it by a relative path, so it works offline and
weighs only its own data."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: the shared script's file name
PLOTLY_FILE = "plotly.min.js"


def ensure_plotly(target: str | Path) -> Path:
    """The file ``target`` (a ``plotly.min.js`` path, or a folder to put it in), copied from the
    installed plotly package unless an identical copy is there already."""
    import plotly

    target = Path(target)
    if target.suffix != ".js":
        target = target / PLOTLY_FILE
    source = Path(plotly.__file__).parent / "package_data" / PLOTLY_FILE
    if not target.exists() or target.stat().st_size != source.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # parallel jobs may write it at once
        shutil.copyfile(source, temporary)
        temporary.replace(target)
    return target


def script_src(page: str | Path, script: str | Path) -> str:
    """The ``src`` of ``script`` as seen from the HTML file ``page`` (a relative, forward-slash path)."""
    return Path(os.path.relpath(Path(script).resolve(), Path(page).resolve().parent)).as_posix()
