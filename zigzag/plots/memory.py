"""The accelerator's memory hierarchy as a layered graph drawing."""

from __future__ import annotations

from pathlib import Path

from zigzag.plots.common import _new_figure, _save


def _operands_text(memory) -> str:
    return ", ".join(memory.operands)


def size_text(bits: int) -> str:
    """A memory size in bits as bytes with a binary prefix: ``2 B``, ``512 KiB``, ``3 MiB``."""
    if bits % 8:
        return f"{bits} b"
    size = bits / 8
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.4g} {unit}"
        size /= 1024
    return f"{bits} b"  # unreachable


def bandwidth_text(memory) -> str:
    """The ports' widest accesses per type, in bits per cycle: ``r 2x512, w 2x512 b/cycle``."""
    kinds = {"read": "r", "write": "w", "read_write": "rw"}
    parts = []
    for kind, short in kinds.items():
        widths = [p.bandwidth_max for p in memory.ports if p.type == kind]
        if widths:
            counted = {w: widths.count(w) for w in widths}
            parts.append(
                f"{short} "
                + " + ".join(f"{n}x{w:g}" if n > 1 else f"{w:g}" for w, n in counted.items())
            )
    return ", ".join(parts) + " b/cycle" if parts else "no ports"


def _generations(accelerator) -> list[list[str]]:
    """Memories in rows bottom-up: each row holds the memories whose lower memories are all below."""
    listed = [m.name for m in accelerator.memories]
    below = {name: set() for name in listed}
    for lower, upper in accelerator.memory_edges:
        below[upper].add(lower)
    rows, placed = [], set()
    while len(placed) < len(listed):
        row = [n for n in listed if n not in placed and below[n] <= placed]
        if not row:  # a cycle cannot be drawn in rows: put the rest on top
            row = [n for n in listed if n not in placed]
        rows.append(row)
        placed.update(row)
    return rows


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
            return (
                sum(near) / len(near)
                if near
                else current[n] * len(reference) / max(len(rows[r]), 1)
            )

        rows[r].sort(key=key)

    for _ in range(2):
        for r in range(1, len(rows)):
            reorder(r, below, rows[r - 1])
        for r in range(len(rows) - 2, 0, -1):
            reorder(r, above, rows[r + 1])

    x: dict[str, float] = {}
    for names in rows:
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

    Each memory is a box labelled with its name, memory operands, size and number of physical
    copies (``3 MiB x1``) and its ports' widest access per type in bits per cycle
    (``r 2x512, w 2x512 b/cycle``: two read and two write ports of 512 bits) and its energy per read
    and write access, marked with where it comes from when not from the file (``CACTI``, ``table``,
    see docs/reference/memory-costs.md); rows are the
    graph's topological generations; links are labelled with
    the memory operands they carry (from the MAC array: each operand's innermost memory).
    """
    from matplotlib import colormaps

    listed = [m.name for m in accelerator.memories]
    generations = _generations(accelerator)
    array_node = "\0array"
    links: dict[tuple[str, str], list[str]] = {}
    for operand in accelerator.memory_operands:
        links.setdefault((array_node, accelerator.hierarchy(operand)[0].name), []).append(operand)
    for lower, upper in sorted(
        dict.fromkeys(accelerator.memory_edges), key=lambda edge: listed.index(edge[0])
    ):
        links[(lower, upper)] = [
            op
            for op in accelerator.memory[lower].operands
            if op in accelerator.memory[upper].operands
        ]
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
            label = (
                f"{name}\n{_operands_text(memory)}\n{size_text(memory.size)} x{accelerator.unroll_count(memory)}"
                f"\n{bandwidth_text(memory)}\n{cost_text(memory)}"
            )
            boxes[name] = ax.text(
                *position[name],
                label,
                ha="center",
                va="center",
                fontsize=9 + min(row, 4) * 0.5,
                zorder=3,
                bbox=dict(
                    boxstyle="square,pad=0.6", facecolor=shade, edgecolor="#1f3b73", linewidth=1.0
                ),
            )
    array = accelerator.operational_array
    dims = " x ".join(f"{d}={s}" for d, s in array.dimensions.items())
    boxes[array_node] = ax.text(
        *position[array_node],
        f"MAC array\n{dims}\n{array.total_units} units",
        ha="center",
        va="center",
        fontsize=9,
        zorder=3,
        bbox=dict(boxstyle="round,pad=0.6", facecolor="#eeeeee", edgecolor="#555555"),
    )

    line = dict(color="#444444", linewidth=1.0)
    for ((lower, upper), operands), points in zip(links.items(), routes):
        low_box, high_box = boxes[lower].get_bbox_patch(), boxes[upper].get_bbox_patch()
        if len(points) == 2:
            ax.annotate(
                "",
                xy=points[1],
                xytext=points[0],
                zorder=1,
                arrowprops=dict(
                    arrowstyle="<|-|>",
                    mutation_scale=10,
                    patchA=low_box,
                    patchB=high_box,
                    shrinkA=3,
                    shrinkB=3,
                    **line,
                ),
            )
        else:
            ax.annotate(
                "",
                xy=points[1],
                xytext=points[0],
                zorder=1,
                arrowprops=dict(
                    arrowstyle="<|-",
                    mutation_scale=10,
                    patchA=low_box,
                    shrinkA=3,
                    shrinkB=0,
                    **line,
                ),
            )
            for a, b in zip(points[1:-2], points[2:-1]):
                ax.plot([a[0], b[0]], [a[1], b[1]], zorder=1, **line)
            ax.annotate(
                "",
                xy=points[-1],
                xytext=points[-2],
                zorder=1,
                arrowprops=dict(
                    arrowstyle="-|>",
                    mutation_scale=10,
                    patchB=high_box,
                    shrinkA=0,
                    shrinkB=3,
                    **line,
                ),
            )
        if operands:
            middle = (len(points) - 1) // 2
            a, b = points[middle], points[middle + 1]
            ax.text(
                (a[0] + b[0]) / 2,
                (a[1] + b[1]) / 2,
                ", ".join(operands),
                fontsize=7,
                color="#444444",
                ha="center",
                va="center",
                zorder=2,
                bbox=dict(
                    boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.9
                ),
            )

    ax.set_xlim(min(xs, default=0.0) - 0.6, max(xs, default=0.0) + 0.6)
    ax.set_ylim(-0.6, len(generations) + 0.6)
    ax.set_title(
        title
        or f"Memory hierarchy of {accelerator.name}\n"
        "(box: memory, operands it holds, size x copies, port bandwidths, "
        "energy per access)",
        fontsize=11,
    )
    return _save(figure, path)


#: how the memory-hierarchy plot names a memory's cost source
_SOURCE_MARK = {"cacti": "CACTI", "table": "table"}


def cost_text(memory) -> str:
    """``r 2.83 w 4.58 pJ (CACTI)``: energy per read / write access and, if not the file's, its source."""
    mark = _SOURCE_MARK.get(memory.cost_source)
    return f"r {memory.r_cost:.3g} w {memory.w_cost:.3g} pJ" + (f" ({mark})" if mark else "")
