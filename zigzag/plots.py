"""Figures and text views of cost-model results (issue #8, spec search.md §G.4).

Every ``plot_*`` function takes data and a file path, draws one figure and writes it (the format
follows the path's extension: png, svg, pdf, ...). Figures are made with matplotlib's
object-oriented API on an Agg canvas, so nothing here touches pyplot's global state or needs a
display.

* :func:`plot_energy_breakdown` - per layer: MAC energy plus every (operand, memory) pair
* :func:`plot_latency_breakdown` - per layer: ideal cycles, spatial under-utilisation, stalls,
  on-loading and off-loading (they add up to ``latency_total2``)
* :func:`plot_temporal_mapping_breakdowns` - both breakdowns for many candidate mappings
* :func:`plot_memory_hierarchy` - the accelerator's memory graph
* :func:`plot_experiments_comparison` / :func:`pareto_front` - experiments on an
  energy-latency plane
* :func:`loop_nest_text` - ZigZag's "Loop ordering for <layer>" text (print_mapping format)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator, NullFormatter

PJ = 1e-12  # joules per picojoule

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
_OPERAND_COLOURMAPS = ("Blues", "Oranges", "Greens", "Purples", "Reds", "YlOrBr", "Greys")


# =============================================================================================
# Components
# =============================================================================================


def energy_components(result) -> dict[str, float]:
    """``{"MAC": ..., "<operand>@<memory>": ...}`` in pJ; the values add up to ``energy_total``.

    Memory entries come per layer operand (in the result's order), innermost level first.
    """
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


def _union_in_order(dicts: Iterable[dict]) -> list[str]:
    keys: dict[str, None] = {}
    for d in dicts:
        keys.update(dict.fromkeys(d))
    return list(keys)


def _energy_colours(keys: Sequence[str]) -> dict[str, object]:
    """MAC in grey; one colour family per operand, darker for higher memory levels."""
    from matplotlib import colormaps

    operands = list(dict.fromkeys(k.split("@", 1)[0] for k in keys if "@" in k))
    colours: dict[str, object] = {"MAC": _MAC_COLOUR}
    for index, operand in enumerate(operands):
        cmap = colormaps[_OPERAND_COLOURMAPS[index % len(_OPERAND_COLOURMAPS)]]
        own = [k for k in keys if k.startswith(f"{operand}@")]
        for level, key in enumerate(own):
            shade = 0.35 + 0.5 * (level / (len(own) - 1) if len(own) > 1 else 0.5)
            colours[key] = cmap(shade)
    return colours


# =============================================================================================
# Drawing helpers
# =============================================================================================


def _new_figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(min(width, 40.0), min(height, 30.0)), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Write the figure atomically (temporary file in the same folder, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = path.suffix.lstrip(".").lower() or "png"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".{fmt}")
    os.close(fd)
    try:
        figure.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _stacked_bars(ax, components: list[dict[str, float]], keys: Sequence[str], colours: dict, *,
                  scale: float = 1.0) -> np.ndarray:
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
        ax.bar(positions, values, width, bottom=bottoms, label=key, color=colours.get(key),
               edgecolor="white" if len(components) <= 60 else "none", linewidth=0.4)
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
    ax.set_xticklabels([str(l) for l in labels], rotation=60 if rotate else 0,
                       ha="right" if rotate else "center", fontsize=8 if count > 20 else 9)
    ax.set_xlim(-0.6, count - 0.4)


def _annotate_totals(ax, totals: np.ndarray, formatter) -> None:
    """The total above each bar (when there are few enough bars to read them)."""
    if len(totals) > 24:
        return
    vertical = len(totals) > 8
    for x, total in enumerate(totals):
        ax.annotate(formatter(total), (x, max(total, 0.0)), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=7, rotation=90 if vertical else 0)
    if vertical:  # room for the rotated labels
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.12 * (high - low))


def _legend_outside(ax, *, title: str | None = None) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    # reversed: the legend lists the parts in the order they are stacked (top first)
    ax.legend(handles[::-1], labels[::-1], title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, title_fontsize=9, frameon=False, ncols=1 if len(handles) <= 24 else 2)


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
    _legend_outside(ax, title="MAC / operand@memory")


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


# =============================================================================================
# Per-layer breakdowns
# =============================================================================================


def plot_energy_breakdown(results: Sequence, path: str | Path, *, title: str | None = None) -> Path:
    """Stacked bar per layer: MAC energy and the energy of each memory level of each operand.

    Parts are labelled ``<layer operand>@<memory>`` (e.g. ``O@rf_2B``); bars are in the order given.
    """
    results = list(results)
    figure = _new_figure(_bar_figure_width(len(results)), 4.8)
    ax = figure.add_subplot()
    _energy_axes(ax, results, _layer_labels(results), "Layer")
    ax.set_title(title or f"Energy breakdown per layer{_subtitle(results)}")
    return _save(figure, path)


def plot_latency_breakdown(results: Sequence, path: str | Path, *, title: str | None = None) -> Path:
    """Stacked bar per layer of :func:`latency_components` (adds up to ``latency_total2``)."""
    results = list(results)
    figure = _new_figure(_bar_figure_width(len(results)), 4.8)
    ax = figure.add_subplot()
    _latency_axes(ax, results, _layer_labels(results), "Layer")
    ax.set_title(title or f"Latency breakdown per layer{_subtitle(results)}")
    return _save(figure, path)


def plot_energy_and_latency(results: Sequence, path: str | Path, *, labels: Sequence[str] | None = None,
                            xlabel: str = "Layer", title: str | None = None) -> Path:
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


def plot_temporal_mapping_breakdowns(results: Sequence, path: str | Path, *, title: str | None = None) -> Path:
    """Energy (top) and latency (bottom) breakdown of many evaluations, e.g. every temporal
    mapping a search tried for one layer (what ZigZag's PlotTemporalMappingsStage saves)."""
    results = list(results)
    layers = list(dict.fromkeys(_layer_labels(results)))
    which = f" of {layers[0]}" if len(layers) == 1 else ""
    return plot_energy_and_latency(
        results, path, labels=[str(i) for i in range(len(results))], xlabel="Candidate mapping (evaluation order)",
        title=title or f"{len(results)} evaluated mappings{which}{_subtitle(results)}",
    )


# =============================================================================================
# Loop nest text (ZigZag's print_mapping)
# =============================================================================================


def _size_text(size) -> str:
    if isinstance(size, float) and size.is_integer():
        return str(int(size))
    return str(size)


def _output_operand(result) -> str:
    operands = list(result.temporal_mapping_stationary)
    return "O" if "O" in operands else operands[0]


def loop_nest_text(result, operands: Sequence[str] | None = None, *, indent: int = 2) -> str:
    """The loop nest of one result as ZigZag's ``print_mapping`` prints it.

    ``Loop ordering for <layer>``, then a "Temporal Loops" table (outermost loop first, one
    ``for <dim> in [0, <size>):`` line per loop of the output operand's stationary temporal
    mapping, with for every layer operand the memory that holds the loop; ``indent`` more spaces
    per nesting level), then a "Spatial Loops" table of ``parfor`` lines (the output operand's
    integer spatial mapping, reversed), all framed by ``=``/``-`` rules, and a blank line.

    ``operands``: the layer operands' column order; ZigZag uses the order of the mapping's
    ``memory_operand_links`` (default: the result's own operand order, output first).
    Results without a loop nest (network sums) give ``""``.
    """
    stationary = getattr(result, "temporal_mapping_stationary", None)
    if not stationary:
        return ""
    operands = list(operands) if operands is not None else list(result.memory_names)
    output = _output_operand(result)

    # which memory holds each loop of the output's nest, per operand (innermost loop first;
    # a loop found at some level of an operand is used up there, so equal loops move outwards)
    remaining = {op: [list(level) for level in stationary.get(op, ())] for op in operands}
    temporal = []
    for loop in (tuple(l) for level in stationary[output] for l in level):
        holders = []
        for op in operands:
            levels = remaining[op]
            found = next((k for k, level in enumerate(levels) if any(tuple(l) == loop for l in level)), None)
            if found is None:
                holders.append("")
                continue
            level = levels[found]
            level.pop(next(i for i, l in enumerate(level) if tuple(l) == loop))
            names = result.memory_names.get(op, ())
            holders.append(names[found] if found < len(names) else f"L{found}")
        temporal.append((loop[0], loop[1], holders))
    temporal.reverse()

    spatial = [(dim, size) for level in result.spatial_mapping.get(output, ()) for dim, size in level]
    spatial.reverse()

    loop_width = max((len(str(dim)) for dim, _, _ in temporal), default=0) + 14 \
        + indent * (len(temporal) + len(spatial)) + 5
    memory_width = max((len(name) for _, _, holders in temporal for name in holders), default=0) + 5
    rule_width = loop_width + len(operands) * memory_width

    lines = [f"Loop ordering for {result.layer_name}"]

    def header(text: str, columns: Sequence[str]) -> None:
        lines.append("=" * rule_width)
        lines.append(text.ljust(loop_width) + "".join(c.ljust(memory_width) for c in columns))
        lines.append("=" * rule_width)

    def loop_line(depth: int, keyword: str, dim, size, columns: Sequence[str]) -> None:
        head = f"{' ' * depth}{keyword} {dim} in [0, {_size_text(size)}):"
        lines.append(head.ljust(loop_width) + "".join(c.ljust(memory_width) for c in columns))
        lines.append("-" * rule_width)

    header("Temporal Loops", operands)
    for depth, (dim, size, holders) in enumerate(temporal):
        loop_line(indent * depth, "for", dim, size, holders)
    header("Spatial Loops", [""] * len(operands))
    for dim, size in spatial:
        loop_line(indent * len(temporal), "parfor", dim, size, [""] * len(operands))
    return "\n".join(lines) + "\n\n"


# =============================================================================================
# Memory hierarchy
# =============================================================================================


def _operands_text(memory) -> str:
    return ", ".join(memory.operands)


def _layered_layout(rows: list[list[str]], edges: list[tuple[str, str]]):
    """A small layered (Sugiyama-style) layout: rows bottom-up, edges from a lower to a higher row.

    Edges spanning several rows get one invisible bend point per row crossed, so they run
    between the boxes instead of through them; each row is ordered by the mean position of
    its neighbours below (then above), then placed at its neighbours' mean x without overlaps.
    Returns ``({node or bend point: (x, row)}, [route of each edge as a list of (x, row) points])``.
    """
    row_of = {n: r for r, names in enumerate(rows) for n in names}
    rows = [list(names) for names in rows]
    width = {n: 1.0 for names in rows for n in names}
    routes_nodes = []
    for k, (low, high) in enumerate(edges):
        route = [low]
        for r in range(row_of[low] + 1, row_of[high]):
            bend = f"\0bend{k}.{r}"
            rows[r].append(bend)
            row_of[bend] = r
            width[bend] = 0.45
            route.append(bend)
        route.append(high)
        routes_nodes.append(route)
    below: dict[str, list[str]] = {n: [] for n in row_of}
    above: dict[str, list[str]] = {n: [] for n in row_of}
    for route in routes_nodes:
        for a, b in zip(route, route[1:]):
            above[a].append(b)
            below[b].append(a)

    def reorder(r: int, neighbours: dict[str, list[str]], reference: list[str]) -> None:
        index = {n: i for i, n in enumerate(reference)}
        current = {n: i for i, n in enumerate(rows[r])}

        def key(n):
            near = [index[m] for m in neighbours[n] if m in index]
            return sum(near) / len(near) if near else current[n] * len(reference) / max(len(rows[r]), 1)

        rows[r].sort(key=key)

    for _ in range(2):
        for r in range(1, len(rows)):
            reorder(r, below, rows[r - 1])
        for r in range(len(rows) - 2, 0, -1):
            reorder(r, above, rows[r + 1])

    x: dict[str, float] = {}
    for r, names in enumerate(rows):
        desired = []
        for n in names:
            near = [x[m] for m in below[n] if m in x]
            desired.append(sum(near) / len(near) if near else 0.0)
        placed = []
        for i, n in enumerate(names):
            value = desired[i]
            if placed:
                gap = (width[names[i - 1]] + width[n]) / 2
                value = max(value, placed[-1] + gap)
            placed.append(value)
        shift = (sum(desired) - sum(placed)) / len(names) if names else 0.0
        for n, value in zip(names, placed):
            x[n] = value + shift
    position = {n: (x[n], float(row_of[n])) for n in x}
    return position, [[position[n] for n in route] for route in routes_nodes]


def plot_memory_hierarchy(accelerator, path: str | Path, *, title: str | None = None) -> Path:
    """The accelerator's memory graph, innermost memories at the bottom and the MAC array below.

    Each memory is a box labelled ``<name>\\n<memory operands>\\nx<unroll_count>`` (its number
    of physical copies); rows are the graph's topological generations; links are labelled with
    the memory operands they carry (from the MAC array: each operand's innermost memory).
    """
    from matplotlib import colormaps

    graph = accelerator.graph
    listed = [m.name for m in accelerator.memories]
    generations = [sorted(g, key=listed.index) for g in nx.topological_generations(graph)]
    array_node = "\0array"
    links: dict[tuple[str, str], list[str]] = {}
    for operand in accelerator.memory_operands:
        links.setdefault((array_node, accelerator.hierarchy(operand)[0].name), []).append(operand)
    for lower, upper in graph.edges:
        links[(lower, upper)] = [op for op in accelerator.memory[lower].operands
                                 if op in accelerator.memory[upper].operands]
    position, routes = _layered_layout([[array_node]] + generations, list(links))

    xs = [p[0] for p in position.values()]
    span = max(xs) - min(xs) if xs else 0.0
    figure = _new_figure(max(6.0, 2.4 * (span + 1.0) + 1.0), 1.35 * (len(generations) + 1) + 1.0)
    ax = figure.add_subplot()
    ax.set_axis_off()

    cmap = colormaps["Blues"]
    boxes = {}
    for row, names in enumerate(generations, start=1):
        shade = cmap(0.15 + 0.45 * (row - 1) / max(len(generations) - 1, 1))
        for name in names:
            memory = accelerator.memory[name]
            label = f"{name}\n{_operands_text(memory)}\nx{accelerator.unroll_count(memory)}"
            boxes[name] = ax.text(*position[name], label, ha="center", va="center",
                                  fontsize=9 + min(row, 4) * 0.5, zorder=3,
                                  bbox=dict(boxstyle="square,pad=0.6", facecolor=shade,
                                            edgecolor="#1f3b73", linewidth=1.0))
    array = accelerator.operational_array
    dims = " x ".join(f"{d}={s}" for d, s in array.dimensions.items())
    boxes[array_node] = ax.text(*position[array_node], f"MAC array\n{dims}\n{array.total_units} units",
                                ha="center", va="center", fontsize=9, zorder=3,
                                bbox=dict(boxstyle="round,pad=0.6", facecolor="#eeeeee", edgecolor="#555555"))

    line = dict(color="#444444", linewidth=1.0)
    for ((lower, upper), operands), points in zip(links.items(), routes):
        low_box, high_box = boxes[lower].get_bbox_patch(), boxes[upper].get_bbox_patch()
        if len(points) == 2:
            ax.annotate("", xy=points[1], xytext=points[0], zorder=1,
                        arrowprops=dict(arrowstyle="<|-|>", mutation_scale=10, patchA=low_box, patchB=high_box,
                                        shrinkA=3, shrinkB=3, **line))
        else:
            ax.annotate("", xy=points[1], xytext=points[0], zorder=1,
                        arrowprops=dict(arrowstyle="<|-", mutation_scale=10, patchA=low_box, shrinkA=3,
                                        shrinkB=0, **line))
            for a, b in zip(points[1:-2], points[2:-1]):
                ax.plot([a[0], b[0]], [a[1], b[1]], zorder=1, **line)
            ax.annotate("", xy=points[-1], xytext=points[-2], zorder=1,
                        arrowprops=dict(arrowstyle="-|>", mutation_scale=10, patchB=high_box, shrinkA=0,
                                        shrinkB=3, **line))
        if operands:
            middle = (len(points) - 1) // 2
            a, b = points[middle], points[middle + 1]
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, ", ".join(operands), fontsize=7, color="#444444",
                    ha="center", va="center", zorder=2,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.9))

    ax.set_xlim(min(xs, default=0.0) - 0.6, max(xs, default=0.0) + 0.6)
    ax.set_ylim(-0.6, len(generations) + 0.6)
    ax.set_title(title or f"Memory hierarchy of {accelerator.name}\n"
                          "(box: memory, operands it holds, number of copies)", fontsize=11)
    return _save(figure, path)


