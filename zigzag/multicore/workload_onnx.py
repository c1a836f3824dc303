"""ONNX models as Stream reads them (``read_stream_workload``): a :class:`~zigzag.multicore.workload.StreamWorkload`.

Differences from the single-core import (``zigzag.io.onnx_import``, whose model loading and
shape table are reused): nodes without inputs take no id, and neither does index arithmetic on
static shapes (it is folded to constants, see docs/reference/onnx-operators.md); pooling, Relu/Gelu/Silu/Add/Mul and
Softmax become computation layers with Stream's own equations and dimension names
(:mod:`zigzag.multicore.workload_layers`); Flatten, Reshape, Transpose and Concat are kept as *propagation
nodes* that only reshape the data on its way between layers; everything else is a dummy node
(docs/models/multi-core.md#onnx-workloads). Only tensor shapes are read, so a model whose external weight
file is missing loads.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
from onnx import ModelProto, helper, numpy_helper, shape_inference

from zigzag.errors import InputError
from zigzag.io.onnx_attention import key_scales
from zigzag.io.onnx_kernels import gathered_experts
from zigzag.io.onnx_reading import load_model as _load, precision_bits as _precisions
from zigzag.io.onnx_shapes import ShapeLookup
from zigzag.mapping.entry import MappingEntry as CoreMappingEntry, unmatched_entry_warnings
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS, MappingEntry, StreamMapping
from zigzag.multicore.stream2_mapping import resolve_generic_dims
from zigzag.multicore.vector_layers import (
    PropagationNode,
    bypassed_nodes,
    bypassed_operators,
    cache_append,
    cache_operands,
    expert_operands,
    layer_norm_layers,
    moving_node,
    placed_entry,
    refuse_bypass,
    top_k,
    vector_layer,
)
from zigzag.multicore.workload import (
    MOVING_OPS,
    POOLING_OPS,
    PROPAGATION_OPS,
    SIMD_OPS,
    Node,
    StreamLayer,
    StreamWorkload,
)
from zigzag.multicore.workload_layers import (
    asymmetric_simd_layer,
    conv_layer,
    gemm_layer,
    pooling_layer,
    simd_layer,
    softmax_layers,
)
from zigzag.workload.layer import DimRelation, Layer, parse_equation

logger = logging.getLogger(__name__)


def read_stream_workload(
    source: str | Path | ModelProto,
    mapping: StreamMapping,
    dataflows: dict[int, dict | None] | None = None,
    file: str | None = None,
    *,
    check_entries: bool = True,
    vector_classes: dict[int, frozenset[str]] | None = None,
    vector_memory_bits: dict[int, int] | None = None,
) -> StreamWorkload:
    """Parse an ONNX model the way Stream does (docs/models/multi-core.md#onnx-workloads), with each layer's mapping entry.

    ``check_entries``: warn about the mapping entries no node can use (a typo in a node name).
    ``vector_classes`` (core id -> operation classes its vector unit runs): with any, the operators
    Stream bypasses become vector layers on those cores (``zigzag.multicore.vector_layers``), cut to
    fit ``vector_memory_bits`` (core id -> bits of its smallest top memory).

    ``dataflows`` (core id -> the core's spatial mapping, or None) decides the spatial mapping
    handed to the cost model: the cores' common dataflow if all allocated cores have the same
    one, else the entry's own ``spatial_mapping``.
    """
    if file is None and not isinstance(source, ModelProto):
        file = str(source)
    model = _load(source, file)
    parser = _Parser(
        model,
        ShapeLookup(model),
        mapping,
        dataflows or {},
        file,
        vector_classes or {},
        vector_memory_bits or {},
    )
    workload = parser.run()
    if parser.vector_classes:  # with vector units every working operator gets a core and a cost
        for node in bypassed_nodes(workload)[:1]:
            raise refuse_bypass(node, file, parser.vector_classes)
    bypassed = bypassed_operators(workload)
    if bypassed:
        logger.warning(
            "%s: %d operator(s) in the data path have no core and no cost on the multi-core floor (bypassed, "
            "as Stream does): %s",
            file or "<model>",
            sum(bypassed.values()),
            ", ".join(f"{op} x{n}" for op, n in bypassed.most_common()),
        )
    if check_entries:
        names = [n.name for n in model.graph.node] + [layer.name for layer in workload.layers]
        types = [n.op_type for n in model.graph.node]
        for line in unmatched_entry_warnings(list(mapping.entries), names, types):
            logger.warning("%s: %s", mapping.file or "<mapping>", line)
    return workload


class _Parser:
    def __init__(self, model, shapes, mapping, dataflows, file, vector_classes, vector_memory_bits):
        self.model, self.shapes, self.mapping, self.dataflows, self.file = (
            model,
            shapes,
            mapping,
            dataflows,
            file,
        )
        self.vector_classes = {core: classes for core, classes in vector_classes.items() if classes}
        self.vector_memory_bits = vector_memory_bits
        self.producer: dict[str, int] = {}
        self.nodes: dict[int, Node] = {}
        self.edges: dict[tuple[int, int], None] = {}
        self.output_index: dict[
            str, tuple[int, int]
        ] = {}  # output tensor of a moving node -> (node, output)
        self.caches: dict[
            int, tuple[int, int, int]
        ] = {}  # KV-cache append id -> vector_layers.cache_operands
        self.expert_gathers: dict[
            int, float
        ] = {}  # Gather of expert weights -> distinct over pairs
        self.router_k: int | None = None  # k of the latest TopK (a mixture of experts' router)
        self.key_scales: frozenset[str] | None = None
        self.weight_shapes = {i.name: tuple(i.dims) for i in model.graph.initializer}
        self.constant_tensors = {i.name for i in model.graph.initializer} | {
            n.output[0] for n in model.graph.node if n.op_type == "Constant" and n.output
        }

    def run(self) -> StreamWorkload:
        next_id = 0
        for proto in self.model.graph.node:
            if not proto.input or self.shape_arithmetic(proto, next_id):
                continue
            preds = [self.producer[t] for t in proto.input if t in self.producer]
            first_id = next_id
            for node in self.parse(proto, next_id, preds):
                if self.caches and isinstance(node, StreamLayer):
                    node = replace(
                        node, cache_operands=cache_operands(self.nodes, self.caches, node)
                    )
                if self.expert_gathers and isinstance(node, StreamLayer):
                    found = expert_operands(self.nodes, self.expert_gathers, node)
                    node = replace(node, cache_operands=node.cache_operands + found)
                self.nodes[node.id] = node
                for src in node.sources:
                    if src not in self.nodes:
                        raise self.error(proto, node.id, f"input from unknown node id {src}")
                    self.edges.setdefault((src, node.id), None)
                next_id = node.id + 1
            for tensor in proto.input:  # which output of a moving node each consumer reads
                if tensor in self.output_index:
                    source, index = self.output_index[tensor]
                    for node_id in range(first_id, next_id):
                        self.nodes[source].attrs["output_for"].setdefault(node_id, index)
            for index, tensor in enumerate(proto.output):
                self.producer[tensor] = next_id - 1
                node = self.nodes.get(next_id - 1)
                if isinstance(node, PropagationNode) and node.kind == "onnx":
                    self.output_index[tensor] = (node.id, index)
        return StreamWorkload(
            self.nodes, tuple(self.edges), self.file, fused_groups=self.mapping.fused_groups
        )

    # ----- helpers ---------------------------------------------------------------------------
    def error(self, proto, node_id: int, message: str) -> InputError:
        return InputError(self.file, f"node {node_id} '{proto.name}' ({proto.op_type})", message)

    def is_key_scale(self, proto) -> bool:
        """Does ``proto`` scale the keys of an attention whose queries are scaled too? Its scale is then
        the query's (``zigzag.io.onnx_attention.key_scales``): the cache is read once, by the product."""
        if self.key_scales is None:
            self.key_scales = key_scales(self.model.graph, self.is_scalar)
        return bool(proto.output) and proto.output[0] in self.key_scales

    def is_scalar(self, tensor: str) -> bool:
        """A constant of at most one element (an initializer, a Constant's or a folded value)."""
        shape = self.shapes.table.get(tensor)
        if shape is None or math.prod(shape) > 1:
            return False
        self.shapes.complete()
        return tensor in self.shapes.constants or tensor in self.constant_tensors

    def shape(self, proto, node_id: int, tensor: str) -> list[int]:
        try:
            shape = self.shapes.get(tensor)
        except shape_inference.InferenceError as exc:
            raise self.error(proto, node_id, f"ONNX shape inference failed: {exc}") from None
        if shape is None:
            raise self.error(
                proto,
                node_id,
                f"the shape of tensor '{tensor}' is unknown: {self.shapes.why_unknown()}",
            )
        return shape

    def shape_arithmetic(self, proto, node_id: int) -> bool:
        """Is ``proto`` index arithmetic on static shapes? It is then a constant, like a Constant node."""
        try:
            return self.shapes.is_shape_arithmetic(proto)
        except shape_inference.InferenceError as exc:
            raise self.error(proto, node_id, f"ONNX shape inference failed: {exc}") from None

    def parse(self, proto, node_id: int, preds: list[int]) -> list[Node]:
        op = proto.op_type
        if op in ("TopK", "Gather"):
            self.note_experts(proto, node_id)
        if op == "Concat":
            made = cache_append(self, proto, node_id, preds)
            if made is not None:
                return made
        if self.vector_classes and op == "TopK" and proto.input[0] in self.producer:
            return [top_k(self, proto, node_id, preds)]
        if self.vector_classes and op == "LayerNormalization":
            made = layer_norm_layers(self, proto, node_id, preds)
            if made is not None:
                return made
        elif self.vector_classes and op in ("Mul", "Div") and self.is_key_scale(proto):
            return [self.dummy(proto, node_id, preds, folded=True)]
        elif self.vector_classes and op != "Softmax":
            made = vector_layer(self, proto, node_id, preds)
            if made is not None:
                return [made]
        if op in ("Conv", "QLinearConv"):
            return [conv_layer(self, proto, node_id, preds)]
        if op in ("Gemm", "MatMul"):
            return [gemm_layer(self, proto, node_id, preds)]
        if op in POOLING_OPS:
            return [pooling_layer(self, proto, node_id, preds)]
        if op in ("Add", "Mul") and len(proto.input) == 2:
            a, b = (self.shape(proto, node_id, t) for t in proto.input[:2])
            if a != b:
                if (
                    abs(len(a) - len(b)) == 1
                    and len(self.shape(proto, node_id, proto.output[0])) == 3
                ):
                    return [asymmetric_simd_layer(self, proto, node_id, preds, a, b)]
                return [self.dummy(proto, node_id, preds)]
        if op in SIMD_OPS:
            return [simd_layer(self, proto, node_id, preds)]
        if op == "Softmax":
            return softmax_layers(self, proto, node_id, preds)
        if op in PROPAGATION_OPS:
            return [self.propagation(proto, node_id, preds)]
        if op in MOVING_OPS and proto.input[0] in self.producer:
            return [moving_node(self, proto, node_id, preds)]
        if op == "LpNormalization":
            raise self.error(
                proto,
                node_id,
                "LpNormalization is not supported by Stream; remove it from the model",
            )
        return [self.dummy(proto, node_id, preds)]

    def note_experts(self, proto, node_id: int) -> None:
        """A router's k (TopK), and a Gather of expert weights per (token, expert) pair from a table of E
        experts (a weight of rank 3 or more): each distinct expert is read once, the single-core import's
        rule (``zigzag.io.onnx_kernels.gathered_experts``)."""
        if proto.op_type == "TopK":
            shape = self.shapes.table.get(proto.output[0]) if proto.output else None
            self.router_k = shape[-1] if shape and shape[-1] > 0 else self.router_k
            return
        table = self.weight_shapes.get(proto.input[0])
        indices = self.shapes.table.get(proto.input[1]) if len(proto.input) > 1 else None
        if self.router_k is None or not table or len(table) < 3 or not indices:
            return
        pairs = math.prod(indices)
        if pairs > 0:
            self.expert_gathers[node_id] = gathered_experts(table[0], self.router_k, pairs) / pairs

    def make_layer(
        self,
        proto,
        node_id,
        op_type,
        type_,
        *,
        equation,
        loop_sizes,
        precision,
        source,
        relations=(),
        pr_sizes=None,
        padding=None,
        reshape=None,
        name=None,
        vector_op=None,
    ) -> StreamLayer:
        name = proto.name if name is None else name
        if any(s <= 0 for s in loop_sizes.values()):
            raise self.error(
                proto,
                node_id,
                f"loop sizes {loop_sizes} contain an unknown (0) dimension: "
                f"{self.shapes.why_unknown()}",
            )
        # a layer of a node giving several (Softmax, LayerNormalization) may have its own entry (an
        # allocation search writes one per layer)
        entry = self.mapping.entry_for(
            name if name in self.mapping.entries else proto.name, proto.op_type
        )
        entry = resolve_generic_dims(
            entry, proto.op_type, loop_sizes, self.mapping.file, f"layer '{name}'"
        )
        if vector_op is not None:
            entry = placed_entry(self, proto, node_id, entry, vector_op, loop_sizes)
        layer = Layer(
            id=node_id,
            name=name,
            operator_type=op_type,
            equation=equation,
            loop_sizes=loop_sizes,
            operand_dims=parse_equation(equation),
            relations=tuple(DimRelation.parse(r) for r in relations),
            precision=precision,
            operand_source=source,
            mapping=CoreMappingEntry(
                name=entry.name,
                spatial_mapping=self.spatial_mapping(entry),
                memory_operand_links=dict(STREAM_MEMORY_OPERAND_LINKS),
            ),
            given_pr_sizes=pr_sizes or {},
            padding=padding or {},
            vector_op=vector_op,
        )
        return StreamLayer(node_id, name, proto.op_type, type_, layer, entry, reshape)

    def spatial_mapping(self, entry: MappingEntry):
        flows = [self.dataflows.get(core) for core in entry.core_allocation]
        if flows and all(f is not None for f in flows) and all(f == flows[0] for f in flows):
            return flows[0]
        return entry.spatial_mapping

    @staticmethod
    def attrs(proto) -> dict:
        return {a.name: helper.get_attribute_value(a) for a in proto.attribute}

    @staticmethod
    def simd_source(node_id: int, preds: list[int]) -> dict[str, int]:
        if len(preds) == 1:
            return {"W": node_id, "I": preds[0]}
        if len(preds) == 2:
            return {"W": preds[0], "I": preds[1]}
        raise ValueError(len(preds))

    def precision(self, proto, node_id, preds) -> dict[str, int]:
        weight, act, partial = _precisions(_ErrorSink(self, proto, node_id), _Named(proto))
        return {"W": weight if len(preds) < 2 else act, "I": act, "O_final": act, "O": partial}

    # ----- non-computation nodes -------------------------------------------------------------
    def propagation(self, proto, node_id, preds) -> PropagationNode:
        kind = PROPAGATION_OPS[proto.op_type]
        attrs = self.attrs(proto)
        if kind == "concat":
            if "axis" not in attrs:
                raise self.error(
                    proto, node_id, "Concat without an axis attribute; re-export the model"
                )
            shapes = [self.shape(proto, node_id, t) for t in proto.input]
            inputs = [self.producer.get(t) for t in proto.input]
            return PropagationNode(
                node_id,
                proto.name,
                proto.op_type,
                kind,
                tuple(preds),
                {"axis": attrs["axis"], "shapes": shapes, "inputs": inputs},
            )
        if kind == "gather":
            return PropagationNode(
                node_id,
                proto.name,
                proto.op_type,
                kind,
                tuple(preds),
                {"axis": attrs.get("axis", 0), "indices": self.gather_indices(proto)},
            )
        if len(preds) > 1:
            raise self.error(
                proto,
                node_id,
                f"{len(preds)} produced inputs; {proto.op_type} must have at most one",
            )
        if kind == "flatten":
            extra = {"axis": attrs.get("axis")}
        elif kind == "reshape":
            extra = {"shape": [d for d in self.shape(proto, node_id, proto.output[0]) if d != 0]}
        else:
            extra = {"perm": list(attrs["perm"]) if "perm" in attrs else None}
        return PropagationNode(node_id, proto.name, proto.op_type, kind, tuple(preds), extra)

    def gather_indices(self, proto) -> list | int:
        """Indices of a Gather, read as Stream does from a Constant node's value (any rank, as
        nested lists; a scalar reads as 0); else from the folded constants (position ids computed
        from constants); 0 when unknown."""
        name = proto.input[1] if len(proto.input) > 1 else None
        for node in self.model.graph.node:
            if node.op_type == "Constant" and node.output and node.output[0] == name:
                value = next((a for a in node.attribute if a.name == "value"), None)
                if value is not None:
                    array = numpy_helper.to_array(value.t)
                    return array.astype(int).tolist() if array.ndim > 0 else 0
        self.shapes.complete()
        folded = self.shapes.constants.get(name)
        return (
            np.asarray(folded).astype(int).tolist()
            if folded is not None and np.ndim(folded) > 0
            else 0
        )

    def dummy(self, proto, node_id, preds, folded: bool = False) -> PropagationNode:
        """A node computing nothing on the floor; ``out_shape``: its output's shape when known (an
        output shaped unlike its input, e.g. a reduction, depends on all of the input); ``folded``: its
        work is done by another layer (a key scale folded into the query's)."""
        shape = self.shapes.table.get(proto.output[0]) if proto.output else None
        attrs = {"out_shape": tuple(shape)} if shape and all(d > 0 for d in shape) else {}
        if folded:
            attrs["folded"] = True
        return PropagationNode(node_id, proto.name, proto.op_type, "dummy", tuple(preds[:2]), attrs)


class _Named:
    """Adapter giving ``_precisions`` the node view it expects (proto and a location)."""

    def __init__(self, proto):
        self.proto = proto
        self.where = f"'{proto.name}' ({proto.op_type})"


class _ErrorSink:
    """Adapter giving ``_precisions`` the model view it expects (an ``error`` factory)."""

    def __init__(self, parser: _Parser, proto, node_id: int):
        self.parser, self.proto, self.node_id = parser, proto, node_id

    def error(self, node, message: str) -> InputError:
        return self.parser.error(self.proto, self.node_id, message)
