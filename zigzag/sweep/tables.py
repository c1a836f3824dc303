"""The tables of a sweep: ``variants.csv``, ``pareto.csv`` and ``best.csv``.

A row of ``variants.csv`` is one variant on one workload: identity (sweep, variant, id,
workload, the mapping search's ``opt``), the parameter columns, ``status`` and ``reason``, then the figures: energy (pJ),
latency (cycles; seconds and EDP in J·s when a clock is known), area (mm²), utilisation and the
energy per memory. Areas of an accelerator file are in µm² unless it states ``area_unit`` (the
convention for digital arrays; in-memory-computing arrays report mm², converted); ``area_mm2`` is
the total.

Status: ``ok``; ``out`` (ran, but breaks a constraint, named in ``reason``); ``invalid``,
``infeasible``, ``failed`` (did not run, see ``zigzag.sweep.point``). The Pareto fronts are
taken per workload over the ``ok`` rows, minimising energy, latency and area, in 3-D and in each
2-D projection.
"""

from __future__ import annotations

import re
from pathlib import Path

from zigzag.io.atomic import write_text_atomic
from zigzag.io.tables import csv_text
from zigzag.multiobjective.pareto import front_indices
from zigzag.sweep.config import read_constraints
from zigzag.variants import expressions

#: objectives of the Pareto fronts: column -> short name
OBJECTIVES = {"energy_pJ": "energy", "latency_cycles": "latency", "area_mm2": "area"}
#: 2-D projections, named by their columns in pareto.csv / variants.csv
PROJECTIONS = {
    "pareto_energy_latency": ("energy_pJ", "latency_cycles"),
    "pareto_energy_area": ("energy_pJ", "area_mm2"),
    "pareto_latency_area": ("latency_cycles", "area_mm2"),
}
#: the objectives of the fronts of an LLM step's rows (per token): objective column -> its per-token column
TOKEN_OBJECTIVES = {
    "energy_pJ": "energy_per_token_pJ",
    "latency_cycles": ("tpot_cycles", "ttft_cycles"),
    "area_mm2": "area_mm2",
}
#: the objectives of best.csv: name -> column minimised
BEST_OBJECTIVES = {
    "energy": "energy_pJ",
    "latency": "latency_cycles",
    "edp": "edp_pJ_cycles",
    "area": "area_mm2",
}
STATUSES = ("ok", "out", "invalid", "infeasible", "failed")


def complete_row(row: dict, clock_ghz: float | None) -> dict:
    """Add area in mm², latency in seconds and EDP in J·s (when a clock is known) to a point's figures."""
    if row.get("status") not in ("ok", "out"):
        return row
    if "area_um2" in row or "area_mm2" not in row:  # a multi-core point gives area_mm2 itself
        area = row.pop("area_um2", None)
        row["area_mm2"] = None if area is None else area * 1e-6
    seconds = None
    if clock_ghz:
        seconds = row["latency_cycles"] / (clock_ghz * 1e9)
    elif row.get("latency_ns") is not None:  # in-memory computing: its own clock period
        seconds = row["latency_ns"] * 1e-9
    row["clock_ghz"] = (
        clock_ghz if clock_ghz else (1 / row["tclk_ns"] if row.get("tclk_ns") else None)
    )
    row["latency_s"] = seconds
    row["edp_Js"] = None if seconds is None else row["energy_pJ"] * 1e-12 * seconds
    if row.get("phase") is not None:  # an LLM step: its per-token times (docs/models/per-token.md)
        decode = row["phase"] != "prefill"
        row["ttft_cycles"] = None if decode else row["latency_cycles"]
        row["tpot_cycles"] = row["latency_cycles"] / row["tokens"] if decode else None
        row["ttft_s"] = seconds if row["phase"] == "prefill" else None
        row["tpot_s"] = (
            None if row["phase"] == "prefill" or seconds is None else seconds / row["tokens"]
        )
        row["tokens_per_s"] = None if not seconds else row["batch"] * row["tokens"] / seconds
        if row.get("bound_cycles") is not None:  # the physical bound in seconds too
            row["bound_s"] = (
                None if not seconds else seconds * row["bound_cycles"] / row["latency_cycles"]
            )
    if row.get("utilization") is None:  # a multi-core point gives its mean core utilisation
        row["utilization"] = row.get("mac_utilization")
    return row


def check_constraints(row: dict, constraints) -> dict:
    """Mark a row that ran as ``out`` when it breaks a constraint (the first one is the reason)."""
    if row.get("status") != "ok":
        return row
    for constraint in constraints:
        names = {
            "area": row.get("area_mm2"),
            "energy": row.get("energy_pJ"),
            "latency": row.get("latency_s") if constraint.in_seconds else row.get("latency_cycles"),
            "edp": row.get("edp_Js") if constraint.in_seconds else row.get("edp_pJ_cycles"),
            "utilization": row.get("utilization", row.get("mac_utilization")),
        }

        def lookup(name: str):  # called in this iteration only
            value = names[name] if name in names else row.get(name)  # noqa: B023
            if value is None or isinstance(value, str):
                why = (
                    "no clock is known (give clock_ghz)"
                    if name in ("latency", "edp")
                    else "it is not known"
                )
                raise expressions.ExpressionError(f"'{name}' cannot be used: {why}")
            return value

        try:
            kept = expressions.evaluate(constraint.text, lookup)
        except expressions.ExpressionError as exc:
            return {**row, "status": "out", "reason": f"constraint '{constraint.text}': {exc}"}
        if not kept:
            return {**row, "status": "out", "reason": f"breaks '{constraint.text}'"}
    return row


