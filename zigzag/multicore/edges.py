"""Dependency edges between computation nodes (docs/models/multi-core.md#dependencies).

* intra-layer: the CNs of each group form a chain in sub-id order (bits 0);
* inter-layer, *simple* pairs (directly connected, or through dummy nodes): an edge for every
  final-output producer CN whose output box overlaps a consumer CN's input box (closed
  intervals, numpy broadcasting over all CN pairs of the two layers at once);
* inter-layer, *complex* pairs (through Flatten/Reshape/Transpose/Concat): element maps, see
  ``zigzag.multicore.propagation``.

Edges are returned as int arrays of shape ``(n, 6)``, one row ``(src layer, src sub, dst layer,
dst sub, operand, bits)`` per edge (operand = column in ``OPERANDS``, ``INTRA`` for intra-layer
edges), in Stream's order: intra-layer edges layer by layer, then inter-layer edges pair by pair.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.nodes import INTRA, OPERANDS, LayerCNs
from zigzag.multicore.propagation import ElementMaps, complex_pair_edges
from zigzag.multicore.vector_layers import PropagationNode
from zigzag.multicore.workload import StreamLayer, StreamWorkload

_BLOCK = 1 << 22  # booleans per overlap block (producer chunk x consumers x dims)


def edge_block(src_layer: int, src, dst_layer: int, dst, operand: int, bits) -> np.ndarray:
    """Rows ``(src layer, src sub, dst layer, dst sub, operand, bits)`` for aligned sub-id arrays."""
    block = np.empty((len(src), 6), dtype=np.int64)
    block[:, 0], block[:, 1], block[:, 2], block[:, 3] = src_layer, src, dst_layer, dst
    block[:, 4], block[:, 5] = operand, bits
    return block


def intra_layer_edges(cns: LayerCNs) -> list[np.ndarray]:
    """Chain the CNs of every group, groups in ascending id."""
    blocks = []
    for group in np.unique(cns.group):
        members = np.flatnonzero(cns.group == group)
        blocks.append(edge_block(cns.id, members[:-1], cns.id, members[1:], INTRA, 0))
    return blocks


def layer_pairs(
    workload: StreamWorkload, graph: nx.DiGraph, order: list[int]
) -> list[tuple[int, int, bool]]:
    """(producer, consumer, is_complex) for every computation layer and its nearest computation
    successors, found by replacing non-computation successors with their own successors."""
    nodes = workload.nodes
    pairs = []
    for layer_id in order:
        if not isinstance(nodes[layer_id], StreamLayer):
            continue
        successors = list(graph.successors(layer_id))
        while True:
            pending = next(
                (i for i, s in enumerate(successors) if not isinstance(nodes[s], StreamLayer)), None
            )
            if pending is None:
                break
            successors += list(graph.successors(successors.pop(pending)))
        for successor in successors:
            between = nx.shortest_path(graph, layer_id, successor)[1:-1]
            pairs.append((layer_id, successor, any(nodes[n].kind != "dummy" for n in between)))
    return pairs


def _non_dummy_predecessors(workload: StreamWorkload, graph: nx.DiGraph, node_id: int) -> list[int]:
    preds = list(graph.predecessors(node_id))
    while True:
        dummy = next((i for i, p in enumerate(preds) if _is_dummy(workload.nodes[p])), None)
        if dummy is None:
            return preds
        preds += list(graph.predecessors(preds.pop(dummy)))


def _is_dummy(node) -> bool:
    return isinstance(node, PropagationNode) and node.kind == "dummy"


def dependent_operands(
    workload: StreamWorkload, graph: nx.DiGraph, producer: int, consumer: StreamLayer
) -> list[str]:
    """Input operands of ``consumer`` whose data comes from ``producer`` (possibly via dummies)."""
    operands = []
    for operand, source in consumer.input_operand_source.items():
        if source == producer:
            operands.append(operand)
        elif not isinstance(workload.nodes[source], StreamLayer):
            if producer in _non_dummy_predecessors(workload, graph, source):
                operands.append(operand)
    return operands


def _boxes(
    cns: LayerCNs, operand: str, producer: LayerCNs, consumer: LayerCNs
) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive boxes of ``operand`` per CN, with G and C/K merged into one channel dim."""
    dims, start, stop = cns.operand_boxes(operand)
    lo, hi = start, stop - 1
    if "G" in dims and ("C" in dims or "K" in dims):
        other = "C" if "C" in dims else "K"
        size = (consumer if other == "C" else producer).tiled.sizes[other]
        g, x = dims.index("G"), dims.index(other)
        ch_lo = lo[:, g] + lo[:, x]
        ch_hi = hi[:, g] * size + hi[:, x]
        keep = [i for i in range(len(dims)) if i not in (g, x)]
        at = min(g, x)
        lo = np.insert(lo[:, keep], at, ch_lo, axis=1)
        hi = np.insert(hi[:, keep], at, ch_hi, axis=1)
    return lo, hi


