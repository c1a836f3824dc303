"""Reading a results table for the report: typed cells, and each column's role, unit and format.

Columns are classified by their names, never by a fixed list of a table's columns, so columns
another step adds (per-memory energies, DRAM traffic, per-token figures, ...) are shown with
their unit from their name (``zigzag.plots.units``).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from zigzag.errors import InputError
from zigzag.plots.units import size_label, split_unit

#: columns naming what a row is
IDENTITY = (
    "experiment",
    "variant",
    "workload",
    "accelerator",
    "mapping",
    "mode",
    "allocation",
    "opt",
    "target",
)
#: identity columns hidden unless asked for
HIDDEN_IDENTITY = ("sweep", "variant_id", "same_as", "area_unit")
#: the objectives a Pareto view can draw: name -> candidate columns, first present wins
OBJECTIVES = {
    "energy": ("energy_pJ",),
    "latency": ("latency_cycles",),
    "EDP": ("edp_pJ_cycles",),
    "area": ("area_mm2", "cores_area", "area_um2"),
    "seconds": ("latency_s",),
    "J·s": ("edp_Js",),
    # an LLM step's figures per token (zigzag.tokens)
    "time per token": ("tpot_s", "tpot_cycles"),
    "time to first token": ("ttft_s", "ttft_cycles"),
    "energy per token": ("energy_per_token_J", "energy_per_token_pJ"),
    "tokens/s": ("tokens_per_s",),
}
#: objectives where more is better (every other one is minimised)
MAXIMISED = ("tokens/s",)
#: readable names of columns whose names are abbreviations
NAMES = {
    "tpot": "time per output token",
    "ttft": "time to first token",
    "dram_bound_ratio": "step / DRAM bound",
}
#: columns shown by default besides identity, status, parameters and objectives
SHOWN = (
    "mac_utilization",
    "utilization",
    "mean_core_utilization",
    "layers",
    "cores",
    "dram_traffic_bits",
    "dram_bound_ratio",
)


def cell(text: str, key: str = ""):
    """A CSV cell as a number, a boolean, None (empty) or text; the cells of the identity columns
    stay text (a variant id ``2638490507e3`` is not a number)."""
    if text == "":
        return None
    if key in IDENTITY or key in HIDDEN_IDENTITY or key == "workload_point":
        return text
    if text in ("True", "False"):
        return text == "True"
    try:
        value = float(text)
    except ValueError:
        return text
    if math.isnan(value) or math.isinf(value):
        return None
    return (
        int(value)
        if value.is_integer() and abs(value) < 2**53 and "." not in text and "e" not in text
        else value
    )


def read_table(path: str | Path) -> tuple[list[str], list[dict]]:
    """The header and typed rows of a CSV table; a table cut while being written (a row with
    fewer cells than the header, or no line break at the end) is an InputError."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InputError(
            str(path), None, "no such table; run the workflow (or the sweep) first"
        ) from None
    records = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    header = records[0] if records else []
    for number, record in enumerate(records[1:], start=2):
        if len(record) != len(header):
            raise InputError(
                str(path),
                f"line {number}",
                f"has {len(record)} cells for {len(header)} columns: the table was cut or edited; "
                "rerun the step that writes it",
            )
    if text and not text.endswith("\n"):
        raise InputError(
            str(path),
            f"line {len(records)}",
            "the table ends mid-line: it was cut while being written; rerun the step that writes it",
        )
    rows = [{k: cell(v, k) for k, v in zip(header, record)} for record in records[1:]]
    return header, rows


def objectives(columns: list[str], rows: list[dict]) -> dict[str, str]:
    """The objectives present with at least one value: name -> column."""
    found = {}
    for name, candidates in OBJECTIVES.items():
        for column in candidates:
            if column in columns and any(isinstance(r.get(column), (int, float)) for r in rows):
                found[name] = column
                break
    return found


def point_fields(rows: list[dict]) -> list[str]:
    """The workload fields a sweep varies (``workload_vary``), read from its rows' points
    (``workload_point``: ``context=4096 batch=8``)."""
    fields = {}
    for row in rows:
        for part in str(row.get("workload_point") or "").split():
            fields.setdefault(part.split("=", 1)[0], None)
    return list(fields)


def describe_columns(
    columns: list[str],
    rows: list[dict],
    parameters: list[dict] | None = None,
    units: dict[str, str] | None = None,
) -> list[dict]:
    """Each column's key, readable name, unit, role (id, point, status, param, objective, front,
    metric, option), format and whether it is shown by default. ``parameters``: a sweep's
    parameters (``sweep.json``); ``units``: units the table cannot say (e.g. the cores' area unit).
    The fields of a workload point (``point``) are shown, the point's label is not (it repeats them)."""
    parameters = {p["name"]: p for p in parameters or []}
    chosen = set(objectives(columns, rows).values())
    varied = point_fields(rows)
    described = []
    for key in columns:
        name, unit = split_unit(key)
        stem = key[: -len(unit) - 1] if unit and key.endswith("_" + unit) else key
        name = NAMES.get(stem, NAMES.get(key, name))
        unit = (units or {}).get(key, unit)
        values = [r.get(key) for r in rows if r.get(key) is not None]
        numeric = bool(values) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        )
        entry = {
            "key": key,
            "name": name,
            "unit": unit,
            "fmt": "eng" if numeric else "text",
            "shown": True,
        }
        if key in parameters:
            p = parameters[key]
            entry.update(
                role="param", name=key, unit="", shown=p.get("named", True), path=p.get("path")
            )
            if p.get("size") and numeric:
                labels = p.get("labels") or {}
                entry.update(
                    fmt="label",
                    unit="as written",
                    labels={str(v): labels.get(str(v)) or size_label(v) for v in values},
                )
        elif key in varied:
            entry.update(role="point", name=key)
        elif key == "workload_point":
            entry.update(role="id", name="workload point", shown=not varied)
        elif key in IDENTITY:
            entry.update(role="id", name=key)
        elif key in HIDDEN_IDENTITY:
            entry.update(role="id", name=key, shown=False)
        elif key in ("status", "reason"):
            entry.update(role="status", name=key)
        elif key == "pareto" or key.startswith("pareto_"):
            entry.update(role="front", fmt="bool", shown=False)
        elif key in chosen:
            entry.update(role="objective")
        elif numeric or not values:
            entry.update(role="metric", shown=key in SHOWN)
        else:
            entry.update(role="option", shown=False)
        if unit == "fraction" and entry["fmt"] == "eng":
            entry.update(fmt="percent", unit="%")
        described.append(entry)
    return described


def columnar(columns: list[str], rows: list[dict]) -> dict[str, list]:
    """Rows as one list per column (a smaller page than one object per row)."""
    return {c: [r.get(c) for r in rows] for c in columns}
