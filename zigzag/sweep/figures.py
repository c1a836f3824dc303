"""Figures of a hardware sweep: each metric against each varied parameter, and the Pareto
projections (energy-latency, energy-area, latency-area) per workload."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zigzag.plots.common import _new_figure, _save
from zigzag.plots.units import axis_label, size_unit
from zigzag.sweep.tables import PROJECTIONS, constraint_limits, front, group_of

# The figures are saved without the tight crop (``tight=False``): their constrained layout already
# keeps every label inside the canvas, and the crop's extra layout of every text (tick labels
# most of all) cost ~10 % of a sweep's figures (2,000 rows: 6.5-7.1 -> 5.9-6.4 CPU s for four of
# them, load 7.5); the image is the canvas, ~17 pixels smaller each way, the same look.

#: metrics drawn against each parameter: column -> axis label
METRICS = {
    "energy_pJ": "energy (pJ)",
    "latency_cycles": "latency (cycles)",
    "area_mm2": "area (mm²)",
    "edp_pJ_cycles": "EDP (pJ·cycles)",
    "mac_utilization": "MAC utilisation",
    "utilization": "utilisation (compute cores)",
    "dram_traffic_bits": "DRAM traffic (bits)",
}


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def plot_metrics_vs_parameter(
    rows: list[dict], parameter: str, path: str | Path, *, size: bool = False
) -> Path:
    """One panel per metric: its value against ``parameter`` for every variant that ran
    (``ok`` filled, ``out`` hollow), one colour per workload. ``size``: the parameter is a memory
    size in bits, drawn in the binary unit a person writes it in (KiB, MiB, ...)."""
    ran = [r for r in rows if r.get("status") in ("ok", "out")]
    metrics = [m for m in METRICS if any(_number(r.get(m)) is not None for r in ran)] or list(
        METRICS
    )[:1]
    if (
        "mac_utilization" in metrics and "utilization" in metrics
    ):  # single-core rows: the same figure twice
        metrics.remove("utilization")
    figure = _new_figure(3.2 * len(metrics), 3.0)
    axes = figure.subplots(1, len(metrics), squeeze=False)[0]
    values = [r.get(parameter) for r in ran]
    numeric = all(_number(v) is not None for v in values)
    unit, per_unit = size_unit([_number(v) for v in values]) if size and numeric else ("", 1.0)
    categories = list(dict.fromkeys(str(v) for v in values))
    by_group: dict[tuple, list[dict]] = {}  # (workload, status) -> its rows, in order
    for r in ran:
        by_group.setdefault((group_of(r), r["status"]), []).append(r)
    workloads = list(dict.fromkeys(workload for workload, _ in by_group))
    for ax, metric in zip(axes, metrics):
        for colour, workload in enumerate(workloads):
            for status, fill in (("ok", True), ("out", False)):
                chosen = [
                    r
                    for r in by_group.get((workload, status), [])
                    if _number(r.get(metric)) is not None
                ]
                if not chosen:
                    continue
                x = [
                    _number(r.get(parameter)) / per_unit
                    if numeric
                    else categories.index(str(r.get(parameter)))
                    for r in chosen
                ]
                y = [_number(r.get(metric)) for r in chosen]
                # float arrays: given lists, matplotlib checks every element for a mask
                ax.scatter(
                    np.asarray(x, dtype=float),
                    np.asarray(y, dtype=float),
                    s=18,
                    color=f"C{colour}",
                    facecolors=None if fill else "none",
                    label=workload if status == "ok" else f"{workload} (out)",
                )
        if not numeric:
            ax.set_xticks(range(len(categories)), categories, rotation=45, ha="right")
        ax.set_xlabel(f"{parameter} ({unit})" if unit else parameter)
        ax.set_ylabel(METRICS.get(metric) or axis_label(metric))
    if ran:
        axes[-1].legend(fontsize="small")
    figure.suptitle(f"metrics vs {parameter}")
    return _save(figure, path, tight=False)


def plot_pareto_projections(rows: list[dict], path: str | Path, *, constraints=()) -> Path:
    """Energy-latency, energy-area and latency-area of every variant that ran, one row of panels
    per workload: ``ok`` variants in colour, those a constraint excludes (``out``) greyed, the
    variants on the 2-D front of each panel joined and named, and the constraints' limits
    (``constraints``: their texts, e.g. ``area <= 25 mm2``) drawn as dashed lines."""
    ran = [r for r in rows if r.get("status") in ("ok", "out")]
    workloads = list(dict.fromkeys(group_of(r) for r in ran)) or ["(no variant ran)"]
    limits = constraint_limits(constraints)
    figure = _new_figure(3.8 * len(PROJECTIONS), 3.4 * len(workloads))
    axes = figure.subplots(len(workloads), len(PROJECTIONS), squeeze=False)
    for row_axes, workload in zip(axes, workloads):
        group = [r for r in ran if group_of(r) == workload]
        for ax, (x_column, y_column) in zip(row_axes, PROJECTIONS.values()):
            points = [(_number(r.get(x_column)), _number(r.get(y_column)), r) for r in group]
            points = [p for p in points if p[0] is not None and p[1] is not None]
            out = [p for p in points if p[2]["status"] == "out"]
            ok = [p for p in points if p[2]["status"] == "ok"]
            ax.scatter(
                [p[0] for p in out],
                [p[1] for p in out],
                s=14,
                marker="x",
                color="0.7",
                label=f"excluded ({len(out)})" if out else None,
            )
            ax.scatter(
                [p[0] for p in ok], [p[1] for p in ok], s=14, color="C0", label=f"kept ({len(ok)})"
            )
            chosen = front([{"x": p[0], "y": p[1]} for p in ok], ("x", "y"))
            on_front = sorted((ok[i] for i in chosen), key=lambda p: (p[0], p[1]))
            ax.plot(
                [p[0] for p in on_front],
                [p[1] for p in on_front],
                "o-",
                color="C3",
                markersize=5,
                label="front",
            )
            for x, y, row in on_front[:8]:
                ax.annotate(
                    str(row.get("variant", "")),
                    (x, y),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=6,
                )
            for limit in limits:
                style = {"color": "0.3", "linestyle": "--", "linewidth": 1}
                if limit["column"] == x_column:
                    ax.axvline(limit["value"], **style)
                    ax.annotate(
                        limit["text"],
                        xy=(limit["value"], 0.98),
                        xycoords=ax.get_xaxis_transform(),
                        fontsize=6,
                        color="0.3",
                        rotation=90,
                        ha="right",
                        va="top",
                    )
                elif limit["column"] == y_column:
                    ax.axhline(limit["value"], **style)
                    ax.annotate(
                        limit["text"],
                        xy=(0.02, limit["value"]),
                        xycoords=ax.get_yaxis_transform(),
                        fontsize=6,
                        color="0.3",
                        va="bottom",
                    )
            ax.set_xlabel(axis_label(x_column))
            ax.set_ylabel(axis_label(y_column))
            ax.set_title(workload, fontsize="small")
            if ok or out:
                ax.legend(fontsize=6)
    return _save(figure, path, tight=False)