def group_of(row: dict) -> str:
    """What a row is compared with: its workload (and its ``workload_vary`` point), and its mode
    for a multi-core sweep."""
    workload = (
        f"{row['workload']} {row['workload_point']}"
        if row.get("workload_point")
        else str(row["workload"])
    )
    return f"{workload} ({row['mode']})" if row.get("mode") else workload


def front(rows: list[dict], columns: tuple[str, ...]) -> list[int]:
    """Indices of the rows on the Pareto front (minimising ``columns``; rows missing one are left out)."""
    return front_indices(rows, columns)


def mark_fronts(rows: list[dict]) -> list[dict]:
    """Add ``pareto`` (3-D front) and the projection columns, per workload (and mode), to every row.
    The rows of an LLM step are compared per token (:func:`front_columns`)."""
    objectives = tuple(
        c for c in OBJECTIVES if any(r.get(c) is not None for r in rows if r["status"] == "ok")
    )
    for row in rows:
        row["pareto"] = False
        for name in PROJECTIONS:
            row[name] = False
    for workload in dict.fromkeys(group_of(r) for r in rows):
        group = [r for r in rows if group_of(r) == workload and r["status"] == "ok"]
        columns_of = front_columns(group)
        for i in front(group, tuple(columns_of[c] for c in objectives)):
            group[i]["pareto"] = True
        for name, columns in PROJECTIONS.items():
            if all(c in objectives for c in columns):
                for i in front(group, tuple(columns_of[c] for c in columns)):
                    group[i][name] = True
    return rows


def front_columns(group: list[dict]) -> dict[str, str]:
    """Objective column -> the column a group's front minimises: the objective itself, or, when
    every row is an LLM step, its per-token figure (time per output token or to first token,
    energy per token; the same front, as a step's tokens are the same for the whole group)."""
    columns = {c: c for c in OBJECTIVES}
    if not group or any(r.get("phase") is None for r in group):
        return columns
    for objective, per_token in TOKEN_OBJECTIVES.items():
        options = per_token if isinstance(per_token, tuple) else (per_token,)
        found = next((c for c in options if all(r.get(c) is not None for r in group)), None)
        columns[objective] = found or objective
    return columns


def best_rows(rows: list[dict]) -> list[dict]:
    """The best ``ok`` variant per workload and objective (energy, latency, EDP, area)."""
    best = []
    for workload in dict.fromkeys(group_of(r) for r in rows):
        group = [r for r in rows if group_of(r) == workload and r["status"] == "ok"]
        for objective, column in BEST_OBJECTIVES.items():
            candidates = [r for r in group if r.get(column) is not None]
            if candidates:
                top = min(candidates, key=lambda r: r[column])
                best.append(
                    {
                        "workload": top["workload"],
                        **({"mode": top["mode"]} if top.get("mode") else {}),
                        "objective": objective,
                        "column": column,
                        "value": top[column],
                        "variant": top["variant"],
                        "variant_id": top["variant_id"],
                    }
                )
    return best


def write_tables(
    rows: list[dict], folder: str | Path, *, float_format: str = "%.10g"
) -> dict[str, Path]:
    """Write ``variants.csv``, ``pareto.csv`` (3-D front, per workload, with the 2-D flags) and
    ``best.csv`` into ``folder`` (each written even when empty); returns their paths."""
    folder = Path(folder)
    columns = _columns(rows)
    paths = {
        "variants": folder / "variants.csv",
        "pareto": folder / "pareto.csv",
        "best": folder / "best.csv",
    }
    write_text_atomic(paths["variants"], csv_text(rows, float_format=float_format, columns=columns))
    pareto = [row for row in rows if row.get("pareto") or any(row.get(p) for p in PROJECTIONS)]
    write_text_atomic(paths["pareto"], csv_text(pareto, float_format=float_format, columns=columns))
    best_columns = [
        "workload",
        *(["mode"] if any(r.get("mode") for r in rows) else []),
        "objective",
        "column",
        "value",
        "variant",
        "variant_id",
    ]
    write_text_atomic(
        paths["best"], csv_text(best_rows(rows), float_format=float_format, columns=best_columns)
    )
    return paths


def _columns(rows: list[dict]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    first = ["sweep", "variant", "variant_id", "workload", "mode", "opt", "status", "reason"]
    return [c for c in first if c in columns] + [c for c in columns if c not in first]


#: what a constraint's left side names -> the column it limits (seconds-based when the limit has a time unit)
_LIMITED = {
    "area": ("area_mm2", "area_mm2"),
    "energy": ("energy_pJ", "energy_pJ"),
    "latency": ("latency_cycles", "latency_s"),
    "edp": ("edp_pJ_cycles", "edp_Js"),
    "utilization": ("utilization", "utilization"),
}


def constraint_limits(texts) -> list[dict]:
    """The limits a figure can draw: ``area <= 25 mm2`` -> {column: area_mm2, value: 25, op: <=,
    text}; constraints that are not one objective against a constant are left out."""
    limits = []
    for constraint in read_constraints(list(texts), "constraints"):
        left, op, right = re.fullmatch(
            r"\s*(.+?)\s*(<=|>=|<|>)\s*(.+?)\s*", constraint.text
        ).groups()
        if left not in _LIMITED:
            continue
        try:
            value = float(expressions.evaluate(right, _no_names))
        except expressions.ExpressionError:
            continue
        limits.append(
            {
                "column": _LIMITED[left][1 if constraint.in_seconds else 0],
                "value": value,
                "op": op,
                "text": constraint.text,
            }
        )
    return limits


def _no_names(name: str):
    raise expressions.ExpressionError(f"'{name}' is not a constant")
