"""Gantt charts of a schedule: one row per core and per busy link, CNs coloured by layer.

:func:`gantt_html` draws the interactive chart (plotly, plotly.js inlined so the file works
offline): hover shows a CN's id, layer, sub id, core, start, end and energy, or a link event's
tensors and kind; link rows show transfers by kind and the DRAM-link blocks of CNs that stream
operands; a button shows the dependencies between cores as arrows. :func:`gantt_png` draws the
same rows as a static picture (matplotlib).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zigzag.io.atomic import write_text_atomic
from zigzag.plots.plotlyjs import ensure_plotly, script_src
from zigzag.multicore.schedule.trace import TRANSFER_KINDS, ScheduleTrace

#: dependency arrows drawn at most (inter-core edges first; a picture with more is unreadable)
MAX_ARROWS = 3000
KIND_COLOURS = {
    "off-chip to core": "#4c72b0",
    "core to core": "#55a868",
    "eviction": "#c44e52",
    "sink (final output)": "#8172b2",
    "transfer": "#64b5cd",
    "DRAM-link block": "#9a9a9a",
}


def layer_colours(layers) -> dict[int, str]:
    """A distinct colour per layer id (hex), the same in every picture."""
    import matplotlib

    palette = [
        matplotlib.colors.to_hex(c)
        for name in ("tab20", "tab20b", "tab20c")
        for c in matplotlib.colormaps[name].colors
    ]
    return {
        int(lay): palette[k % len(palette)]
        for k, lay in enumerate(sorted({int(x) for x in layers}))
    }


class Rows:
    """The chart's rows: compute cores first, then the links that carry something."""

    def __init__(self, trace: ScheduleTrace):
        self.cores = list(trace.cores)
        self.links = [i for i, lk in enumerate(trace.links) if len(lk.start)]
        self.labels = [f"Core {c}" for c in self.cores] + [
            link_label(trace.links[i]) for i in self.links
        ]
        self.core_row = {c: r for r, c in enumerate(self.cores)}
        self.link_row = {i: len(self.cores) + r for r, i in enumerate(self.links)}

    def __len__(self) -> int:
        return len(self.labels)


def link_label(link) -> str:
    return (
        f"DRAM link {link.label.replace('Any', 'any core')}"
        if link.offchip
        else f"Link {link.label}"
    )


def link_event_kinds(trace: ScheduleTrace) -> list[list[str]]:
    """Per link, the kind of each event: a transfer's kind (by tensor and start) or a block."""
    tr = trace.transfers
    by_key = {
        (int(t), float(s)): TRANSFER_KINDS.get(k, k)
        for k, t, s in zip(tr["kind"], tr["tensor"], tr["start"])
    }
    kinds = []
    for link in trace.links:
        row = []
        for kind, start, tensors in zip(link.kind, link.start, link.tensors):
            if kind == "block":
                row.append("DRAM-link block")
            else:
                row.append(
                    next(
                        (by_key[(x, float(start))] for x in tensors if (x, float(start)) in by_key),
                        "transfer",
                    )
                )
        kinds.append(row)
    return kinds


def dependency_segments(trace: ScheduleTrace, rows: Rows) -> tuple[np.ndarray, np.ndarray, int]:
    """Edges between CNs on different cores as (producer end → consumer start) segments.

    Returns the x and y of the segments, each as (n, 2), and how many such edges there are
    (only the first :data:`MAX_ARROWS` by consumer start are returned).
    """
    cn, src, dst = trace.cn, trace.edges["src"], trace.edges["dst"]
    cross = cn["core"][src] != cn["core"][dst]
    src, dst = src[cross], dst[cross]
    total = len(src)
    keep = np.argsort(cn["start"][dst], kind="stable")[:MAX_ARROWS]
    src, dst = src[keep], dst[keep]
    row = np.array([rows.core_row[int(c)] for c in cn["core"]]) if len(cn["core"]) else np.zeros(0)
    xs = np.stack([cn["end"][src], cn["start"][dst]], axis=1)
    ys = np.stack([row[src], row[dst]], axis=1).astype(float) if len(src) else np.zeros((0, 2))
    return xs, ys, total


