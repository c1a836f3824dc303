"""A schedule as a Chrome trace-event JSON file, for ui.perfetto.dev or chrome://tracing.

One process (the experiment) with one thread per core and per busy link, in the Gantt chart's
order; one complete event (``"ph": "X"``) per CN and per link event; one counter track
(``"ph": "C"``) per on-chip top memory with its usage in KiB. Times are cycles written as the
format's microseconds (1 µs on the viewer's axis = 1 cycle).
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.io.atomic import write_text_atomic
from zigzag.multicore.plots.gantt import Rows, link_event_kinds, link_label
from zigzag.multicore.schedule.trace import ScheduleTrace

PID = 1


def _meta(name: str, tid: int, args: dict) -> dict:
    return {"ph": "M", "name": name, "pid": PID, "tid": tid, "ts": 0, "args": args}


def trace_events(trace: ScheduleTrace) -> dict:
    """The trace-event document (``traceEvents`` plus ``displayTimeUnit`` and run facts)."""
    rows = Rows(trace)
    events = [
        _meta("process_name", 0, {"name": trace.name}),
        _meta("process_sort_index", 0, {"sort_index": 0}),
    ]
    for tid, label in enumerate(rows.labels, start=1):
        events.append(_meta("thread_name", tid, {"name": label}))
        events.append(_meta("thread_sort_index", tid, {"sort_index": tid}))
    cn = trace.cn
    for n in range(trace.nb_cns):
        layer = int(cn["layer"][n])
        start, end = float(cn["start"][n]), float(cn["end"][n])
        events.append(
            {
                "ph": "X",
                "name": f"{trace.layer_name(layer)} (layer {layer}, sub {int(cn['sub'][n])})",
                "cat": "compute",
                "pid": PID,
                "tid": rows.core_row[int(cn["core"][n])] + 1,
                "ts": start,
                "dur": end - start,
                "args": {
                    "cn": n,
                    "layer": layer,
                    "sub_id": int(cn["sub"][n]),
                    "core": int(cn["core"][n]),
                    "runtime": end - start,
                    "onchip_energy_pJ": float(cn["onchip_energy"][n]),
                    "offchip_energy_pJ": float(cn["offchip_energy"][n]),
                },
            }
        )
    kinds = link_event_kinds(trace)
    for i in rows.links:
        link = trace.links[i]
        for kind, start, end, activity, tensors in zip(
            kinds[i], link.start, link.end, link.activity, link.tensors
        ):
            events.append(
                {
                    "ph": "X",
                    "name": f"{kind} ({', '.join(map(str, tensors))})",
                    "cat": "block" if kind == "DRAM-link block" else "transfer",
                    "pid": PID,
                    "tid": rows.link_row[i] + 1,
                    "ts": float(start),
                    "dur": float(end - start),
                    "args": {
                        "kind": kind,
                        "link": link_label(link),
                        "tensors": list(tensors),
                        "activity": int(activity),
                        "bandwidth": link.bandwidth,
                    },
                }
            )
    for mem in trace.memories:
        if mem.offchip:
            continue
        name = f"{mem.label} usage (KiB)"
        for t, bits in zip(mem.time, mem.bits):
            events.append(
                {
                    "ph": "C",
                    "name": name,
                    "pid": PID,
                    "tid": 0,
                    "ts": float(t),
                    "args": {"KiB": round(int(bits) / 8192, 3)},
                }
            )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "experiment": trace.name,
            "time_unit": "cycles (shown as microseconds)",
            "latency_cycles": trace.latency,
            "energy_pJ": trace.energy,
        },
    }


def perfetto_json(trace: ScheduleTrace, path: str | Path) -> Path:
    """Write the trace-event JSON of ``trace`` to ``path``."""
    write_text_atomic(Path(path), json.dumps(trace_events(trace), separators=(",", ":")))
    return Path(path)
