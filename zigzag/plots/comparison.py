"""Experiments on the energy-latency plane and their Pareto fronts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import EngFormatter, NullFormatter

from zigzag.multiobjective.pareto import non_dominated
from zigzag.plots.common import PJ, _new_figure, _save


def pareto_front(table, *, energy: str = "energy", latency: str = "latency"):
    """The experiments no other experiment beats on both energy and latency (minimising both).

    An experiment is dominated if another has energy and latency no larger and at least one of
    them smaller; equal points are all kept. Rows with a missing value are left out. Returns
    the non-dominated rows sorted by energy, then latency (index reset).
    """
    valid = table.dropna(subset=[energy, latency])
    front = valid.loc[non_dominated(valid[[energy, latency]].to_numpy(dtype=float))]
    return front.sort_values([energy, latency], kind="stable").reset_index(drop=True)


def _energy_latency_axes(ax, x, y) -> None:
    """Energy (J) and latency axes, logarithmic where the values span a wide range."""
    if _log_if_wide(x):
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    if _log_if_wide(y):
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(EngFormatter(unit="J"))
    ax.yaxis.set_major_formatter(EngFormatter())


def _log_if_wide(values: np.ndarray) -> bool:
    positive = values[values > 0]
    return len(positive) == len(values) and len(values) > 1 and positive.max() / positive.min() > 30


def plot_experiments_comparison(
    table,
    path: str | Path,
    *,
    energy: str = "energy",
    latency: str = "latency",
    name: str = "experiment",
    title: str | None = None,
) -> Path:
    """Energy versus latency of every experiment (one labelled point each), with the Pareto
    front (minimising both) highlighted and connected as a staircase.

    ``table``: a DataFrame like ``results/experiments.csv`` (energy in pJ, latency in cycles).
    """
    valid = table.dropna(subset=[energy, latency])
    front = pareto_front(valid, energy=energy, latency=latency)
    on_front = set(front[name]) if name in front else set()
    x = valid[energy].to_numpy(dtype=float) * PJ
    y = valid[latency].to_numpy(dtype=float)
    names = [str(n) for n in valid[name]] if name in valid else [str(i) for i in range(len(valid))]

    figure = _new_figure(8.0, 5.5)
    ax = figure.add_subplot()
    is_front = np.array([n in on_front for n in names], dtype=bool)
    ax.scatter(
        x[~is_front],
        y[~is_front],
        s=36,
        color="#7f9cc7",
        edgecolor="#2b4c7e",
        zorder=3,
        label="experiment (dominated)",
    )
    fx = front[energy].to_numpy(dtype=float) * PJ
    fy = front[latency].to_numpy(dtype=float)
    ax.scatter(
        fx,
        fy,
        s=70,
        marker="D",
        color="#d62728",
        edgecolor="black",
        zorder=4,
        label="Pareto front (lowest energy and latency)",
    )
    if len(fx) > 1:
        ax.step(fx, fy, where="post", color="#d62728", linestyle="--", linewidth=1.2, zorder=2)
    for xi, yi, label in zip(x, y, names):
        ax.annotate(label, (xi, yi), xytext=(5, 4), textcoords="offset points", fontsize=8)

    _energy_latency_axes(ax, x, y)
    ax.set_xlabel("Energy (J, lower is better)")
    ax.set_ylabel("Latency (cycles, lower is better)")
    ax.margins(0.12)
    ax.grid(alpha=0.35, which="major")
    ax.grid(alpha=0.1, which="minor")
    ax.legend(loc="best", fontsize=8)
    ax.set_title(
        title or f"Energy vs latency of {len(valid)} experiments ({len(front)} on the Pareto front)"
    )
    return _save(figure, path)  # tight: a point's label may reach past the axes


def pareto_fronts(
    table, *, by: str = "workload", energy: str = "energy_pJ", latency: str = "latency_cycles"
):
    """The Pareto front of each group of rows (default: per workload), concatenated in group order."""
    import pandas as pd

    fronts = [
        pareto_front(group, energy=energy, latency=latency)
        for _, group in table.groupby(by, sort=False)
    ]
    return pd.concat(fronts, ignore_index=True) if fronts else table.iloc[0:0]


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def plot_pareto_per_workload(
    table,
    path: str | Path,
    *,
    by: str = "workload",
    energy: str = "energy_pJ",
    latency: str = "latency_cycles",
    colour_by: str = "accelerator",
    marker_by: str = "opt",
    title: str | None = None,
) -> Path:
    """One panel per workload: every experiment on the energy-latency plane, coloured by
    accelerator, shaped by optimisation target, with that workload's Pareto front (a dashed
    staircase through the red-edged points). Fronts never mix workloads.
    """
    from matplotlib import colormaps
    from matplotlib.lines import Line2D

    valid = table.dropna(subset=[energy, latency])
    groups = list(valid.groupby(by, sort=False))
    columns = min(len(groups), 2) or 1
    rows = -(-len(groups) // columns) or 1
    figure = _new_figure(6.2 * columns + 2.4, 4.3 * rows + 0.6)
    axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False)).ravel()
    colour_values = list(dict.fromkeys(valid[colour_by])) if colour_by in valid else []
    palette = colormaps["tab10"]
    colour = {v: palette(i % 10) for i, v in enumerate(colour_values)}
    marker_values = list(dict.fromkeys(valid[marker_by])) if marker_by in valid else []
    marker = {v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(marker_values)}
    for ax, (workload, group) in zip(axes, groups):
        front = pareto_front(group, energy=energy, latency=latency)
        on_front = set(map(tuple, front[[energy, latency]].to_numpy(dtype=float)))
        for _, row in group.iterrows():
            point = (float(row[energy]), float(row[latency]))
            ax.scatter(
                point[0] * PJ,
                point[1],
                s=60 if point in on_front else 34,
                color=colour.get(row.get(colour_by), "#4c72b0"),
                marker=marker.get(row.get(marker_by), "o"),
                edgecolor="#d62728" if point in on_front else "black",
                linewidth=1.8 if point in on_front else 0.5,
                zorder=3,
            )
        fx, fy = front[energy].to_numpy(dtype=float) * PJ, front[latency].to_numpy(dtype=float)
        if len(fx) > 1:
            ax.step(fx, fy, where="post", color="#d62728", linestyle="--", linewidth=1.1, zorder=2)
        x = group[energy].to_numpy(dtype=float) * PJ
        y = group[latency].to_numpy(dtype=float)
        _energy_latency_axes(ax, x, y)
        ax.margins(0.15)
        ax.grid(alpha=0.3)
        ax.set_title(f"{workload}: {len(front)} of {len(group)} on the front", fontsize=10)
        ax.set_xlabel("Energy (J, lower is better)", fontsize=9)
        ax.set_ylabel("Latency (cycles, lower is better)", fontsize=9)
    for ax in axes[len(groups) :]:
        ax.set_axis_off()
    handles = [
        Line2D([], [], linestyle="", marker="o", markersize=8, color=colour[v], label=str(v))
        for v in colour_values
    ]
    handles += [
        Line2D(
            [],
            [],
            linestyle="",
            marker=marker[v],
            markersize=7,
            color="#777777",
            label=f"{marker_by} {v}",
        )
        for v in marker_values
    ]
    handles.append(
        Line2D(
            [],
            [],
            color="#d62728",
            linestyle="--",
            marker="o",
            markerfacecolor="white",
            markeredgecolor="#d62728",
            label="Pareto front of the workload",
        )
    )
    figure.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    figure.suptitle(
        title or f"Energy vs latency per workload ({len(valid)} experiments)", fontsize=11
    )
    return _save(figure, path, tight=False)  # the constrained layout fits the legend already
