"""Multi-core results people can compare: one summary per scheduled run, one table row per
(experiment or variant) x workload, and Pareto fronts per workload over latency, energy and area.

A :class:`RunSummary` is read from a run folder (``summary.json`` and ``schedule_trace.json`` of
``zigzag stream run``/``search`` or the workflow) and the accelerator file it ran on.
:func:`multicore_rows` turns summaries into table rows, with optional parameter columns per row
(what a hardware sweep varied); :func:`mark_pareto` flags each workload's front. The columns are
documented in docs/reference/multicore-results.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zigzag.errors import InputError

#: the summary's energy terms (pJ), as table columns
ENERGY_TERMS = {
    "cn_onchip_energy_pJ": "total_cn_onchip_energy",
    "cn_offchip_link_energy_pJ": "total_cn_offchip_link_energy",
    "cn_offchip_memory_energy_pJ": "total_cn_offchip_memory_energy",
    "eviction_link_energy_pJ": "total_eviction_to_offchip_link_energy",
    "eviction_memory_energy_pJ": "total_eviction_to_offchip_memory_energy",
    "sink_output_link_energy_pJ": "total_sink_layer_output_offchip_link_energy",
    "sink_output_memory_energy_pJ": "total_sink_layer_output_offchip_memory_energy",
    "core_to_core_link_energy_pJ": "total_core_to_core_link_energy",
    "core_to_core_memory_energy_pJ": "total_core_to_core_memory_energy",
}
#: the objectives of the Pareto fronts (all minimised)
PARETO_OBJECTIVES = ("latency_cycles", "energy_pJ", "cores_area")
IDENTITY = ("experiment", "workload", "accelerator", "mapping", "mode", "allocation")


@dataclass(frozen=True)
class RunSummary:
    """What one multi-core schedule gives, ready for the cross-experiment table."""

    experiment: str
    workload: str
    accelerator: str
    mapping: str
    mode: str
    allocation: str  # "fixed" or "searched"
    latency_cycles: float
    energy_pJ: float
    energy_terms: tuple[tuple[str, float], ...]  # (column, pJ) in ENERGY_TERMS order
    cores: int  # compute cores
    cores_area: float  # operational arrays + memories of the compute cores, in the core files' unit
    interconnect_area: float | None  # None: the files give none
    core_utilization: tuple[tuple[int, float], ...]  # (core id, busy cycles / latency), by core id
    dram_read_bits: float
    dram_write_bits: float
    clock_ns: float | None = None


def core_area(core) -> float:
    """Area of one core as its file gives it: the MAC array's units x unit area, plus every memory's area."""
    return float(core.accelerator.operational_array.total_area) + sum(float(m.area) for m in core.accelerator.memories)


def summarize_run(folder: str | Path, accelerator: str | Path, *, experiment: str | None = None,
                  workload: str | Path = "", mapping: str | Path = "", mode: str = "",
                  clock_ns: float | None = None, cwd: str | None = None) -> RunSummary:
    """The :class:`RunSummary` of the run folder ``folder`` scheduled on the ``accelerator`` file."""
    from zigzag.stream.hardware import load_multicore_accelerator
    from zigzag.stream.schedule.trace import load_trace

    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except FileNotFoundError:
        raise InputError(folder / "summary.json", None, "no such run summary; schedule the experiment first") from None
    trace = load_trace(folder / "schedule_trace.json")
    hardware = load_multicore_accelerator(accelerator, cwd)
    compute = hardware.compute_cores
    latency = float(summary["latency"])
    busy = {core.id: 0.0 for core in compute}
    for core, start, end in zip(trace.cn["core"], trace.cn["start"], trace.cn["end"]):
        busy[int(core)] = busy.get(int(core), 0.0) + float(end - start)
    searched = (folder / "front.csv").exists()
    return RunSummary(
        experiment=experiment or folder.name, workload=Path(str(workload)).stem, accelerator=hardware.name,
        mapping=Path(str(mapping)).stem, mode=mode, allocation="searched" if searched else "fixed",
        latency_cycles=latency, energy_pJ=float(summary["energy"]),
        energy_terms=tuple((column, float(summary.get(key, 0.0))) for column, key in ENERGY_TERMS.items()),
        cores=len(compute), cores_area=sum(core_area(core) for core in compute), interconnect_area=None,
        core_utilization=tuple((core, busy[core] / latency if latency else 0.0) for core in sorted(busy)),
        dram_read_bits=float(summary.get("dram_read_bits", 0.0)),
        dram_write_bits=float(summary.get("dram_write_bits", 0.0)),
        clock_ns=clock_ns,
    )


def multicore_rows(summaries: Sequence[RunSummary],
                   parameters: Sequence[Mapping[str, object] | None] | None = None) -> list[dict]:
    """One table row per summary; ``parameters[i]`` (optional) adds row ``i``'s varied parameters
    as columns right after the identity columns (a name may not repeat a figure column)."""
    if parameters is not None and len(parameters) != len(summaries):
        raise InputError(None, "parameters", f"{len(parameters)} parameter sets for {len(summaries)} runs; "
                         "give one (or None) per run")
    rows = []
    for i, run in enumerate(summaries):
        row = {name: getattr(run, name) for name in IDENTITY}
        given = dict((parameters[i] or {}) if parameters is not None else {})
        clash = sorted(set(given) & (set(_FIGURES) | set(IDENTITY)))
        if clash:
            raise InputError(None, f"parameters.{clash[0]}", "is a column of the table already; rename the parameter")
        row.update(given)
        row.update(_figures(run))
        rows.append(row)
    return rows


#: the figure columns of a row, in order (utilisation per core follows, named core<id>_utilization)
_FIGURES = ("cores", "latency_cycles", "latency_s", "energy_pJ", *ENERGY_TERMS, "edp_pJ_cycles", "cores_area",
            "interconnect_area", "mean_core_utilization", "dram_read_bits", "dram_write_bits", "dram_traffic_bits",
            "pareto")


def _figures(run: RunSummary) -> dict:
    utilization = dict(run.core_utilization)
    row = {
        "cores": run.cores, "latency_cycles": run.latency_cycles,
        "latency_s": run.latency_cycles * run.clock_ns * 1e-9 if run.clock_ns else None,
        "energy_pJ": run.energy_pJ, **dict(run.energy_terms), "edp_pJ_cycles": run.energy_pJ * run.latency_cycles,
        "cores_area": run.cores_area, "interconnect_area": run.interconnect_area,
        "mean_core_utilization": float(np.mean(list(utilization.values()))) if utilization else None,
        "dram_read_bits": run.dram_read_bits, "dram_write_bits": run.dram_write_bits,
        "dram_traffic_bits": run.dram_read_bits + run.dram_write_bits,
        "pareto": None,  # set by mark_pareto
    }
    row.update({f"core{core}_utilization": value for core, value in utilization.items()})
    return row


def table_columns(rows: Sequence[Mapping]) -> list[str]:
    """The rows' columns in the order they were made (identity, parameters, figures, per core)."""
    return list(dict.fromkeys(column for row in rows for column in row))


def mark_pareto(rows: list[dict], objectives: Sequence[str] = PARETO_OBJECTIVES, by: str = "workload") -> list[dict]:
    """Set each row's ``pareto``: True when no row of the same workload is no worse on every
    objective and better on one (all minimised; equal rows are all kept); rows missing an
    objective are False."""
    groups: dict[object, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(row.get(by), []).append(i)
    for members in groups.values():
        valid = [i for i in members if all(rows[i].get(o) is not None for o in objectives)]
        values = np.array([[float(rows[i][o]) for o in objectives] for i in valid]).reshape(len(valid), len(objectives))
        no_worse = np.all(values[None, :, :] <= values[:, None, :], axis=2)  # [i, j]: j no worse than i
        better = np.any(values[None, :, :] < values[:, None, :], axis=2)
        dominated = np.any(no_worse & better, axis=1)
        for i in members:
            rows[i]["pareto"] = False
        for i, is_dominated in zip(valid, dominated):
            rows[i]["pareto"] = not bool(is_dominated)
    return rows
