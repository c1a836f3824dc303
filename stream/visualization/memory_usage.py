"""Stream's ``stream.visualization.memory_usage``: top-memory usage over time."""

from __future__ import annotations

from zigzag.multicore.plots.charts import memory_usage_png

from stream.visualization.selection import parent_made, schedule_trace, time_window

__all__ = ["plot_memory_usage"]


def plot_memory_usage(
    scme,
    section_start_percent: tuple[int, ...] = (0,),
    percent_shown: tuple[int, ...] = (100,),
    show_dram: bool = False,
    show_human_bytes: bool = True,
    fig_path: str = "outputs/memory_usage.png",
    fig_size: tuple[int, int] = (16, 9),
) -> None:
    """Draw the usage over time of every top memory of ``scme`` (the DRAM too if ``show_dram``)
    into ``fig_path``. The time axis spans from the first section's start to the last section's
    end (percent of the latency), in one piece; sizes are always shown in B/KiB/MiB."""
    window = time_window(scme, section_start_percent, percent_shown)
    memory_usage_png(
        schedule_trace(scme),
        parent_made(fig_path),
        window=window,
        include_offchip=show_dram,
        figsize=fig_size,
    )
