"""A schedule as plain data for pictures: ``schedule_trace.json`` in a run's output folder.

The trace holds what the pictures need and nothing of the scheduler's internals: per CN its
layer (and layer name), sub id, core, start, end and energies; the dependency edges; every
link with its events (transfers and DRAM-link blocks); every transfer; every top memory with
its capacity and usage timeline; the totals. Valid JSON: an infinite link bandwidth is written
``null``. Columns are lists (one entry per CN, edge, ...),
so the file stays small and loads without the package.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic

TRACE_FILE = "schedule_trace.json"
FORMAT = "zigzag-stream-schedule-trace/1"

#: transfer kinds -> what the pictures call them
TRANSFER_KINDS = {
    "offchip_to_core": "off-chip to core",
    "core_to_core": "core to core",
    "within_core": "within a core",
    "eviction_writeback": "eviction",
    "sink_writeback": "sink (final output)",
}


@dataclass(frozen=True)
class LinkTrace:
    """One link and its events (kind ``transfer`` or ``block``)."""

    label: str
    bandwidth: float
    offchip: bool
    kind: list[str]
    start: np.ndarray
    end: np.ndarray
    activity: np.ndarray
    tensors: list[list[int]]


@dataclass(frozen=True)
class MemoryTrace:
    """One top memory: capacity (bits), the cores using it, and its usage (bits) over time."""

    label: str
    capacity: float
    cores: list[int]
    offchip: bool
    time: np.ndarray
    bits: np.ndarray
    # what the stored bits hold over time: role -> bits at each time of ``role_time``
    role_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    role_bits: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def peak(self) -> int:
        return int(self.bits.max()) if len(self.bits) else 0


@dataclass(frozen=True)
class ScheduleTrace:
    """Everything the schedule pictures show, as arrays."""

    name: str
    latency: float
    energy: float
    totals: dict[str, float]
    cores: list[int]  # compute cores, off-chip core excluded
    offchip_core: int
    layer_names: dict[int, str]
    cn: dict[str, np.ndarray]  # layer, sub, core, start, end, onchip_energy, offchip_energy
    edges: dict[str, np.ndarray]  # src, dst, bits
    links: list[LinkTrace]
    transfers: dict[str, np.ndarray | list]  # kind, tensor, sender, receiver, start, end, energies
    memories: list[MemoryTrace]

    @property
    def nb_cns(self) -> int:
        return len(self.cn["layer"])

    def layer_name(self, layer: int) -> str:
        return self.layer_names.get(int(layer), f"layer {int(layer)}")


def trace_of(result) -> dict:
    """The JSON-ready trace of one schedule (a :class:`~zigzag.multicore.schedule.result.ScheduleResult`)."""
    p = result.problem
    hw = p.hardware
    names = dict(getattr(p, "layer_names", None) or {})
    links = []
    for link, events in zip(hw.links, result.link_events):
        links.append(
            {
                "label": link.label,
                "bandwidth": None if math.isinf(link.bandwidth) else float(link.bandwidth),
                "offchip": str(hw.offchip_core) in (link.sender, link.receiver),
                "kind": [e.kind for e in events],
                "start": [float(e.start) for e in events],
                "end": [float(e.end) for e in events],
                "activity": [int(e.activity) for e in events],
                "tensors": [list(map(int, e.tensors)) for e in events],
            }
        )
    memories = []
    logs = result.memory_log or (None,) * len(hw.memories)
    for mem, timeline, log in zip(hw.memories, result.timelines, logs):
        memories.append(
            {
                "label": mem.label,
                "capacity": float(mem.capacity),
                "cores": sorted(mem.cores),
                "offchip": hw.offchip_core in mem.cores,
                "time": [int(t) for t, _ in timeline],
                "bits": [int(b) for _, b in timeline],
                **(_usage_by_role(result.problem, log) if log is not None else {}),
            }
        )
    # pictures list cores and memories by core id (the scheduler's own order follows the core graph)
    memories.sort(key=lambda m: (m["offchip"], m["cores"]))
    columns = (
        "kind",
        "cn",
        "tensor",
        "sender",
        "receiver",
        "start",
        "end",
        "link_energy",
        "memory_energy",
    )
    transfers = {c: [getattr(t, c) for t in result.transfers] for c in columns}
    return {
        "format": FORMAT,
        "name": p.name,
        "latency": float(result.latency),
        "energy": float(result.energy),
        "totals": result.totals.as_dict(),
        "cores": sorted(int(c) for c in hw.cores if c != hw.offchip_core),
        "offchip_core": int(hw.offchip_core),
        "layer_names": {str(k): v for k, v in sorted(names.items())},
        "cn": {
            "layer": p.layer.tolist(),
            "sub": p.sub.tolist(),
            "core": p.core.tolist(),
            "start": np.asarray(result.start, dtype=float).tolist(),
            "end": np.asarray(result.end, dtype=float).tolist(),
            "onchip_energy": p.onchip_energy.tolist(),
            "offchip_energy": p.offchip_energy.tolist(),
        },
        "edges": {
            "src": p.edge_src.tolist(),
            "dst": p.edge_dst.tolist(),
            "bits": p.edge_bits.tolist(),
        },
        "links": links,
        "transfers": transfers,
        "memories": memories,
    }


def _usage_by_role(problem, log) -> dict:
    """A memory's stored bits over time split by what they hold (``problem.tensor_role``:
    weights, kv_cache, activations): ``role_time`` and, per role, the bits at each of its times."""
    roles = ("weights", "kv_cache", "activations")
    level = dict.fromkeys(roles, 0)
    times, series = [], {role: [] for role in roles}
    for t, tensor, bits in sorted(log, key=lambda event: event[0]):  # stable: same-time order kept
        level[problem.tensor_role(tensor)] += bits
        if times and times[-1] == int(t):
            for role in roles:
                series[role][-1] = level[role]
        else:
            times.append(int(t))
            for role in roles:
                series[role].append(level[role])
    return {"role_time": times, "role_bits": series}


def write_trace(result, folder: str | Path) -> Path:
    """Write ``schedule_trace.json`` of ``result`` into ``folder``; return its path."""
    path = Path(folder) / TRACE_FILE
    write_text_atomic(path, json.dumps(trace_of(result), separators=(",", ":"), allow_nan=False))
    return path


def load_trace(path: str | Path) -> ScheduleTrace:
    """Read a trace file (or the one in a run folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / TRACE_FILE
    if not path.exists():
        raise InputError(
            path,
            None,
            "no schedule trace here; run 'zigzag multicore run --output DIR' (or search) first",
        )
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(
            path, None, f"not valid JSON ({exc.msg}); write it again with 'zigzag multicore run'"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(
            path, "format", f"expected {FORMAT!r}; write it again with 'zigzag multicore run'"
        )
    return _trace_of_data(data)


def trace_from_result(result) -> ScheduleTrace:
    """The trace of ``result`` in memory (as :func:`load_trace` would read it back)."""
    return _trace_of_data(json.loads(json.dumps(trace_of(result))))


def _trace_of_data(data: dict) -> ScheduleTrace:
    arr = {
        k: np.asarray(
            v, dtype=float if k in ("start", "end", "onchip_energy", "offchip_energy") else np.int64
        )
        for k, v in data["cn"].items()
    }
    links = [
        LinkTrace(
            lk["label"],
            math.inf if lk["bandwidth"] is None else lk["bandwidth"],
            lk["offchip"],
            lk["kind"],
            np.asarray(lk["start"], dtype=float),
            np.asarray(lk["end"], dtype=float),
            np.asarray(lk["activity"], dtype=np.int64),
            lk["tensors"],
        )
        for lk in data["links"]
    ]
    memories = [
        MemoryTrace(
            m["label"],
            m["capacity"],
            m["cores"],
            m["offchip"],
            np.asarray(m["time"], dtype=float),
            np.asarray(m["bits"], dtype=np.int64),
            np.asarray(m.get("role_time", []), dtype=float),
            {role: np.asarray(b, dtype=np.int64) for role, b in m.get("role_bits", {}).items()},
        )
        for m in data["memories"]
    ]
    transfers = {
        k: (v if k == "kind" else np.asarray(v, dtype=float)) for k, v in data["transfers"].items()
    }
    return ScheduleTrace(
        name=data["name"],
        latency=data["latency"],
        energy=data["energy"],
        totals=data["totals"],
        cores=data["cores"],
        offchip_core=data["offchip_core"],
        layer_names={int(k): v for k, v in data["layer_names"].items()},
        cn=arr,
        edges={k: np.asarray(v, dtype=np.int64) for k, v in data["edges"].items()},
        links=links,
        transfers=transfers,
        memories=memories,
    )