def title(trace: ScheduleTrace) -> str:
    return (
        f"{trace.name}: latency {trace.latency:.4g} cycles, energy {trace.energy:.4g} pJ, "
        f"EDP {trace.latency * trace.energy:.4g}"
    )


def gantt_figure(trace: ScheduleTrace, show_dependencies: bool = False):
    """The interactive Gantt chart as a plotly figure (dependency arrows shown at first if asked)."""
    import plotly.graph_objects as go

    rows = Rows(trace)
    cn = trace.cn
    colours = layer_colours(cn["layer"])
    fig = go.Figure()
    row_of_cn = np.array([rows.core_row[int(c)] for c in cn["core"]], dtype=int)
    outline = dict(width=0.3 if len(row_of_cn) <= 200 else 0, color="black")
    for layer, colour in colours.items():
        sel = np.flatnonzero(cn["layer"] == layer)
        energy = cn["onchip_energy"][sel] + cn["offchip_energy"][sel]
        custom = np.stack(
            [sel, cn["sub"][sel], cn["core"][sel], cn["start"][sel], cn["end"][sel], energy], 1
        )
        fig.add_trace(
            go.Bar(
                orientation="h",
                base=cn["start"][sel],
                x=cn["end"][sel] - cn["start"][sel],
                y=row_of_cn[sel],
                marker=dict(color=colour, line=outline),
                width=0.8,
                name=f"{layer} {trace.layer_name(layer)}",
                legendgroup="layers",
                customdata=custom,
                hovertemplate=(
                    f"<b>CN %{{customdata[0]:.0f}}</b> · layer {layer} {trace.layer_name(layer)}"
                    "<br>sub id %{customdata[1]:.0f} on core %{customdata[2]:.0f}"
                    "<br>start %{customdata[3]:,.0f} · end %{customdata[4]:,.0f} cycles"
                    "<br>energy %{customdata[5]:.4g} pJ<extra></extra>"
                ),
            )
        )
    kinds = link_event_kinds(trace)
    for kind, colour in KIND_COLOURS.items():
        base, width, y, text = [], [], [], []
        for i in rows.links:
            link = trace.links[i]
            for k, s, e, a, tensors in zip(
                kinds[i], link.start, link.end, link.activity, link.tensors
            ):
                if k == kind:
                    base.append(s)
                    width.append(e - s)
                    y.append(rows.link_row[i])
                    shown = ", ".join(map(str, tensors[:6])) + (" …" if len(tensors) > 6 else "")
                    text.append(
                        f"{kind} on {link.label}<br>tensors {shown}<br>start {s:,.0f} · end {e:,.0f} cycles"
                        f"<br>activity {a} of {link.bandwidth:g} bits/cycle"
                    )
        if base:
            fig.add_trace(
                go.Bar(
                    orientation="h",
                    base=base,
                    x=width,
                    y=y,
                    width=0.8,
                    name=kind,
                    legendgroup="links",
                    marker=dict(
                        color=colour,
                        line=dict(width=0),
                        pattern_shape="/" if kind == "DRAM-link block" else "",
                    ),
                    hovertext=text,
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
    xs, ys, total = dependency_segments(trace, rows)
    nan = np.full((len(xs), 1), np.nan)
    sizes = np.tile([0.0, 9.0, 0.0], len(xs))
    fig.add_trace(
        go.Scatter(
            x=np.hstack([xs, nan]).ravel(),
            y=np.hstack([ys, nan]).ravel(),
            mode="lines+markers",
            line=dict(color="rgba(40,40,40,0.45)", width=0.8),
            visible=show_dependencies,
            hoverinfo="skip",
            marker=dict(
                symbol="arrow", angleref="previous", size=sizes, color="rgba(40,40,40,0.7)"
            ),
            name=f"dependencies between cores ({min(total, MAX_ARROWS)} of {total})",
        )
    )
    arrows = len(fig.data) - 1
    fig.update_layout(
        title=title(trace),
        barmode="overlay",
        template="plotly_white",
        height=max(360, 60 + 34 * len(rows)),
        xaxis=dict(title="time (cycles)", rangeslider=dict(visible=False)),
        yaxis=dict(
            tickvals=list(range(len(rows))),
            ticktext=rows.labels,
            autorange="reversed",
            fixedrange=False,
        ),
        legend=dict(font=dict(size=10), groupclick="toggleitem"),
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0.0,
                xanchor="left",
                y=1.0,
                yanchor="bottom",
                pad=dict(b=4),
                showactive=True,
                buttons=[
                    dict(
                        label="dependencies",
                        method="restyle",
                        args=[{"visible": not show_dependencies}, [arrows]],
                        args2=[{"visible": show_dependencies}, [arrows]],
                    )
                ],
            )
        ],
        margin=dict(l=10, r=10, t=80, b=40),
    )
    return fig