# =============================================================================================
# Experiments
# =============================================================================================


def pareto_front(table, *, energy: str = "energy", latency: str = "latency"):
    """The experiments no other experiment beats on both energy and latency (minimising both).

    An experiment is dominated if another has energy and latency no larger and at least one of
    them smaller; equal points are all kept. Rows with a missing value are left out. Returns
    the non-dominated rows sorted by energy, then latency (index reset).
    """
    valid = table.dropna(subset=[energy, latency])
    e = valid[energy].to_numpy(dtype=float)
    l = valid[latency].to_numpy(dtype=float)
    no_worse = (e[None, :] <= e[:, None]) & (l[None, :] <= l[:, None])  # [i, j]: j no worse than i
    better = (e[None, :] < e[:, None]) | (l[None, :] < l[:, None])
    dominated = np.any(no_worse & better, axis=1)
    front = valid.loc[~dominated]
    return front.sort_values([energy, latency], kind="stable").reset_index(drop=True)


def _log_if_wide(values: np.ndarray) -> bool:
    positive = values[values > 0]
    return len(positive) == len(values) and len(values) > 1 and positive.max() / positive.min() > 30


def plot_experiments_comparison(table, path: str | Path, *, energy: str = "energy", latency: str = "latency",
                                name: str = "experiment", title: str | None = None) -> Path:
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
    ax.scatter(x[~is_front], y[~is_front], s=36, color="#7f9cc7", edgecolor="#2b4c7e", zorder=3,
               label="experiment (dominated)")
    fx = front[energy].to_numpy(dtype=float) * PJ
    fy = front[latency].to_numpy(dtype=float)
    ax.scatter(fx, fy, s=70, marker="D", color="#d62728", edgecolor="black", zorder=4,
               label="Pareto front (lowest energy and latency)")
    if len(fx) > 1:
        ax.step(fx, fy, where="post", color="#d62728", linestyle="--", linewidth=1.2, zorder=2)
    for xi, yi, label in zip(x, y, names):
        ax.annotate(label, (xi, yi), xytext=(5, 4), textcoords="offset points", fontsize=8)

    if _log_if_wide(x):
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    if _log_if_wide(y):
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(EngFormatter(unit="J"))
    ax.yaxis.set_major_formatter(EngFormatter())
    ax.set_xlabel("Energy (J, lower is better)")
    ax.set_ylabel("Latency (cycles, lower is better)")
    ax.margins(0.12)
    ax.grid(alpha=0.35, which="major")
    ax.grid(alpha=0.1, which="minor")
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title or f"Energy vs latency of {len(valid)} experiments ({len(front)} on the Pareto front)")
    return _save(figure, path)