def simple_pair_edges(
    producer: LayerCNs, consumer: LayerCNs, operands: list[str], file=None
) -> list[np.ndarray]:
    """Edges of a directly connected pair: every overlapping (final producer, consumer) box."""
    player = producer.tiled.layer
    final = np.ones(producer.count, dtype=bool)
    for dim in player.output_ir_dims():
        final &= producer.stop[:, producer.column(dim)] >= player.sizes[dim]
    p_subs = np.flatnonzero(final)
    p_lo, p_hi = _boxes(producer, player.layer.output, producer, consumer)
    p_lo, p_hi = p_lo[p_subs], p_hi[p_subs]
    bits = producer.data_produced_unique
    blocks = []
    for operand in operands:
        c_lo, c_hi = _boxes(consumer, operand, producer, consumer)
        if c_lo.shape[1] != p_lo.shape[1]:
            raise InputError(
                file,
                f"layers {producer.id} -> {consumer.id}",
                f"output of layer {producer.id} has {p_lo.shape[1]} dims but input {operand} of layer {consumer.id} "
                f"has {c_lo.shape[1]}; put a Reshape/Flatten between them",
            )
        chunk = max(1, _BLOCK // max(1, consumer.count * c_lo.shape[1]))
        for begin in range(0, len(p_subs), chunk):
            end = begin + chunk
            hit = np.all(
                (p_lo[begin:end, None, :] <= c_hi[None]) & (c_lo[None] <= p_hi[begin:end, None, :]),
                axis=2,
            )
            pi, ci = np.nonzero(hit)
            src = p_subs[begin:end][pi]
            blocks.append(
                edge_block(producer.id, src, consumer.id, ci, OPERANDS.index(operand), bits[src])
            )
    return blocks


def inter_layer_edges(
    workload: StreamWorkload, graph: nx.DiGraph, order: list[int], cns: dict[int, LayerCNs]
) -> list[np.ndarray]:
    """All inter-layer edges, pair by pair in topological order of the producers."""
    edges: list[np.ndarray] = []
    maps = ElementMaps()
    for producer, consumer, is_complex in layer_pairs(workload, graph, order):
        if producer not in cns or consumer not in cns:
            continue
        operands = (
            []
            if is_complex
            else dependent_operands(workload, graph, producer, workload.nodes[consumer])
        )
        if is_complex or not _same_ranks(cns[producer], cns[consumer], operands):
            found = propagation_paths(workload, graph, producer, consumer)
            paths = [[workload.nodes[n] for n in path] for path in found]
            edges += complex_pair_edges(cns[producer], cns[consumer], paths, workload.file, maps)
        else:
            edges += simple_pair_edges(cns[producer], cns[consumer], operands, workload.file)
    return edges


def _same_ranks(producer: LayerCNs, consumer: LayerCNs, operands: list[str]) -> bool:
    """Do the consumer's ``operands`` have as many dims as the producer's output? (Else, e.g. a
    broadcast input of a vector layer, the pair is joined element by element.)"""

    def rank(dims) -> int:  # as :func:`_boxes` compares them: G and C/K merged into one channel dim
        return len(dims) - ("G" in dims and ("C" in dims or "K" in dims))

    out = rank(producer.tiled.layer.layer.operand_dims[producer.tiled.layer.layer.output])
    return all(rank(consumer.tiled.layer.layer.operand_dims[op]) == out for op in operands)


def propagation_paths(
    workload: StreamWorkload, graph: nx.DiGraph, producer: int, consumer: int
) -> list[list[int]]:
    """The simple paths ``producer -> consumer`` whose inner nodes are all non-computation nodes,
    in the order ``nx.all_simple_paths`` lists them (depth first, successors in graph order).

    Only non-computation nodes are entered: the paths through other layers, whose number grows
    exponentially in Concat-heavy networks, are never walked.
    """
    nodes, paths = workload.nodes, []

    def walk(path: list[int]) -> None:
        for successor in graph.successors(path[-1]):
            if successor == consumer:
                paths.append(path + [successor])
            elif not isinstance(nodes[successor], StreamLayer) and successor not in path:
                walk(path + [successor])

    walk([producer])
    return paths
