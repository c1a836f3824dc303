"""Stream's pictures of a schedule (timeline, memory usage, perfetto trace), drawn by
:mod:`zigzag.multicore.plots`; see docs/compat/stream-users.md for how they differ from Stream's."""
