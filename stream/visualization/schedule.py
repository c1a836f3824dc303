"""Stream's ``stream.visualization.schedule``: the schedule's interactive timeline."""

from __future__ import annotations

from zigzag.multicore.plots.gantt import gantt_html, gantt_png

from stream.visualization.selection import parent_made, schedule_trace, time_window

__all__ = ["plot_timeline_brokenaxes", "visualize_timeline_plotly"]


def visualize_timeline_plotly(
    scme,
    draw_dependencies: bool = False,
    draw_communication: bool = True,
    fig_path: str = "outputs/schedule.html",
    layer_ids: list[int] | None = None,
    cost_lut=None,
) -> None:
    """Write the schedule of ``scme`` as an interactive HTML timeline (one row per core, then
    per busy link if ``draw_communication``; dependency arrows shown if ``draw_dependencies``;
    only ``layer_ids`` if given). ``cost_lut`` is accepted; the hover text comes from the schedule."""
    trace = schedule_trace(scme, layer_ids, links=draw_communication)
    gantt_html(trace, parent_made(fig_path), show_dependencies=draw_dependencies)


def plot_timeline_brokenaxes(
    scme,
    draw_dependencies: bool = True,
    section_start_percent: tuple[int, ...] = (0, 50, 95),
    percent_shown: tuple[int, ...] = (5, 5, 5),
    plot_data_transfer: bool = False,
    fig_path: str = "outputs/schedule_plot.png",
) -> None:
    """Draw the schedule of ``scme`` as a static picture: one continuous time axis from the first
    section's start to the last section's end, link rows if ``plot_data_transfer``.
    ``draw_dependencies`` is accepted; the static picture has no arrows (the HTML timeline does)."""
    window = time_window(scme, section_start_percent, percent_shown)
    gantt_png(schedule_trace(scme, links=plot_data_transfer), parent_made(fig_path), window=window)
