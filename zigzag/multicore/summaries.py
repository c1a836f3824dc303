"""Multi-core results people can compare: one summary per scheduled run, one table row per
(experiment or variant) x workload, and Pareto fronts per workload over latency, energy and area.

A :class:`RunSummary` is read from a run folder (``summary.json`` and ``schedule_trace.json`` of
``zigzag multicore run``/``search`` or the workflow) and the accelerator file it ran on, or made from
a schedule in memory (a sweep's point); both give the same figures.
:func:`multicore_rows` turns summaries into table rows, with optional parameter columns per row
(what a hardware sweep varied); :func:`mark_pareto` flags each workload's front. The columns are
documented in docs/reference/multicore-results.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zigzag.cost.array import TO_UM2, accelerator_area_um2
from zigzag.errors import InputError
from zigzag.multiobjective.pareto import front_indices
from zigzag.multicore.roles import compute_core_ids, core_labels
from zigzag.multicore.schedule.trace import load_trace
from zigzag.multicore.schedule.tokens import TABLE_COLUMNS as TOKEN_COLUMNS
from zigzag.multicore.schedule.tokens import token_columns

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
PARETO_OBJECTIVES = ("latency_cycles", "energy_pJ", "area_mm2")
IDENTITY = ("experiment", "workload", "accelerator", "mapping", "mode", "allocation")
#: the DRAM traffic columns (bits), from ``ScheduleResult.dram_traffic``
DRAM_COLUMNS = (
    "dram_moved_bits",
    "dram_streamed_bits",
    "dram_read_bits",
    "dram_write_bits",
    "dram_traffic_bits",
)


@dataclass(frozen=True)
class RunSummary:
    """What one multi-core schedule gives, ready for the tables (workflow and sweeps alike)."""

    experiment: str
    workload: str
    accelerator: str
    mapping: str
    mode: str
    allocation: str  # "fixed" or "searched"
    latency_cycles: float
    energy_pJ: float
    energy_terms: tuple[tuple[str, float], ...]  # (column, pJ) in ENERGY_TERMS order
    compute_cores: int  # cores carrying the MAC work (not pooling, SIMD or DRAM)
    cores_area_um2: float | None  # every core but the DRAM, as `zigzag run` gives each core file
    interconnect_area_um2: (
        float  # links and routers, as the multi-core file gives them (0 by default)
    )
    #: (column label, busy cycles, is a compute core) per core but the DRAM, by core id
    core_busy: tuple[tuple[str, float, bool], ...]
    dram: tuple[tuple[str, float], ...]  # (column, bits) in DRAM_COLUMNS order
    cns: int = 0
    clock_ghz: float | None = None
    #: a transformer step's per-token columns ((column, value), ...; ``zigzag.multicore.schedule.tokens.token_columns``)
    tokens: tuple[tuple[str, Any], ...] = ()
    #: bits the busiest DRAM link moves over what it can carry in the schedule (above 1: not reachable)
    dram_link_demand: float | None = None
    latency_model: str = "zigzag"


def core_area(core) -> float | None:
    """Area of one core in µm², as `zigzag run` gives it for the core's file (memories x instances)."""
    return accelerator_area_um2(core.accelerator)


def multicore_area_um2(accelerator) -> tuple[float | None, float]:
    """(cores, interconnect) area in µm²: the sum of :func:`core_area` over the cores but the DRAM
    (a top memory shared by a ``core_memory_sharing`` group counted once), and the links' and
    routers' areas the multi-core file gives (``link_area``, ``router_area``; 0 by default)."""
    total, known = 0.0, False
    seen: set[tuple[int, str]] = set()
    for core in accelerator.compute_cores:
        area = core_area(core)
        if area is None:
            continue
        known = True
        total += area
        if core.memory_group != core.id:  # one instance of the group's top memories
            scale = _to_um2(core.accelerator)
            for memory in core.top_memories:
                if (core.memory_group, memory.name) in seen:
                    total -= (core.accelerator.memory[memory.name].area or 0) * scale
                seen.add((core.memory_group, memory.name))
        else:
            seen.update((core.memory_group, m.name) for m in core.top_memories)
    return (total if known else None), float(accelerator.interconnect_area_um2)


