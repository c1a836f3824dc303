"""Stream's ``stream.visualization.schedule``: the schedule's interactive timeline."""

from __future__ import annotations

from zigzag.multicore.evaluation.views import ScheduledWorkload
from zigzag.multicore.plots.gantt import gantt_html
from zigzag.multicore.plots.selection import parent_made, schedule_png, schedule_trace

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


def plot_timeline_brokenaxes(scme, *args, **kwargs) -> None:
    """Draw the schedule as a static picture: one continuous time axis from the first section's
    start to the last section's end, link rows if ``plot_data_transfer`` (``draw_dependencies``
    is accepted; the static picture has no arrows, the HTML timeline does). Two call forms:

    * ``plot_timeline_brokenaxes(scme, draw_dependencies=True, section_start_percent=(0, 50, 95),
      percent_shown=(5, 5, 5), plot_data_transfer=False, fig_path="outputs/schedule_plot.png")``;
    * Stream's early 2023 form, ``plot_timeline_brokenaxes(scme.workload, scme.accelerator,
      draw_dependencies, ...)`` (same arguments after the accelerator)."""
    if isinstance(
        scme, ScheduledWorkload
    ):  # (workload, accelerator, ...): the accelerator is known
        args = args[1:]
        kwargs.pop("accelerator", None)
        scme = scme.schedule
    _draw(scme, *args, **kwargs)


def _draw(
    scme,
    draw_dependencies: bool = True,
    section_start_percent: tuple[int, ...] = (0, 50, 95),
    percent_shown: tuple[int, ...] = (5, 5, 5),
    plot_data_transfer: bool = False,
    fig_path: str = "outputs/schedule_plot.png",
) -> None:
    schedule_png(scme, section_start_percent, percent_shown, plot_data_transfer, fig_path)
