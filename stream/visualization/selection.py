"""The trace the pictures draw (:mod:`zigzag.multicore.plots.selection`)."""

from zigzag.multicore.plots.selection import parent_made, schedule_trace, time_window

__all__ = ["parent_made", "schedule_trace", "time_window"]
