"""Pictures of Stream runs, drawn from a run's output folder.

* :mod:`.gantt`: the schedule as an interactive Gantt chart (plotly HTML, offline) and a static one;
* :mod:`.charts`: memory usage over time, energy breakdown bars, the allocation search's front;
* :mod:`.perfetto`: the schedule as a Chrome trace-event JSON for ui.perfetto.dev.

:func:`plot_run` draws all that applies to one run folder (``schedule_trace.json`` and
``summary.json`` from ``zigzag multicore run``/``search``, ``front.csv`` from a search).
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.plots.charts import (
    energy_breakdown_png,
    memory_usage_png,
    pareto_front_png,
    read_front,
)
from zigzag.multicore.plots.gantt import gantt_html, gantt_png
from zigzag.multicore.plots.perfetto import perfetto_json
from zigzag.multicore.schedule.trace import load_trace

#: the pictures of one run, by file name
RUN_PICTURES = ("gantt.html", "gantt.{fmt}", "memory.{fmt}", "energy.{fmt}", "perfetto.json")

__all__ = [
    "energy_breakdown_png",
    "gantt_html",
    "gantt_png",
    "memory_usage_png",
    "pareto_front_png",
    "perfetto_json",
    "plot_front",
    "plot_run",
    "read_summary",
]


def read_summary(path: str | Path) -> dict:
    """A run's ``summary.json`` (or the one in a run folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(
            path, None, "no run summary here; run 'zigzag multicore run --output DIR' first"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"not valid JSON ({exc.msg})") from None


def plot_run(
    run: str | Path,
    output: str | Path | None = None,
    fmt: str = "png",
    name: str | None = None,
    pareto: bool = True,
    plotly_js: str | Path | None = None,
) -> list[Path]:
    """Draw every picture of the run folder ``run`` into ``output`` (default ``run/plots``).

    Writes ``gantt.html``, ``gantt.<fmt>``, ``memory.<fmt>``, ``energy.<fmt>``, ``perfetto.json``,
    and ``pareto.<fmt>`` when the folder holds a search's ``front.csv`` (unless ``pareto`` is
    False). ``plotly_js``: the shared plotly.min.js the Gantt page loads (default: beside it).
    Returns the paths written.
    """
    run = Path(run)
    out = Path(output) if output is not None else run / "plots"
    out.mkdir(parents=True, exist_ok=True)
    trace = load_trace(run)
    label = name or trace.name
    if name:
        trace = type(trace)(**{**trace.__dict__, "name": name})
    summary = read_summary(run)
    written = [
        gantt_html(trace, out / "gantt.html", plotly_js=plotly_js),
        gantt_png(trace, out / f"gantt.{fmt}"),
        memory_usage_png(trace, out / f"memory.{fmt}"),
        energy_breakdown_png({label: summary}, out / f"energy.{fmt}"),
        perfetto_json(trace, out / "perfetto.json"),
    ]
    if pareto and (run / "front.csv").exists():
        written.append(plot_front(run, out / f"pareto.{fmt}", label))
    return written


def plot_front(run: str | Path, path: str | Path, name: str | None = None) -> Path:
    """The front of the search folder ``run`` (``front.csv``), its chosen point from ``summary.json``."""
    run = Path(run)
    summary = read_summary(run)
    search = summary.get("search") or {}
    chosen = (search["energy"], search["latency"]) if {"energy", "latency"} <= set(search) else None
    return pareto_front_png(
        read_front(run / "front.csv"),
        path,
        chosen,
        title=f"{name or run.name}: allocation search front",
    )
