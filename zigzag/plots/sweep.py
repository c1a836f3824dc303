"""Figures of a hardware sweep: each metric against each varied parameter, and the Pareto
projections (energy-latency, energy-area, latency-area) per workload."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zigzag.plots.common import _new_figure, _save

#: metrics drawn against each parameter: column -> axis label
METRICS = {"energy_pJ": "energy (pJ)", "latency_cycles": "latency (cycles)", "area_mm2": "area (mm²)",
           "edp_pJ_cycles": "EDP (pJ·cycles)", "mac_utilization": "MAC utilisation",
           "utilization": "mean core utilisation", "dram_traffic_bits": "DRAM traffic (bits)"}


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def plot_metrics_vs_parameter(rows: list[dict], parameter: str, path: str | Path) -> Path:
    """One panel per metric: its value against ``parameter`` for every variant that ran
    (``ok`` filled, ``out`` hollow), one colour per workload."""
    from zigzag.sweep.results import group_of

    ran = [r for r in rows if r.get("status") in ("ok", "out")]
    metrics = [m for m in METRICS if any(_number(r.get(m)) is not None for r in ran)] or list(METRICS)[:1]
    if "mac_utilization" in metrics and "utilization" in metrics:  # single-core rows: the same figure twice
        metrics.remove("utilization")
    figure = _new_figure(3.2 * len(metrics), 3.0)
    axes = figure.subplots(1, len(metrics), squeeze=False)[0]
    values = [r.get(parameter) for r in ran]
    numeric = all(_number(v) is not None for v in values)
    categories = list(dict.fromkeys(str(v) for v in values))
    by_group: dict[tuple, list[dict]] = {}  # (workload, status) -> its rows, in order
    for r in ran:
        by_group.setdefault((group_of(r), r["status"]), []).append(r)
    workloads = list(dict.fromkeys(workload for workload, _ in by_group))
    for ax, metric in zip(axes, metrics):
        for colour, workload in enumerate(workloads):
            for status, fill in (("ok", True), ("out", False)):
                chosen = [r for r in by_group.get((workload, status), []) if _number(r.get(metric)) is not None]
                if not chosen:
                    continue
                x = [_number(r.get(parameter)) if numeric else categories.index(str(r.get(parameter)))
                     for r in chosen]
                y = [_number(r.get(metric)) for r in chosen]
                # float arrays: given lists, matplotlib checks every element for a mask
                ax.scatter(np.asarray(x, dtype=float), np.asarray(y, dtype=float), s=18, color=f"C{colour}", facecolors=None if fill else "none",
                           label=workload if status == "ok" else f"{workload} (out)")
        if not numeric:
            ax.set_xticks(range(len(categories)), categories, rotation=45, ha="right")
        ax.set_xlabel(parameter)
        ax.set_ylabel(METRICS[metric])
    if ran:
        axes[-1].legend(fontsize="small")
    figure.suptitle(f"metrics vs {parameter}")
    return _save(figure, path)


def plot_pareto_projections(rows: list[dict], path: str | Path) -> Path:
    """Energy-latency, energy-area and latency-area of every ``ok`` variant, one row of panels
    per workload; the variants on the 2-D front of each panel are drawn larger and joined."""
    from zigzag.sweep.results import PROJECTIONS, group_of

    ok = [r for r in rows if r.get("status") == "ok"]
    workloads = list(dict.fromkeys(group_of(r) for r in ok)) or ["(no variant ran)"]
    figure = _new_figure(3.4 * len(PROJECTIONS), 3.0 * len(workloads))
    axes = figure.subplots(len(workloads), len(PROJECTIONS), squeeze=False)
    for row_axes, workload in zip(axes, workloads):
        group = [r for r in ok if group_of(r) == workload]
        for ax, (flag, (x_column, y_column)) in zip(row_axes, PROJECTIONS.items()):
            points = [(_number(r.get(x_column)), _number(r.get(y_column)), r) for r in group]
            points = [p for p in points if p[0] is not None and p[1] is not None]
            ax.scatter(np.asarray([p[0] for p in points], dtype=float), np.asarray([p[1] for p in points], dtype=float),
                       s=12, color="0.6")
            on_front = sorted((p for p in points if str(p[2].get(flag)) in ("True", "true", "1")),
                              key=lambda p: (p[0], p[1]))
            ax.plot([p[0] for p in on_front], [p[1] for p in on_front], "o-", color="C3", markersize=5)
            ax.set_xlabel(METRICS[x_column])
            ax.set_ylabel(METRICS[y_column])
            ax.set_title(workload, fontsize="small")
    return _save(figure, path)
