"""Figures of LLM steps: the roofline per layer, and per-token figures against a workload
parameter (context length, batch) from a sweep's rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from zigzag.plots.common import _new_figure, _save


def plot_roofline(rows, path: str | Path) -> Path:
    """One panel per memory: every layer at its arithmetic intensity there (ops per byte moved
    through that memory) and the ops per cycle it achieves, under the roofs min(peak,
    bandwidth x intensity); the colour says what bounds the layer (``compute`` or a memory)."""
    memories = list(
        dict.fromkeys(m.memory for row in rows for m in row.memories if m.intensity is not None)
    )
    bounds = list(dict.fromkeys(row.bound for row in rows))
    figure = _new_figure(3.6 * max(1, len(memories)), 3.4)
    axes = figure.subplots(1, max(1, len(memories)), squeeze=False)[0]
    for ax, memory in zip(axes, memories):
        points = [
            (row, next(m for m in row.memories if m.memory == memory))
            for row in rows
            if any(m.memory == memory and m.intensity is not None for m in row.memories)
        ]
        xs = np.array([m.intensity for _, m in points])
        low, high = xs.min() / 4, xs.max() * 4
        grid = np.geomspace(low, high, 200)
        for peak, bandwidth in sorted(
            {(row.peak, m.bandwidth_bytes_per_cycle) for row, m in points}
        ):
            ax.plot(grid, np.minimum(peak, bandwidth * grid), color="grey", linewidth=1)
        for colour, bound in enumerate(bounds):
            chosen = [(row, m) for row, m in points if row.bound == bound]
            if chosen:
                ax.scatter(
                    [m.intensity for _, m in chosen],
                    [max(row.achieved, 1e-9) for row, _ in chosen],
                    s=16,
                    color=f"C{colour}",
                    label=f"bound: {bound}",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"ops per byte of {memory}")
        ax.set_title(memory, fontsize=10)
    axes[0].set_ylabel("ops per cycle (achieved; roofs in grey)")
    if memories:
        axes[-1].legend(fontsize="small")
    figure.suptitle("roofline per layer")
    return _save(figure, path)


#: per-token metrics drawn against a workload parameter: column -> axis label
TOKEN_METRICS = {
    "tpot_s": "time per output token (s)",
    "ttft_s": "time to first token (s)",
    "energy_per_token_J": "energy per token (J)",
    "tokens_per_s": "tokens/s",
}


def plot_tokens_vs(
    rows: list[dict], parameter: str, path: str | Path, *, series: list[str] | None = None
) -> Path:
    """Per-token figures of a sweep's rows against ``parameter`` (e.g. context or batch): one
    panel per metric present, one line per variant and value of the ``series`` columns."""
    ran = [r for r in rows if r.get("status") in ("ok", "out") and r.get(parameter) is not None]
    metrics = [m for m in TOKEN_METRICS if any(r.get(m) is not None for r in ran)]
    series = series or []
    figure = _new_figure(3.4 * max(1, len(metrics)), 3.2)
    axes = figure.subplots(1, max(1, len(metrics)), squeeze=False)[0]
    lines: dict[str, list[dict]] = {}
    for row in ran:
        label = " ".join(
            [str(row.get("variant", "")), str(row.get("workload", ""))]
            + [f"{c}={row.get(c)}" for c in series if c != parameter]
        )
        lines.setdefault(label, []).append(row)
    for ax, metric in zip(axes, metrics):
        for colour, (label, chosen) in enumerate(lines.items()):
            chosen = sorted(
                (r for r in chosen if r.get(metric) is not None), key=lambda r: float(r[parameter])
            )
            ax.plot(
                [float(r[parameter]) for r in chosen],
                [float(r[metric]) for r in chosen],
                marker="o",
                markersize=3,
                color=f"C{colour % 10}",
                label=label,
            )
        ax.set_xlabel(parameter)
        ax.set_ylabel(TOKEN_METRICS[metric])
        ax.set_xscale("log", base=2)
    if metrics and lines:
        axes[-1].legend(fontsize="x-small")
    figure.suptitle(f"per-token figures vs {parameter}")
    return _save(figure, path)


def plot_tokens_grid(
    rows: list[dict], across: str, down: str, path: str | Path, *, metric: str = "tpot_s"
) -> Path:
    """A heat map of one per-token metric (default time per output token) over two parameters,
    e.g. an SRAM size (``across``) and the context length (``down``); a cell holds the mean over
    the rows sharing its two values (other varied fields are averaged)."""
    ran = [r for r in rows if r.get("status") in ("ok", "out") and r.get(metric) is not None]
    xs = sorted({r.get(across) for r in ran}, key=_order)
    ys = sorted({r.get(down) for r in ran}, key=_order)
    grid = np.full((len(ys), len(xs)), np.nan)
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            values = [float(r[metric]) for r in ran if r.get(across) == x and r.get(down) == y]
            if values:
                grid[i, j] = sum(values) / len(values)
    figure = _new_figure(1.2 * len(xs) + 3, 0.5 * len(ys) + 2)
    ax = figure.subplots()
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=45, ha="right")
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(across)
    ax.set_ylabel(down)
    middle = np.nanmean(grid)
    for i in range(len(ys)):
        for j in range(len(xs)):
            if not np.isnan(grid[i, j]):
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.3g}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black" if grid[i, j] > middle else "white",
                )
    figure.colorbar(image, ax=ax, label=TOKEN_METRICS.get(metric, metric))
    return _save(figure, path)


def _order(value):
    """Numbers in numeric order, then texts (sizes such as 1MiB are texts)."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))