def _to_um2(chip) -> float:
    return TO_UM2.get(chip.area_unit, 1.0)


def run_summary(
    result, accelerator, document: dict, tokens: dict | None = None, **identity
) -> RunSummary:
    """The :class:`RunSummary` of a schedule in memory (``result``: a ``ScheduleResult``) on
    ``accelerator``, whose multi-core file's YAML ``document`` names the cores' roles; ``tokens``:
    its per-token figures (``zigzag.multicore.schedule.tokens.token_figures``) when it is a transformer step."""
    problem = result.problem
    busy = [
        (int(core), float(end - start))
        for core, start, end in zip(problem.core, result.start, result.end)
    ]
    check = result.dram_link_check()
    return _summary(
        float(result.latency),
        result.energy,
        result.totals.as_dict(),
        busy,
        result.dram_traffic(),
        int(problem.nb_cns),
        accelerator,
        document,
        tokens=tuple(token_columns(tokens).items()),
        link=(check["dram_link_demand"], check["latency_model"]),
        **identity,
    )


def summarize_run(
    folder: str | Path,
    accelerator: str | Path,
    *,
    experiment: str | None = None,
    workload: str | Path = "",
    mapping: str | Path = "",
    mode: str = "",
    clock_ghz: float | None = None,
    cwd: str | None = None,
) -> RunSummary:
    """The :class:`RunSummary` of the run folder ``folder`` scheduled on the ``accelerator`` file."""
    from zigzag.io.yaml_files import load_yaml
    from zigzag.multicore.topology import load_multicore_accelerator

    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except FileNotFoundError:
        raise InputError(
            folder / "summary.json", None, "no such run summary; schedule the experiment first"
        ) from None
    trace = load_trace(folder / "schedule_trace.json")
    hardware = load_multicore_accelerator(accelerator, cwd)
    busy = [
        (int(core), float(end - start))
        for core, start, end in zip(trace.cn["core"], trace.cn["start"], trace.cn["end"])
    ]
    missing = [column for column in DRAM_COLUMNS if column not in summary]
    if missing:
        raise InputError(
            folder / "summary.json",
            missing[0],
            "missing: the run was written by an older version; "
            "schedule it again (zigzag multicore run, or delete the folder and rerun the workflow)",
        )
    dram = {column.removeprefix("dram_"): summary[column] for column in DRAM_COLUMNS}
    return _summary(
        float(summary["latency"]),
        float(summary["energy"]),
        summary,
        busy,
        dram,
        int(summary.get("nb_cns", len(busy))),
        hardware,
        load_yaml(accelerator),
        tokens=tuple(token_columns(summary.get("per_token")).items()),
        experiment=experiment or folder.name,
        workload=Path(str(workload)).stem,
        mapping=Path(str(mapping)).stem,
        mode=mode,
        allocation="searched" if (folder / "front.csv").exists() else "fixed",
        clock_ghz=clock_ghz,
        link=(summary.get("dram_link_demand"), summary.get("latency_model", "zigzag")),
    )


def _summary(
    latency: float,
    energy: float,
    totals: Mapping,
    busy: Sequence[tuple[int, float]],
    dram: Mapping,
    cns: int,
    accelerator,
    document: dict,
    *,
    experiment: str = "",
    workload: str = "",
    mapping: str = "",
    mode: str = "",
    allocation: str = "fixed",
    clock_ghz: float | None = None,
    tokens: tuple[tuple[str, Any], ...] = (),
    link: tuple = (None, "zigzag"),
) -> RunSummary:
    labels = core_labels(document)
    compute = set(compute_core_ids(document))
    cycles = {core.id: 0.0 for core in accelerator.compute_cores}
    for core, value in busy:
        cycles[core] = cycles.get(core, 0.0) + value
    cores_area, interconnect = multicore_area_um2(accelerator)
    return RunSummary(
        experiment=experiment,
        workload=workload,
        accelerator=accelerator.name,
        mapping=mapping,
        mode=mode,
        allocation=allocation,
        latency_cycles=latency,
        energy_pJ=energy,
        energy_terms=tuple(
            (column, float(totals.get(key, 0.0))) for column, key in ENERGY_TERMS.items()
        ),
        compute_cores=len(compute),
        cores_area_um2=cores_area,
        interconnect_area_um2=interconnect,
        core_busy=tuple(
            (labels.get(core, f"core{core}"), cycles[core], core in compute)
            for core in sorted(cycles)
        ),
        dram=tuple(
            (column, float(dram.get(column.removeprefix("dram_"), 0.0))) for column in DRAM_COLUMNS
        ),
        cns=cns,
        clock_ghz=clock_ghz,
        tokens=tokens,
        dram_link_demand=link[0],
        latency_model=link[1],
    )


