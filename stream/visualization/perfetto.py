"""Stream's ``stream.visualization.perfetto``: the schedule as a trace for ui.perfetto.dev."""

from __future__ import annotations

import json
from dataclasses import replace

from zigzag.io.atomic import write_text_atomic
from zigzag.multicore.plots.perfetto import trace_events
from zigzag.multicore.plots.selection import parent_made, schedule_trace

__all__ = ["convert_scme_to_perfetto_json"]


def convert_scme_to_perfetto_json(
    scme,
    cost_lut,
    json_path: str,
    layer_ids: list[int] | None = None,
    process_name: str = "scme",
    unknown_string: str = "Unknown",
) -> str:
    """Write the trace-event JSON of ``scme`` (CNs per core, link events per link, memory usage
    counters; only ``layer_ids`` if given) to ``json_path`` and return it. ``cost_lut`` and
    ``unknown_string`` are accepted; every event here has a name."""
    trace = replace(schedule_trace(scme, layer_ids), name=process_name)
    text = json.dumps(trace_events(trace), indent=1)
    write_text_atomic(parent_made(json_path), text)
    return text
