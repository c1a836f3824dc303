"""Per-CN costs from the cost table: the scheduler's :class:`CNCost` of every CN of a CN graph.

Stream costs every CN with the cost-table entry of the first CN (in graph node order) of its
layer with the same number of real predecessors (``CNGraph.cost_node``, docs/models/multi-core.md#cost-table), on the CN's core.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zigzag.notes import grouped_layer_warnings
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable, NodeKey
from zigzag.multicore.nodes import INTRA, OPERANDS
from zigzag.multicore.offchip import cache_read_share
from zigzag.multicore.schedule.adapter import CNCost


def node_key(graph: CNGraph, cn: int) -> NodeKey:
    """The cost-table key of CN ``cn``: its layer's CN shape and the bits of its in-edges."""
    info = graph.layers[int(graph.layer[cn])]
    spec = info.cn_layer_spec
    into = (graph.edge_dst == cn) & (graph.edge_operand != INTRA)
    bits: dict[str, int] = {}
    for col, b in zip(graph.edge_operand[into].tolist(), graph.edge_bits[into].tolist()):
        bits[OPERANDS[col]] = bits.get(OPERANDS[col], 0) + b
    spatial = (spec.get("mapping") or {}).get("spatial_mapping")
    return NodeKey(
        equation=spec["equation"],
        loop_sizes=tuple(zip(spec["loop_dims"], (int(s) for s in spec["loop_sizes"]))),
        precision=tuple((op, int(p)) for op, p in spec["operand_precision"].items()),
        relations=tuple(spec.get("dimension_relations") or ()),
        pr_sizes=tuple(
            zip(spec.get("pr_loop_dims") or (), (int(s) for s in spec.get("pr_loop_sizes") or ()))
        ),
        edge_bits=tuple(sorted(bits.items())),
        spatial_mapping=None
        if not spatial
        else tuple(
            (oa, tuple((u.split(",")[0].strip(), int(u.split(",")[1])) for u in unrollings))
            for oa, unrollings in spatial.items()
        ),
        layer_name=info.name,
        vector_op=spec.get("vector_op"),
    )


def cn_costs(
    graph: CNGraph, table: CostTable, cores: Sequence[int] | None = None, runtime: str = "latency"
) -> list[CNCost]:
    """One :class:`CNCost` per CN (CN index order) from ``table``.

    ``cores`` overrides the graph's cores; ``runtime`` is ``"latency"`` (``latency_total2``,
    Stream's fixed allocations) or ``"ga_latency"`` (``int(latency_total1)``, cores chosen by
    the genetic allocation).
    """
    core = np.asarray(graph.core if cores is None else cores, dtype=np.int64)
    rep = graph.cost_node()
    keys = {r: node_key(graph, r) for r in np.unique(rep).tolist()}
    costs = []
    with grouped_layer_warnings():
        for cn in range(len(graph)):
            entry = table.entry(keys[int(rep[cn])], int(core[cn]))
            cost = CNCost.of_entry(entry, getattr(entry, runtime), table.dram)
            costs.append(cache_read_share(cost, graph.layers[int(graph.layer[cn])].cache_operands))
    return costs