def multicore_rows(
    summaries: Sequence[RunSummary], parameters: Sequence[Mapping[str, object] | None] | None = None
) -> list[dict]:
    """One table row per summary; ``parameters[i]`` (optional) adds row ``i``'s varied parameters
    as columns right after the identity columns (a name may not repeat a figure column)."""
    if parameters is not None and len(parameters) != len(summaries):
        raise InputError(
            None,
            "parameters",
            f"{len(parameters)} parameter sets for {len(summaries)} runs; "
            "give one (or None) per run",
        )
    rows = []
    for i, run in enumerate(summaries):
        row = {name: getattr(run, name) for name in IDENTITY}
        given = dict((parameters[i] or {}) if parameters is not None else {})
        clash = sorted(set(given) & (set(_FIGURES) | set(IDENTITY)))
        if clash:
            raise InputError(
                None,
                f"parameters.{clash[0]}",
                "is a column of the table already; rename the parameter",
            )
        row.update(given)
        row.update(run_figures(run))
        rows.append(row)
    return rows


#: the figure columns of a row, in order (per-core utilisation follows, named util_<role or position>)
_FIGURES = (
    "compute_cores",
    "cns",
    "latency_cycles",
    "latency_s",
    *TOKEN_COLUMNS,
    "energy_pJ",
    *ENERGY_TERMS,
    "edp_pJ_cycles",
    "area_mm2",
    "cores_area_mm2",
    "interconnect_area_mm2",
    "compute_utilization",
    *DRAM_COLUMNS,
    "dram_link_demand",
    "latency_model",
    "pareto",
)


def run_figures(run: RunSummary) -> dict:
    """A run's figure columns: the same definitions in the workflow's table and in sweeps."""
    latency = run.latency_cycles
    compute = [cycles for _, cycles, is_compute in run.core_busy if is_compute]
    cores = None if run.cores_area_um2 is None else run.cores_area_um2 * 1e-6
    row = {
        "compute_cores": run.compute_cores,
        "cns": run.cns,
        "latency_cycles": latency,
        "latency_s": latency / (run.clock_ghz * 1e9) if run.clock_ghz else None,
        **dict(run.tokens),
        "energy_pJ": run.energy_pJ,
        **dict(run.energy_terms),
        "edp_pJ_cycles": run.energy_pJ * latency,
        "area_mm2": None if cores is None else cores + run.interconnect_area_um2 * 1e-6,
        "cores_area_mm2": cores,
        "interconnect_area_mm2": run.interconnect_area_um2 * 1e-6,
        "compute_utilization": sum(compute) / (latency * len(compute))
        if latency and compute
        else None,
        **dict(run.dram),
        "dram_link_demand": run.dram_link_demand,
        "latency_model": run.latency_model,
        "pareto": None,  # set by mark_pareto
    }
    row.update(
        {
            f"util_{label}": cycles / latency if latency else None
            for label, cycles, _ in run.core_busy
        }
    )
    return row


def table_columns(rows: Sequence[Mapping]) -> list[str]:
    """The rows' columns in the order they were made (identity, parameters, figures, per core)."""
    return list(dict.fromkeys(column for row in rows for column in row))


def mark_pareto(
    rows: list[dict], objectives: Sequence[str] = PARETO_OBJECTIVES, by: str = "workload"
) -> list[dict]:
    """Set each row's ``pareto``: True when no row of the same workload is no worse on every
    objective and better on one (all minimised; equal rows are all kept); rows missing an
    objective are False."""
    groups: dict[object, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(row.get(by), []).append(i)
    for members in groups.values():
        for i in members:
            rows[i]["pareto"] = False
        for k in front_indices([rows[i] for i in members], objectives):
            rows[members[k]]["pareto"] = True
    return rows
