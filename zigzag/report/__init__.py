"""The interactive HTML report of a results folder: one offline page per folder.

:func:`write_report` reads a folder of results (the workflow's experiments, a hardware sweep or
guided search, the multi-core experiments or a multi-core sweep; :mod:`zigzag.report.gather`),
and writes ``report.html`` with its data, the page's script and style (shipped in
``zigzag/report/assets``), beside one shared copy of plotly.js: ``plotly.min.js`` in a folder of
multi-core runs (its Gantt charts load it too), elsewhere ``plotly.gz.js``, the same script packed
(gzip, base64) and unpacked by the browser. :func:`write_reports` does so for a results tree: the
folder itself and its ``stream/`` and ``hardware_sweeps/<name>/`` sub-folders.
"""

from zigzag.report.page import PLOTLY_FILE, ensure_plotly, write_report, write_reports

__all__ = ["PLOTLY_FILE", "ensure_plotly", "write_report", "write_reports"]
