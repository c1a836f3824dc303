"""Per-layer energy and latency breakdowns (stacked bars)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib.ticker import EngFormatter, MaxNLocator

from zigzag.plots.common import (
    PJ,
    _annotate_totals,
    _label_categories,
    _legend_outside,
    _new_figure,
    _save,
    _stacked_bars,
    _union_in_order,
)

#: latency components, bottom of the stack first
LATENCY_COMPONENTS = (
    "ideal computation",
    "spatial under-utilisation",
    "memory stalls",
    "on-loading",
    "off-loading",
)
_LATENCY_COLOURS = ("#4c72b0", "#8da0cb", "#dd8452", "#55a868", "#c44e52")
_MAC_COLOUR = "#7f7f7f"
#: label prefix of the parts of an in-memory-computing array's energy
IMC_PREFIX = "IMC "
_OPERAND_COLOURMAPS = ("Blues", "Oranges", "Greens", "Purples", "Reds", "YlOrBr", "Greys")


def energy_components(result) -> dict[str, float]:
    """``{"MAC": ..., "<operand>@<memory>": ...}`` in pJ; the values add up to ``energy_total``.

    An in-memory-computing array's energy comes in its non-zero parts instead of "MAC"
    (``IMC adcs``, ``IMC mults``, ...). Memory entries come per layer operand (in the result's
    order), innermost level first.
    """
    imc_parts = getattr(result, "mac_energy_breakdown", None)
    if imc_parts:
        components = {f"{IMC_PREFIX}{part}": float(e) for part, e in imc_parts.items() if e}
    else:
        components = {"MAC": float(result.mac_energy)}
    names = getattr(result, "memory_names", {}) or {}
    for operand, levels in result.mem_energy_breakdown.items():
        operand_names = names.get(operand, ())
        for level, energy in enumerate(levels):
            memory = operand_names[level] if level < len(operand_names) else f"L{level}"
            key = f"{operand}@{memory}"
            components[key] = components.get(key, 0.0) + float(energy)
    return components


def latency_components(result) -> dict[str, float]:
    """The cycles of ``latency_total2`` split into :data:`LATENCY_COMPONENTS` (they add up to it).

    * ideal computation: ``ideal_cycle`` (all MAC units busy all the time)
    * spatial under-utilisation: ``ideal_temporal_cycle - ideal_cycle`` (idle MAC units)
    * memory stalls: ``latency_total0 - ideal_temporal_cycle`` (ports too slow)
    * on-loading: ``latency_total1 - latency_total0`` (filling the memories before computing)
    * off-loading: ``latency_total2 - latency_total1`` (draining the outputs afterwards)
    """
    ideal = float(result.ideal_cycle)
    temporal = float(result.ideal_temporal_cycle)
    total0 = float(result.latency_total0)
    total1 = float(result.latency_total1)
    total2 = float(result.latency_total2)
    values = (ideal, temporal - ideal, total0 - temporal, total1 - total0, total2 - total1)
    return dict(zip(LATENCY_COMPONENTS, values))


def _energy_colours(keys: Sequence[str]) -> dict[str, object]:
    """MAC in grey; one colour family per operand, darker for higher memory levels."""
    from matplotlib import colormaps

    operands = list(dict.fromkeys(k.split("@", 1)[0] for k in keys if "@" in k))
    colours: dict[str, object] = {"MAC": _MAC_COLOUR}
    imc_parts = [k for k in keys if k.startswith(IMC_PREFIX)]
    for index, key in enumerate(imc_parts):
        colours[key] = colormaps["Greys"](0.3 + 0.6 * index / max(len(imc_parts) - 1, 1))
    for index, operand in enumerate(operands):
        cmap = colormaps[_OPERAND_COLOURMAPS[index % len(_OPERAND_COLOURMAPS)]]
        own = [k for k in keys if k.startswith(f"{operand}@")]
        for level, key in enumerate(own):
            shade = 0.35 + 0.5 * (level / (len(own) - 1) if len(own) > 1 else 0.5)
            colours[key] = cmap(shade)
    return colours


def _energy_axes(ax, results, labels, xlabel) -> None:
    components = [energy_components(r) for r in results]
    keys = _union_in_order(components)
    totals = _stacked_bars(ax, components, keys, _energy_colours(keys), scale=PJ)
    formatter = EngFormatter(unit="J", places=1)
    ax.yaxis.set_major_formatter(EngFormatter(unit="J"))
    ax.set_ylabel("Energy (J)")
    _label_categories(ax, labels, xlabel)
    _annotate_totals(ax, totals, formatter)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend_outside(ax, title="MAC (or IMC parts) / operand@memory")


def _latency_axes(ax, results, labels, xlabel) -> None:
    components = [latency_components(r) for r in results]
    colours = dict(zip(LATENCY_COMPONENTS, _LATENCY_COLOURS))
    totals = _stacked_bars(ax, components, LATENCY_COMPONENTS, colours)
    ax.yaxis.set_major_formatter(EngFormatter())
    ax.set_ylabel("Latency (cycles)")
    _label_categories(ax, labels, xlabel)
    _annotate_totals(ax, totals, EngFormatter(places=1))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend_outside(ax, title="cycles spent on")


def _subtitle(results) -> str:
    names = {getattr(r, "accelerator_name", None) for r in results} - {None}
    return f" on {names.pop()}" if len(names) == 1 else ""


def _layer_labels(results) -> list[str]:
    """Layer names (a network sum has none: it is labelled "network")."""
    return [str(getattr(r, "layer_name", None) or "network") for r in results]


def _bar_figure_width(count: int) -> float:
    """Inches: room for a named bar per category, a fixed width once the axis is numbered."""
    return max(7.0, 3.5 + 0.32 * count) if count <= 60 else 16.0


def plot_energy_breakdown(results: Sequence, path: str | Path, *, title: str | None = None) -> Path:
    """Stacked bar per layer: MAC energy and the energy of each memory level of each operand.

    Parts are labelled ``<layer operand>@<memory>`` (e.g. ``O@rf_2B``); bars are in the order given.
    """
    return _layer_bars(results, path, _energy_axes, title, "Energy breakdown per layer")


def plot_latency_breakdown(
    results: Sequence, path: str | Path, *, title: str | None = None
) -> Path:
    """Stacked bar per layer of :func:`latency_components` (adds up to ``latency_total2``)."""
    return _layer_bars(results, path, _latency_axes, title, "Latency breakdown per layer")


def _layer_bars(
    results: Sequence, path: str | Path, draw, title: str | None, default_title: str
) -> Path:
    """One figure of bars per layer drawn by ``draw`` (:func:`_energy_axes` or :func:`_latency_axes`)."""
    results = list(results)
    figure = _new_figure(_bar_figure_width(len(results)), 4.8)
    ax = figure.add_subplot()
    draw(ax, results, _layer_labels(results), "Layer")
    ax.set_title(title or f"{default_title}{_subtitle(results)}")
    return _save(figure, path)


def plot_energy_and_latency(
    results: Sequence,
    path: str | Path,
    *,
    labels: Sequence[str] | None = None,
    xlabel: str = "Layer",
    title: str | None = None,
) -> Path:
    """Energy (top) and latency (bottom) breakdown of several evaluations, one bar each
    (labelled with the layer names unless ``labels`` are given)."""
    results = list(results)
    figure = _new_figure(_bar_figure_width(len(results)), 8.5)
    energy_ax, latency_ax = figure.subplots(2, 1, sharex=True)
    labels = list(labels) if labels is not None else _layer_labels(results)
    _energy_axes(energy_ax, results, labels, "")
    _latency_axes(latency_ax, results, labels, xlabel)
    energy_ax.set_title(title or f"Energy and latency breakdown{_subtitle(results)}")
    return _save(figure, path)


def plot_temporal_mapping_breakdowns(
    results: Sequence, path: str | Path, *, title: str | None = None
) -> Path:
    """Energy (top) and latency (bottom) breakdown of many evaluations, e.g. every temporal
    mapping a search tried for one layer (what ZigZag's PlotTemporalMappingsStage saves)."""
    results = list(results)
    layers = list(dict.fromkeys(_layer_labels(results)))
    which = f" of {layers[0]}" if len(layers) == 1 else ""
    return plot_energy_and_latency(
        results,
        path,
        labels=[str(i) for i in range(len(results))],
        xlabel="Candidate mapping (evaluation order)",
        title=title or f"{len(results)} evaluated mappings{which}{_subtitle(results)}",
    )


# =============================================================================================
# Both breakdowns of a network, one horizontal bar per layer (readable for 50-200 layers)
# =============================================================================================


def _horizontal_stack(
    ax,
    components: list[dict[str, float]],
    keys: Sequence[str],
    colours: dict,
    *,
    scale: float = 1.0,
) -> np.ndarray:
    """One horizontal stacked bar per entry, first entry on top; negative parts go left of 0.

    Each part is one PolyCollection (one artist per part, not per bar), so hundreds of layers
    draw quickly. Returns the bar totals (scaled).
    """
    from matplotlib.collections import PolyCollection

    count = len(components)
    y = np.arange(count, dtype=float)
    half = 0.4 if count <= 150 else 0.5
    right, left = np.zeros(count), np.zeros(count)
    for key in keys:
        values = np.array([c.get(key, 0.0) for c in components], dtype=float) * scale
        if not np.any(values):
            continue
        start = np.where(values >= 0, right, left)
        end = start + values
        verts = np.stack(
            [
                np.stack([start, y - half], 1),
                np.stack([end, y - half], 1),
                np.stack([end, y + half], 1),
                np.stack([start, y + half], 1),
            ],
            axis=1,
        )
        ax.add_collection(
            PolyCollection(verts, facecolors=[colours.get(key)], edgecolors="none", label=key)
        )
        right += np.where(values >= 0, values, 0.0)
        left += np.where(values < 0, values, 0.0)
    low, high = min(float(left.min(initial=0.0)), 0.0), max(float(right.max(initial=0.0)), 0.0)
    pad = 0.04 * (high - low) or 1.0
    ax.set_xlim(low - pad if low < 0 else 0.0, high + pad)
    ax.set_ylim(count - 0.5, -0.5)  # first layer on top
    if low < 0:
        ax.axvline(0.0, color="black", linewidth=0.6)
    return right + left


def _short_label(name: str, limit: int = 42) -> str:
    """The layer's name without the path parts its next part repeats (ONNX exports name nodes
    ``/features/features.1/conv/conv.0/Conv``: shown ``features.1/conv.0/Conv``), cut to ``limit``."""
    parts = name.strip("/").split("/")
    kept = [
        part for part, after in zip(parts, parts[1:]) if not after.startswith(part + ".")
    ] + parts[-1:]
    name = "/".join(kept) if len(parts) > 1 else name
    return name if len(name) <= limit else "\u2026" + name[-(limit - 1) :]


def plot_layer_breakdowns(results: Sequence, path: str | Path, *, title: str | None = None) -> Path:
    """Energy (left) and latency (right) of every layer as horizontal stacked bars, layers top
    to bottom in the order given, named on the shared vertical axis.

    The figure grows with the number of layers (0.16 inch per layer), so 50-200 layers stay
    readable; the network totals are in the legends' titles. Axes are placed by hand (no
    layout engine, one draw pass), which keeps a 200-layer figure well under a second.
    """
    results = list(results)
    count = len(results)
    labels = [_short_label(label) for label in _layer_labels(results)]
    energy = [energy_components(r) for r in results]
    keys = _union_in_order(energy)

    fontsize = 7 if count <= 80 else 5.5
    row = 0.16 if count <= 80 else 0.12
    legend_rows = max(-(-(len(keys)) // 3), 2)
    left = 0.3 + 0.62 * fontsize / 72 * max((len(label) for label in labels), default=4)
    top = 0.45 + 0.15 * legend_rows + 0.3
    bottom, right, gap, width = 0.55, 0.25, 0.35, 13.0
    height = max(row * count, 1.6) + top + bottom
    figure = _new_figure(width, height, layout=None)
    panel = (width - left - right - gap) / 2
    boxes = [(left, panel), (left + panel + gap, panel)]
    energy_ax = figure.add_axes(
        (boxes[0][0] / width, bottom / height, boxes[0][1] / width, 1 - (top + bottom) / height)
    )
    latency_ax = figure.add_axes(
        (boxes[1][0] / width, bottom / height, boxes[1][1] / width, 1 - (top + bottom) / height)
    )

    energy_totals = _horizontal_stack(energy_ax, energy, keys, _energy_colours(keys), scale=PJ)
    latency = [latency_components(r) for r in results]
    latency_totals = _horizontal_stack(
        latency_ax, latency, LATENCY_COMPONENTS, dict(zip(LATENCY_COMPONENTS, _LATENCY_COLOURS))
    )

    # layer names as plain texts beside the rows (cheaper to draw than one tick per layer)
    for ax in (energy_ax, latency_ax):
        ax.set_yticks([])
    names = energy_ax.get_yaxis_transform()  # x in axes fraction, y in rows
    for y, label in enumerate(labels):
        energy_ax.text(-0.01, y, label, transform=names, ha="right", va="center", fontsize=fontsize)
    energy_ax.xaxis.set_major_formatter(EngFormatter(unit="J"))
    latency_ax.xaxis.set_major_formatter(EngFormatter())
    energy_ax.set_xlabel("Energy (J)", fontsize=9)
    latency_ax.set_xlabel("Latency (cycles)", fontsize=9)
    total_energy = EngFormatter(unit="J", places=3)(float(energy_totals.sum()))
    total_latency = EngFormatter(places=3)(float(latency_totals.sum()))
    for ax, legend_title in (
        (energy_ax, f"energy: MAC / operand@memory (total {total_energy})"),
        (latency_ax, f"cycles spent on (total {total_latency})"),
    ):
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.tick_params(axis="x", labelsize=8)
        handles, names = ax.get_legend_handles_labels()
        ax.legend(
            handles,
            names,
            title=legend_title,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncols=3,
            fontsize=7,
            title_fontsize=8,
            frameon=False,
            borderaxespad=0.2,
            alignment="left",
        )
    if any(parts["on-loading"] < 0 for parts in latency):
        figure.text(
            1 - right / width,
            0.08 / height,
            "negative on-loading (left of 0): ZigZag's estimate of loading "
            "hidden behind computation, kept as the reference computes it",
            ha="right",
            va="bottom",
            fontsize=7,
            color="#555555",
        )
    figure.suptitle(
        title or f"Energy and latency per layer{_subtitle(results)}",
        fontsize=11,
        y=1 - 0.12 / height,
        va="top",
    )
    return _save(figure, path, dpi=100, tight=False)
