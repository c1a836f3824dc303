"""The trace the pictures draw, from a schedule object (optionally cut to some layers), and the
time window of Stream's picture sections."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.plots.charts import memory_usage_png
from zigzag.multicore.plots.gantt import gantt_png
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.trace import ScheduleTrace, trace_from_result


def schedule_trace(
    scme, layer_ids: Sequence[int] | None = None, links: bool = True
) -> ScheduleTrace:
    """The trace of ``scme``; only the CNs of ``layer_ids`` (and edges between them) if given,
    no link rows unless ``links``."""
    if not isinstance(scme, ScheduleResult):
        raise InputError(
            None,
            "scme",
            f"expected the schedule returned by optimize_allocation_ga, got {type(scme).__name__}",
        )
    trace = trace_from_result(scme)
    if layer_ids:
        keep = np.isin(trace.cn["layer"], np.asarray(list(layer_ids)))
        if not keep.any():
            raise InputError(
                None, "layer_ids", f"no CN of layers {list(layer_ids)} in the schedule"
            )
        new_index = np.cumsum(keep) - 1
        src, dst = trace.edges["src"], trace.edges["dst"]
        both = keep[src] & keep[dst]
        edges = {
            "src": new_index[src[both]],
            "dst": new_index[dst[both]],
            "bits": trace.edges["bits"][both],
        }
        trace = replace(trace, cn={k: v[keep] for k, v in trace.cn.items()}, edges=edges)
    return trace if links else replace(trace, links=[])


def parent_made(path: str | Path) -> Path:
    """``path`` with its folder created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def time_window(scme, section_start_percent, percent_shown) -> tuple[float, float]:
    """The span (cycles) from the first section's start to the last section's end, sections given
    in percent of the latency as Stream's pictures take them."""
    if len(section_start_percent) != len(percent_shown) or not section_start_percent:
        raise InputError(
            None,
            "section_start_percent",
            "give as many section starts as percent_shown values (at least one)",
        )
    latency = float(scme.latency)
    return (
        min(section_start_percent) / 100 * latency,
        max(s + p for s, p in zip(section_start_percent, percent_shown)) / 100 * latency,
    )


def schedule_png(
    scme,
    section_start_percent: Sequence[int],
    percent_shown: Sequence[int],
    plot_data_transfer: bool,
    fig_path: str | Path,
) -> Path:
    """The static schedule picture of ``scme`` over Stream's sections (link rows if
    ``plot_data_transfer``) at ``fig_path``."""
    window = time_window(scme, section_start_percent, percent_shown)
    return gantt_png(
        schedule_trace(scme, links=plot_data_transfer), parent_made(fig_path), window=window
    )


def memory_png(
    scme,
    section_start_percent: Sequence[int],
    percent_shown: Sequence[int],
    show_dram: bool,
    fig_path: str | Path,
    fig_size: tuple[float, float] | None = None,
) -> Path:
    """The top-memory usage picture of ``scme`` over Stream's sections at ``fig_path``."""
    window = time_window(scme, section_start_percent, percent_shown)
    return memory_usage_png(
        schedule_trace(scme),
        parent_made(fig_path),
        window=window,
        include_offchip=show_dram,
        figsize=fig_size,
    )
