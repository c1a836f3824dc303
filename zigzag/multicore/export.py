"""The CN graph as a table (one row per CN) and as a picture (layers as rows, CNs along them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.nodes import INTRA, OPERANDS

MAX_DRAWN_CNS = 3000


def cn_table(graph: CNGraph) -> pd.DataFrame:
    """One row per CN: layer, sub id, name, ranges, group, core, tensor bits, edges."""
    n = len(graph)
    in_edges = np.bincount(graph.edge_dst, minlength=n)
    out_edges = np.bincount(graph.edge_src, minlength=n)
    rows = []
    for i in range(n):
        info = graph.layers[int(graph.layer[i])]
        ranges = graph.loop_ranges(i)
        row = {
            "layer": int(graph.layer[i]),
            "sub_id": int(graph.sub_id[i]),
            "name": info.name,
            "type": info.type,
            "stack": info.stack,
            "group": int(graph.group[i]),
            "core": int(graph.core[i]),
            "ranges": " ".join(f"{d}={a}:{b}" for d, (a, b) in ranges.items()),
        }
        for op in OPERANDS:
            row[f"{op}_bits"] = (
                int(graph.tensor_bits[i, OPERANDS.index(op)]) if op in info.operand_dims else None
            )
        row |= {
            "produces_final_output": bool(graph.produces_final_output[i]),
            "data_produced_unique": int(graph.data_produced_unique[i]),
            "nb_real_predecessors": int(graph.nb_real_predecessors[i]),
            "in_edges": int(in_edges[i]),
            "out_edges": int(out_edges[i]),
        }
        rows.append(row)
    return pd.DataFrame(rows)


def draw_cn_graph(graph: CNGraph, path: str | Path) -> bool:
    """Draw the graph to ``path`` (PNG/SVG/PDF): one row per layer, CNs coloured by core.

    Returns False (and draws nothing) above ``MAX_DRAWN_CNS`` CNs, where a picture is unreadable.
    """
    if len(graph) > MAX_DRAWN_CNS:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    layer_ids = sorted(graph.layers)
    row_of = {layer_id: r for r, layer_id in enumerate(layer_ids)}
    counts = np.bincount(np.searchsorted(layer_ids, graph.layer), minlength=len(layer_ids))
    x = np.empty(len(graph))
    for layer_id in layer_ids:
        members = np.flatnonzero(graph.layer == layer_id)
        x[members] = (graph.sub_id[members] + 0.5) / max(1, counts[row_of[layer_id]])
    y = -np.array([row_of[int(i)] for i in graph.layer], dtype=float)
    height = max(3.0, 0.45 * len(layer_ids) + 1.5)
    fig, ax = plt.subplots(figsize=(11, height))
    intra = graph.edge_operand == INTRA
    alpha = float(np.clip(300 / max(1, np.count_nonzero(~intra)), 0.05, 0.6))
    for mask, style in (
        (~intra, dict(color="tab:blue", alpha=alpha, lw=0.7)),
        (intra, dict(color="0.5", lw=0.8)),
    ):
        s, d = graph.edge_src[mask], graph.edge_dst[mask]
        if len(s):
            segments = np.stack([np.stack([x[s], y[s]], 1), np.stack([x[d], y[d]], 1)], 1)
            ax.add_collection(LineCollection(segments, zorder=1, **style))
    cores = sorted(set(graph.core.tolist()))
    cmap = plt.get_cmap("tab10")
    for k, core in enumerate(cores):
        sel = graph.core == core
        ax.scatter(
            x[sel],
            y[sel],
            s=18 if len(graph) > 200 else 60,
            color=cmap(k % 10),
            zorder=2,
            label=str(core) if core >= 0 else "not allocated",
            edgecolors="black",
            linewidths=0.3,
        )
    ax.set_yticks(-np.arange(len(layer_ids)))
    ax.set_yticklabels(
        [f"{i} {graph.layers[i].name} ({counts[row_of[i]]} CNs)" for i in layer_ids], fontsize=7
    )
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_xlabel("sub id (position within the layer)")
    ax.set_title(
        f"CN graph ({graph.mode}): {len(graph)} CNs, {graph.nb_edges} edges "
        f"({graph.nb_intra_layer_edges} intra-layer)"
    )
    ax.legend(
        loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, title="core", title_fontsize=7
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