def gantt_html(
    trace: ScheduleTrace,
    path: str | Path,
    show_dependencies: bool = False,
    *,
    plotly_js: str | Path | None = None,
) -> Path:
    """Write the interactive Gantt chart as an HTML file that works offline: it loads the
    folder's shared ``plotly.min.js`` (``plotly_js``, default beside the page; copied there
    once) instead of carrying its own copy."""
    script = ensure_plotly(Path(plotly_js) if plotly_js is not None else Path(path).parent)
    fig = gantt_figure(trace, show_dependencies)
    html = fig.to_html(
        include_plotlyjs=script_src(path, script),
        full_html=True,
        config={"displaylogo": False, "responsive": True},
    )

    write_text_atomic(Path(path), html)
    return Path(path)


def gantt_png(
    trace: ScheduleTrace,
    path: str | Path,
    dpi: int = 130,
    *,
    window: tuple[float, float] | None = None,
) -> Path:
    """Draw the Gantt chart as a static picture (PNG, SVG or PDF by the file's suffix); ``window``:
    the time span shown (default the whole schedule)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = Rows(trace)
    cn = trace.cn
    colours = layer_colours(cn["layer"])
    legend_rows = -(-(len(colours) + len(KIND_COLOURS)) // 6)
    height = 1.3 + 0.42 * len(rows) + 0.16 * legend_rows
    fig, ax = plt.subplots(figsize=(14, height))
    edge = 0.2 if len(cn["layer"]) <= 200 else 0.0
    for layer, colour in colours.items():
        sel = np.flatnonzero(cn["layer"] == layer)
        for core in np.unique(cn["core"][sel]):
            on = sel[cn["core"][sel] == core]
            spans = list(zip(cn["start"][on], cn["end"][on] - cn["start"][on]))
            ax.broken_barh(
                spans,
                (rows.core_row[int(core)] - 0.4, 0.8),
                facecolors=colour,
                edgecolors="black",
                linewidths=edge,
            )
    kinds = link_event_kinds(trace)
    used = set()
    for i in rows.links:
        link = trace.links[i]
        for kind, colour in KIND_COLOURS.items():
            spans = [(s, e - s) for k, s, e in zip(kinds[i], link.start, link.end) if k == kind]
            if spans:
                used.add(kind)
                ax.broken_barh(
                    spans,
                    (rows.link_row[i] - 0.4, 0.8),
                    facecolors=colour,
                    edgecolors="0.3",
                    linewidths=0.0,
                    hatch="///" if kind == "DRAM-link block" else None,
                )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows.labels, fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(*(window or (0, max(trace.latency, 1))))
    ax.set_xlabel("time (cycles)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title(trace), fontsize=10)
    handles = [
        Patch(facecolor=c, edgecolor="black", linewidth=0.3, label=f"{lay} {trace.layer_name(lay)}")
        for lay, c in colours.items()
    ]
    handles += [
        Patch(
            facecolor=KIND_COLOURS[k],
            edgecolor="black",
            linewidth=0.3,
            hatch="///" if k == "DRAM-link block" else None,
            label=k,
        )
        for k in KIND_COLOURS
        if k in used
    ]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=6, frameon=False)
    fig.subplots_adjust(
        left=0.12, right=0.98, top=1 - 0.45 / height, bottom=(0.55 + 0.16 * legend_rows) / height
    )
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)
