"""A multi-core workload as Stream sees it: a graph of computation layers (:class:`StreamLayer`, split into
computation nodes and scheduled) and data-moving nodes (``PropagationNode``), with the ONNX operator tables
both the reader (:mod:`zigzag.multicore.workload_onnx`, ``read_stream_workload``) and the tiling use
(docs/models/multi-core.md#onnx-workloads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

from zigzag.multicore.mapping import MappingEntry
from zigzag.multicore.vector_layers import PropagationNode
from zigzag.workload.layer import Layer

FUSION_DIM = {
    "conv": "OY",
    "pooling": "OY",
    "gemm": "D",
    "matmul": "D",
    "add": "D",
    "mul": "D",
    "relu": "K",
    "gelu": "K",
    "silu": "K",
    "softmax": "K",
    "max": "K",
    "div": "K",
    "exp": "K",
    "sum": "K",
}
"""Layer dim a layer of each type is cut along in fused mode when no tiling is given (docs/models/multi-core.md#computation-nodes)."""
SIMD_DIMS = {1: ("K",), 2: ("D", "K"), 3: ("B", "D", "K"), 4: ("B", "H", "D", "K")}
POOLING_OPS = ("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool")
SIMD_OPS = ("Relu", "Gelu", "Silu", "Add", "Mul")
PROPAGATION_OPS = {
    "Flatten": "flatten",
    "Reshape": "reshape",
    "Transpose": "transpose",
    "Concat": "concat",
    "Gather": "gather",
}
#: Operators that only move their first input's data (a slice of it, a copy, a broadcast): kept as
#: propagation nodes evaluated on the element maps (``onnx`` kind), with their other inputs constants.
MOVING_OPS = ("Slice", "Split", "Expand", "Squeeze", "Unsqueeze", "Tile")


@dataclass(frozen=True, eq=False)
class StreamLayer:
    """A computation layer: it is split into computation nodes (CNs) and scheduled.

    ``layer`` is the single-core view (loops, operand dims, relevancy, ZigZag sizes) used by the
    cost model; ``type`` is Stream's lower-case layer type (conv, pooling, gemm, relu, add, ...);
    ``reshape`` maps operands to the shape their data takes in the ONNX tensor (conv/pool).
    ``cache_operands``: (operand, share, token dim, past tokens, tokens) for an operand that reads a decode
    step's KV cache (past keys or values, a graph input) where it lives, as a constant besides the
    data its source produces (the new token); share = the past cache's elements over the operand's
    (below 1: the appended tokens, and grouped-query heads that share one cached head); the
    operand's first ``past tokens`` along ``token dim`` are the cache (``vector_layers.cache_operands``).
    An operand of expert weights gathered per (token, expert) pair is read the same way: from where the
    weights live, share = the distinct experts over the pairs, no token dim (``vector_layers.expert_operands``).
    """

    id: int
    name: str
    op_type: str
    type: str
    layer: Layer
    mapping: MappingEntry
    reshape: dict[str, tuple[int, ...]] | None = None
    cache_operands: tuple[tuple[str, float, str, int, int], ...] = ()

    @property
    def sizes(self) -> dict[str, int]:
        return self.layer.loop_sizes

    @property
    def operand_dims(self) -> dict[str, tuple[str, ...]]:
        return self.layer.operand_dims

    @property
    def constant_operands(self) -> tuple[str, ...]:
        return self.layer.constant_operands

    @property
    def fetched_operands(self) -> tuple[str, ...]:
        """The operands fetched from where constants live: the constants, then the cache operands."""
        return self.constant_operands + tuple(entry[0] for entry in self.cache_operands)

    @property
    def input_operand_source(self) -> dict[str, int]:
        return self.layer.input_operand_source

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(self.input_operand_source.values())

    def output_ir_dims(self) -> tuple[str, ...]:
        """Loop dims irrelevant to the output (their last CN finishes the output)."""
        return self.layer.irrelevant[self.layer.output]


Node = StreamLayer | PropagationNode


@dataclass(frozen=True, eq=False)
class StreamWorkload:
    """The layer graph: nodes by id (ONNX order) and producer -> consumer edges (insertion order)."""

    nodes: dict[int, Node]
    edges: tuple[tuple[int, int], ...]
    file: str | None = None
    #: the Stream 2.x mapping's fused groups (``StreamMapping.fused_groups``), made stacks by
    #: ``zigzag.multicore.inputs.layer_stacks_of``
    fused_groups: tuple[tuple[str, ...], ...] | None = None

    @property
    def layers(self) -> list[StreamLayer]:
        return [n for n in self.nodes.values() if isinstance(n, StreamLayer)]

    def mac_count(self) -> int:
        """Multiply-accumulates of the matrix products and convolutions (Conv, Gemm, MatMul layers)."""
        return sum(
            math.prod(layer.sizes.values())
            for layer in self.layers
            if layer.op_type in ("Conv", "QLinearConv", "Gemm", "MatMul")
        )

    def graph(self) -> nx.DiGraph:
        """networkx view, built in Stream's order (nodes by id, edges as added)."""
        graph = nx.DiGraph()
        for node_id in self.nodes:
            graph.add_node(node_id)
        graph.add_edges_from(self.edges)
        return graph
