"""Figures of the multi-core results table (rows of ``zigzag.multicore.summaries.multicore_rows``).

* :func:`pareto_png`: per workload, energy against latency, marker area by the area, the
  points on the (latency, energy, area) front red-edged and named;
* :func:`metrics_png`: each metric of every row side by side (bars), or, when the rows carry
  parameter columns, each metric against each parameter (one line per workload).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.plots.charts import _pyplot

#: the metrics drawn, with their axis labels
METRICS = (
    ("latency_cycles", "latency (cycles)"),
    ("energy_pJ", "energy (pJ)"),
    ("edp_pJ_cycles", "EDP (pJ x cycles)"),
    ("area_mm2", "area (mm²)"),
    ("compute_utilization", "compute-core utilisation"),
    ("dram_traffic_bits", "DRAM traffic (bits)"),
)


def _label(row: dict) -> str:
    return str(row["experiment"])


def _floats(rows: Sequence[dict], column: str) -> np.ndarray:
    return np.array(
        [np.nan if row.get(column) in (None, "") else float(row[column]) for row in rows]
    )


def pareto_png(rows: Sequence[dict], path: str | Path, dpi: int = 120) -> Path:
    """Energy against latency per workload; marker area grows with the area; the rows
    whose ``pareto`` is true (front over latency, energy and area) red-edged and named."""
    if not rows:
        raise InputError(
            None, "rows", "no multi-core results to draw; schedule an experiment first"
        )
    plt = _pyplot()
    workloads = list(dict.fromkeys(row["workload"] for row in rows))
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.2 * len(workloads), 4.8), squeeze=False)
    for ax, workload in zip(axes[0], workloads):
        group = [row for row in rows if row["workload"] == workload]
        latency, energy, area = (
            _floats(group, c) for c in ("latency_cycles", "energy_pJ", "area_mm2")
        )
        scale = np.nanmax(area) if np.any(area > 0) else 1.0
        sizes = 30 + 270 * np.nan_to_num(area) / scale
        front = np.array([row.get("pareto") in (True, "True") for row in group])
        ax.scatter(
            latency[~front],
            energy[~front],
            s=sizes[~front],
            color="#7f9cc7",
            edgecolor="#2b4c7e",
            alpha=0.8,
            label="dominated",
            zorder=3,
        )
        ax.scatter(
            latency[front],
            energy[front],
            s=sizes[front],
            color="#f4a582",
            edgecolor="#d62728",
            linewidth=1.8,
            label="on the front (latency, energy, area)",
            zorder=4,
        )
        for x, y, row, on in zip(latency, energy, group, front):
            if on or len(group) <= 12:
                ax.annotate(
                    _label(row), (x, y), xytext=(5, 4), textcoords="offset points", fontsize=7
                )
        ax.set_xlabel("latency (cycles, lower is better)")
        ax.set_ylabel("energy (pJ, lower is better)")
        ax.set_title(
            f"{workload}: {int(front.sum())} of {len(group)} on the front (marker area: area)",
            fontsize=9,
        )
        ax.grid(alpha=0.3)
        ax.margins(0.15)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)


def metrics_png(
    rows: Sequence[dict], path: str | Path, parameters: Sequence[str] = (), dpi: int = 120
) -> Path:
    """Every metric of every row: bars per row, or, with ``parameters``, one panel per (metric,
    parameter) with the metric against the parameter's values, one line per workload."""
    if not rows:
        raise InputError(
            None, "rows", "no multi-core results to draw; schedule an experiment first"
        )
    plt = _pyplot()
    if parameters:
        fig, axes = plt.subplots(
            len(METRICS),
            len(parameters),
            figsize=(4.2 * len(parameters) + 1, 2.3 * len(METRICS)),
            squeeze=False,
        )
        workloads = list(dict.fromkeys(row["workload"] for row in rows))
        for r, (metric, label) in enumerate(METRICS):
            for c, parameter in enumerate(parameters):
                ax = axes[r, c]
                for workload in workloads:
                    group = [
                        row
                        for row in rows
                        if row["workload"] == workload and row.get(parameter) is not None
                    ]
                    _against(ax, group, parameter, metric, workload)
                ax.set_xlabel(parameter, fontsize=8)
                ax.set_ylabel(label, fontsize=8)
                ax.tick_params(labelsize=7)
                ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
    else:
        names = [f"{row['experiment']} ({row['workload']})" for row in rows]
        fig, axes = plt.subplots(2, 3, figsize=(15, 2 * (1.0 + 0.3 * len(rows))), squeeze=False)
        positions = np.arange(len(rows))
        for ax, (metric, label) in zip(axes.ravel(), METRICS):
            values = _floats(rows, metric)
            colours = [
                "#d62728" if row.get("pareto") in (True, "True") else "#4c72b0" for row in rows
            ]
            ax.barh(positions, np.nan_to_num(values), color=colours)
            ax.set_title(label, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(axis="x", alpha=0.3)
            ax.set_yticks(positions, names if ax in axes[:, 0] else [""] * len(rows), fontsize=7)
            ax.invert_yaxis()
        fig.suptitle(
            "Multi-core experiments (red: on its workload's front over latency, energy and area)",
            fontsize=10,
        )
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)


def _against(ax, group: Sequence[dict], parameter: str, metric: str, workload: str) -> None:
    values = [row[parameter] for row in group]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    keys = sorted(set(values), key=float) if numeric else list(dict.fromkeys(map(str, values)))
    ys = [
        np.nanmean(
            [
                float(row[metric])
                for row in group
                if (row[parameter] if numeric else str(row[parameter])) == k
                and row.get(metric) is not None
            ]
            or [np.nan]
        )
        for k in keys
    ]
    xs = keys if numeric else range(len(keys))
    ax.plot(xs, ys, marker="o", label=workload)
    if not numeric:
        ax.set_xticks(list(xs), [str(k) for k in keys], fontsize=7, rotation=30)
