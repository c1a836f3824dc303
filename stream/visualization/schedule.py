"""Stream's ``stream.visualization.schedule``: the schedule's interactive timeline."""

from __future__ import annotations

from zigzag.stream.plots.gantt import gantt_html

from stream.visualization.selection import parent_made, schedule_trace

__all__ = ["visualize_timeline_plotly"]


def visualize_timeline_plotly(scme, draw_dependencies: bool = False, draw_communication: bool = True,
                              fig_path: str = "outputs/schedule.html", layer_ids: list[int] | None = None,
                              cost_lut=None) -> None:
    """Write the schedule of ``scme`` as an interactive HTML timeline (one row per core, then
    per busy link if ``draw_communication``; dependency arrows shown if ``draw_dependencies``;
    only ``layer_ids`` if given). ``cost_lut`` is accepted; the hover text comes from the schedule."""
    trace = schedule_trace(scme, layer_ids, links=draw_communication)
    gantt_html(trace, parent_made(fig_path), show_dependencies=draw_dependencies)
