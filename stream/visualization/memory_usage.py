"""Stream's ``stream.visualization.memory_usage``: top-memory usage over time."""

from __future__ import annotations

from zigzag.multicore.evaluation.views import MemoryManagerView
from zigzag.multicore.plots.selection import memory_png

__all__ = ["plot_memory_usage"]


def plot_memory_usage(scme, *args, **kwargs) -> None:
    """Draw the usage over time of every top memory of a schedule. Two call forms:

    * late 2024: ``plot_memory_usage(scme, section_start_percent=(0,), percent_shown=(100,),
      show_dram=False, show_human_bytes=True, fig_path="outputs/memory_usage.png",
      fig_size=(16, 9))``: the time axis spans from the first section's start to the last
      section's end (percent of the latency), in one piece;
    * 2023: ``plot_memory_usage(scme.accelerator.memory_manager, show_dram=False,
      show_human_bytes=True, fig_path="outputs/memory_usage.png")``: the whole schedule.

    The DRAM is drawn too if ``show_dram``; sizes are always shown in B/KiB/MiB."""
    if isinstance(scme, MemoryManagerView):
        _from_memory_manager(scme, *args, **kwargs)
    else:
        _from_schedule(scme, *args, **kwargs)


def _from_schedule(
    scme,
    section_start_percent: tuple[int, ...] = (0,),
    percent_shown: tuple[int, ...] = (100,),
    show_dram: bool = False,
    show_human_bytes: bool = True,
    fig_path: str = "outputs/memory_usage.png",
    fig_size: tuple[int, int] = (16, 9),
) -> None:
    memory_png(scme, section_start_percent, percent_shown, show_dram, fig_path, fig_size)


def _from_memory_manager(
    memory_manager: MemoryManagerView,
    show_dram: bool = False,
    show_human_bytes: bool = True,
    fig_path: str = "outputs/memory_usage.png",
) -> None:
    memory_png(memory_manager.schedule, (0,), (100,), show_dram, fig_path)
