"""One copy of plotly.js per results folder, shared by every interactive page in it (the HTML
report, the Gantt charts): a page refers to it by a relative path, so it works offline and
weighs only its own data. A folder whose only page is the report gets it packed
(``plotly.gz.js``: gzip, base64, unpacked by the browser), a third of the size."""

from __future__ import annotations

import base64
import gzip
import os
import shutil
from pathlib import Path

#: the shared script's file name
PLOTLY_FILE = "plotly.min.js"
#: the packed script's file name: it defines ``Plotly``, then fires ``plotly-ready`` on ``document``
PLOTLY_PACKED = "plotly.gz.js"
_UNPACK = """(function () {
  function ready() { document.dispatchEvent(new Event("plotly-ready")); }
  if (typeof DecompressionStream === "undefined") {
    window.plotlyUnpackError = "this browser cannot unpack plotly.gz.js (it needs DecompressionStream)";
    ready();
    return;
  }
  var text = atob("%s"), bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
    .then(function (code) { (0, eval)(code); ready(); })
    .catch(function (error) { window.plotlyUnpackError = String(error); ready(); });
})();
"""


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
        temporary = target.with_name(
            f".{target.name}.{os.getpid()}.tmp"
        )  # parallel jobs may write it at once
        shutil.copyfile(source, temporary)
        temporary.replace(target)
    return target


def ensure_plotly_packed(folder: str | Path) -> Path:
    """``folder/plotly.gz.js``: the installed plotly.js, gzip-compressed and base64-encoded in a
    script that unpacks it in the browser; written unless an identical copy is there already."""
    import plotly

    target = Path(folder) / PLOTLY_PACKED
    source = (Path(plotly.__file__).parent / "package_data" / PLOTLY_FILE).read_bytes()
    packed = base64.b64encode(gzip.compress(source, compresslevel=9, mtime=0)).decode("ascii")
    text = _UNPACK % packed
    if not target.exists() or target.stat().st_size != len(text):
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="ascii")
        temporary.replace(target)
    return target


def script_src(page: str | Path, script: str | Path) -> str:
    """The ``src`` of ``script`` as seen from the HTML file ``page`` (a relative, forward-slash path)."""
    return Path(os.path.relpath(Path(script).resolve(), Path(page).resolve().parent)).as_posix()
