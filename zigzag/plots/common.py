"""Drawing helpers shared by the figures: Agg figures, atomic saving, stacked bars, legends."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from zigzag.io.atomic import atomic_target

PJ = 1e-12  # joules per picojoule


def _union_in_order(dicts: Iterable[dict]) -> list[str]:
    keys: dict[str, None] = {}
    for d in dicts:
        keys.update(dict.fromkeys(d))
    return list(keys)


def _new_figure(width: float, height: float, *, layout: str | None = "constrained") -> Figure:
    """An Agg figure; ``layout=None`` for figures placing their axes themselves (one draw pass
    when saved with ``tight=False``, instead of three)."""
    figure = Figure(figsize=(min(width, 40.0), min(height, 40.0)), layout=layout)
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, path: str | Path, *, dpi: int = 150, tight: bool = True) -> Path:
    """Write the figure atomically (temporary file in the same folder, then a rename).

    ``tight``: crop to the drawn content (costs one more draw pass)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    with atomic_target(path) as tmp:
        figure.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight" if tight else None)
    return path


def _stacked_bars(
    ax,
    components: list[dict[str, float]],
    keys: Sequence[str],
    colours: dict,
    *,
    scale: float = 1.0,
) -> np.ndarray:
    """One stacked bar per entry; positive parts stack upwards from 0, negative ones downwards.

    Returns the bar totals (sum of all parts, scaled).
    """
    positions = np.arange(len(components))
    width = 0.8 if len(components) < 200 else 1.0
    up = np.zeros(len(components))
    down = np.zeros(len(components))
    for key in keys:
        values = np.array([c.get(key, 0.0) for c in components], dtype=float) * scale
        if not np.any(values):
            continue
        bottoms = np.where(values >= 0, up, down)
        ax.bar(
            positions,
            values,
            width,
            bottom=bottoms,
            label=key,
            color=colours.get(key),
            edgecolor="white" if len(components) <= 60 else "none",
            linewidth=0.4,
        )
        up += np.where(values >= 0, values, 0.0)
        down += np.where(values < 0, values, 0.0)
    if np.any(down < 0):
        ax.axhline(0.0, color="black", linewidth=0.6)
    # explicit limits: the bars' bottoms are "sticky" and would swallow the autoscale margin
    low, high = min(float(down.min(initial=0.0)), 0.0), max(float(up.max(initial=0.0)), 0.0)
    pad = 0.1 * (high - low) or 1.0
    ax.set_ylim(low - pad if low < 0 else 0.0, high + pad)
    return up + down


def _label_categories(ax, labels: Sequence[str], xlabel: str) -> None:
    ax.set_xlabel(xlabel)
    count = len(labels)
    if count > 60:  # too many to name: numbered axis
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(-1, count)
        return
    ax.set_xticks(np.arange(count))
    rotate = count > 6 or max((len(str(l)) for l in labels), default=0) > 10
    ax.set_xticklabels(
        [str(l) for l in labels],
        rotation=60 if rotate else 0,
        ha="right" if rotate else "center",
        fontsize=8 if count > 20 else 9,
    )
    ax.set_xlim(-0.6, count - 0.4)


def _annotate_totals(ax, totals: np.ndarray, formatter) -> None:
    """The total above each bar (when there are few enough bars to read them)."""
    if len(totals) > 24:
        return
    vertical = len(totals) > 8
    for x, total in enumerate(totals):
        ax.annotate(
            formatter(total),
            (x, max(total, 0.0)),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            rotation=90 if vertical else 0,
        )
    if vertical:  # room for the rotated labels
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.12 * (high - low))


def _legend_outside(ax, *, title: str | None = None) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    # reversed: the legend lists the parts in the order they are stacked (top first)
    ax.legend(
        handles[::-1],
        labels[::-1],
        title=title,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title_fontsize=9,
        frameon=False,
        ncols=1 if len(handles) <= 24 else 2,
    )


def plot_message(path: str | Path, title: str, message: str) -> Path:
    """A figure holding only a title and a message, e.g. why an experiment has no results."""
    figure = _new_figure(6.0, 2.0, layout=None)
    figure.text(0.5, 0.7, title, ha="center", va="center", fontsize=11, weight="bold")
    figure.text(0.5, 0.35, textwrap.fill(message, 90), ha="center", va="center", fontsize=8)
    return _save(figure, path, tight=False)
