"""ONNX model -> layers of the operator model (``read_onnx(..., operators="all")``; docs/models/operators.md).

Every tensor operator becomes layers built by ``zigzag.workload.operators``: matrix products as MAC layers
(grouped-query attention with its ``G`` loop, causal prefill in query blocks), everything else as vector
layers. What is left out, and why:

* *data movement* (Reshape, Transpose, Squeeze, Unsqueeze, Split, Slice, Expand, Flatten, Concat other
  than a KV-cache append, Cast, Identity, Dropout): carries its producer to its consumers, no layer;
* *input preprocessing*: nodes computed only from constants and integer graph inputs (the attention-mask
  arithmetic), i.e. not reachable from an embedding lookup or a float graph input; except Sin/Cos
  (rotary tables) and matrix products, which are layers;
* the *NaN guard* of an exported attention (``Where(IsNaN(p), 0, p)``), an exporter artefact;
* operators without a model (listed in a warning).

Layer ids are consecutive in node order; a layer's operand source is the layer producing it, found
through the left-out nodes.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto

from zigzag.io.onnx_attention import AttentionPlan, causal_split, plan_attention
from zigzag.io.onnx_kernels import distinct_experts, note_cache_projections
from zigzag.io.onnx_layers import _conv, _matmul_shapes, _Node, _pooling
from zigzag.io.onnx_reading import precision_bits
from zigzag.workload import operators as ops

logger = logging.getLogger(__name__)

DATA_MOVEMENT = frozenset(
    {
        "Reshape",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Split",
        "Slice",
        "Expand",
        "Flatten",
        "Concat",
        "Cast",
        "Identity",
        "Dropout",
        "Tile",
        "CastLike",
    }
)
BINARY = {
    "Add": "add",
    "Sub": "sub",
    "Mul": "mul",
    "Div": "div",
    "Max": "max",
    "Min": "max",
    "Pow": "pow",
    "Where": "where",
}
UNARY = {
    "Neg": "neg",
    "Exp": "exp",
    "Tanh": "tanh",
    "Erf": "erf",
    "Sqrt": "sqrt",
    "Reciprocal": "div",
    "Sigmoid": "sigmoid",
    "Sin": "sin",
    "Cos": "cos",
    "Relu": "max",
}
REDUCE = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max"}
FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}


@dataclass
class _State:
    """What the conversion has built so far."""

    layers: list[dict] = field(default_factory=list)
    producer: dict[str, int] = field(
        default_factory=dict
    )  # tensor -> id of the layer it comes from
    left_out: Counter = field(default_factory=Counter)  # reason -> node count

    @property
    def next_id(self) -> int:
        return len(self.layers)

    def add(self, specs: list[dict], outputs) -> None:
        self.layers.extend(specs)
        for tensor in outputs:
            self.producer[tensor] = specs[-1]["id"]


def convert(model, file: str | None, causal_blocks: int, causal: bool | None) -> list[dict]:
    """The layers of ``model`` (an ``onnx_layers._Model``), see the module docstring."""
    graph = model.model.graph
    model.shapes.complete()
    plan = plan_attention(model, causal_blocks, causal)
    reader = _Reader(model)
    state = _State()
    for index, proto in enumerate(graph.node):
        node = reader.node(index, proto)
        reason = _convert_node(model, reader, plan, state, node)
        if reason:
            state.left_out[reason] += 1
            _pass_through(plan, state, node)
    _report(file or "<onnx model>", state.left_out)
    note_cache_projections(file or "<onnx model>", state.layers)
    return state.layers


class _Reader:
    """The single-core importer's node helpers, for the nodes that keep their ZigZag form."""

    def __init__(self, model):
        self.model = model
        self.producers: dict[str, list[int]] = {}

    def node(self, index: int, proto):
        preds = [m for tensor in proto.input for m in self.producers.get(tensor, [])]
        for tensor in proto.output:
            self.producers.setdefault(tensor, []).append(index)
        return _Node(index, proto.name or f"Op{index}", proto, preds, self.producers)

    def window(self, node, state: _State) -> dict | None:
        """A convolution or pooling layer as the default import makes it, renumbered."""
        convert = _conv if "Conv" in node.proto.op_type else _pooling
        spec = convert(self.model, node)
        if spec is None:
            return None
        sources = {"I": state.next_id, "W": state.next_id} | _src(state, {"I": node.proto.input[0]})
        return spec | {"id": state.next_id, "operand_source": sources}

    def matmul(self, node, plan: AttentionPlan, state: _State) -> list[dict]:
        """A Gemm / MatMul: today's layer, with grouped-query loops and causal blocks where they apply."""
        proto = node.proto
        a, b = proto.input[0], proto.input[1]
        if proto.op_type == "MatMul" and plan.is_constant(a) and not plan.is_constant(b):
            return [self._weight_first(node, state)]
        computed = not plan.is_constant(b)
        w_role = plan.role(b) if computed else "weight"
        sources = _src(state, {"I": a, "W": b})
        bits = precision_bits(self.model, node)
        out = self.model.shape(proto.output[0], node)
        key = proto.output[0]
        if key in plan.attention:
            heads, groups, rows = plan.attention[key]
            shape = {"batch": out[0] or 1, "heads": heads, "groups": groups}
            reduction = self.model.shape(a, node)[-1]
        else:
            ia, _ = _matmul_shapes(self.model, node)
            rows, reduction = ia[-2], ia[-1]
            shape = {
                "batch": (ia[0] or 1) if len(ia) >= 3 else None,
                "heads": ia[1] if len(ia) == 4 and ia[1] else None,
            }
        blocks = [(rows, reduction, out[-1])]
        if key in plan.causal_nodes:
            causal_rows, keys = plan.causal_nodes[key]
            split = causal_split(
                causal_rows, plan.blocks, keys - causal_rows, plan.windows.get(key)
            )
            if key in plan.causal_scores:  # Q.K^T: fewer keys per block
                blocks = [(r, reduction, k) for r, k in split]
            elif reduction == keys and rows == causal_rows:  # P.V: fewer keys reduced per block
                blocks = [(r, k, out[-1]) for r, k in split]
        layers = []
        for index, (r, c, k) in enumerate(blocks):
            name = node.name if len(blocks) == 1 else f"{node.name}/causal{index}"
            layers.append(
                ops.matmul(
                    state.next_id + index,
                    name,
                    rows=r,
                    reduction=c,
                    cols=k,
                    w_role=w_role,
                    sources=sources,
                    operator_type=proto.op_type,
                    bits=bits,
                    **shape,
                )
            )
        return layers

    def _weight_first(self, node, state: _State) -> dict:
        """``W[r][c] @ X[b][c][n]`` (a weight on the left, e.g. Mamba's time-step projection) as the product
        of the transposes, ``X^T[b][n][c] @ W^T[c][r]``: rows n, reduction c, columns r."""
        proto = node.proto
        out = self.model.shape(proto.output[0], node)
        x = self.model.shape(proto.input[1], node)
        return ops.matmul(
            state.next_id,
            node.name,
            rows=out[-1],
            reduction=x[-2],
            cols=out[-2],
            batch=(out[0] or 1) if len(out) == 3 else None,
            sources=_src(state, {"I": proto.input[1]}),
            operator_type=proto.op_type,
            bits=precision_bits(self.model, node),
        )


def _convert_node(model, reader, plan: AttentionPlan, state: _State, node) -> str | None:
    """Adds the node's layers; returns why it has none (a left-out reason) or None."""
    proto = node.proto
    op = proto.op_type
    if op == "Constant" or model.is_shape_arithmetic(node):
        return "constant"
    if op in ("Gemm", "MatMul"):
        state.add(reader.matmul(node, plan, state), proto.output)
        return None
    if not plan.on_path(proto):
        if op in ("Sin", "Cos"):
            return _vector(model, plan, state, node)
        return "input preprocessing"
    if op in ("Conv", "QLinearConv", "MaxPool", "AveragePool", "GlobalAveragePool"):
        spec = reader.window(node, state)
        if spec is None:
            return f"no operator model ({op} of these shapes)"
        state.add([spec], proto.output)
        return None
    if plan.is_nan_guard(proto):
        return "NaN guard"
    if op == "Concat" and plan.is_cache_append(proto):
        new = plan.cache_new_input(proto)
        dims = ops.vector_dims(model.shape(new, node))
        spec = ops.cache_append(state.next_id, node.name, dims, sources=_src(state, {"I": new}))
        state.add([spec], proto.output)
        return None
    if op == "ScatterND":
        return _scatter(model, plan, state, node)
    if op in DATA_MOVEMENT:
        return "data movement"
    if op == "Gather":
        return _gather(model, plan, state, node)
    if plan.is_key_scale(proto):
        return "key scale"
    if op in BINARY or op in UNARY or op in REDUCE:
        return _vector(model, plan, state, node)
    if op in ("Softmax", "LayerNormalization", "Gelu"):
        return _decomposed(model, plan, state, node)
    if op == "TopK":
        return _top_k(model, plan, state, node)
    return f"no operator model ({op})"


def _src(state: _State, tensors: dict[str, str | None]) -> dict[str, int]:
    return {
        op: state.producer[t] for op, t in tensors.items() if t is not None and t in state.producer
    }


def _pass_through(plan: AttentionPlan, state: _State, node) -> None:
    """A left-out node's outputs come from the latest layer among its inputs' producers."""
    found = [state.producer[t] for t in node.proto.input if t in state.producer]
    if found:
        for tensor in node.proto.output:
            state.producer[tensor] = max(found)


def _scatter(model, plan: AttentionPlan, state: _State, node) -> str | None:
    """ScatterND writes its updates into a tensor: into a cache given as a graph input (a static cache's
    update), a KV-cache append of the updates; otherwise a copy of the updates."""
    data, updates = node.proto.input[0], node.proto.input[2]
    dims = ops.vector_dims(model.shape(updates, node))
    sources = _src(state, {"I": updates})
    if data in plan.past:
        spec = ops.cache_append(state.next_id, node.name, dims, sources=sources)
    else:
        spec = ops.elementwise(state.next_id, node.name, "copy", dims, sources=sources)
    state.add([spec], node.proto.output)
    return None


def _gather(model, plan: AttentionPlan, state: _State, node) -> str | None:
    table = node.proto.input[0]
    dims = plan.dims(node.proto.output[0], model.shape(node.proto.output[0], node))
    role = "weight" if plan.is_weight(table) else "activation"
    if role == "weight" and len(plan.shape(table)) >= 3:
        dims = distinct_experts(plan.shape(table)[0], state.layers, dims)
    spec = ops.gather(
        state.next_id, node.name, dims, table_role=role, sources=_src(state, {"I": table})
    )
    state.add([spec], node.proto.output)
    return None


def _vector(model, plan: AttentionPlan, state: _State, node) -> str | None:
    """Element-wise, unary and reduction nodes (one layer, or one per causal block)."""
    proto = node.proto
    out = proto.output[0]
    op = proto.op_type
    if op in REDUCE:
        data = proto.input[0]
        in_dims = plan.dims(data, model.shape(data, node))
        axes = _axes(model, node, len(in_dims))
        if len(axes) != 1:
            return f"no operator model ({op} over axes {axes})"
        names = list(in_dims)  # the reduced axis last: it becomes the reduction loop C
        in_dims = {
            d: in_dims[d] for d in names[: axes[0]] + names[axes[0] + 1 :] + [names[axes[0]]]
        }

        def make(i, dims):
            return ops.reduction(i, node.name, REDUCE[op], dims, sources=_src(state, {"I": data}))

        state.add(plan.blocked(proto, in_dims, state.next_id, make), proto.output)
        return None
    out_dims = plan.dims(out, model.shape(out, node))
    operands = [t for t in proto.input if t and not plan.is_scalar(t)]
    if op == "Where":
        operands = [t for t in operands if plan.on_path_tensor(t)] or operands
    if not operands or len(operands) > 2:
        return f"no operator model ({op} with {len(operands)} tensor inputs)"
    spans = [ops.broadcast_dims(plan.shape(t), out_dims) for t in operands]
    first = next((i for i, s in enumerate(spans) if len(s) == len(out_dims)), 0)
    i_tensor = operands[first]
    w_tensor = operands[1 - first] if len(operands) == 2 else None
    vector_op = BINARY.get(op) or UNARY[op]
    roles = {"O": "activation", "I": plan.role(i_tensor)} | (
        {"W": plan.role(w_tensor)} if w_tensor else {}
    )
    w_dims = spans[1 - first] if w_tensor else None

    def make(layer_id, dims):
        return ops.elementwise(
            layer_id,
            node.name,
            vector_op,
            dims,
            w_dims=w_dims,
            roles=roles,
            sources=_src(state, {"I": i_tensor, "W": w_tensor}),
        )

    state.add(plan.blocked(proto, out_dims, state.next_id, make), proto.output)
    return None


def _top_k(model, plan: AttentionPlan, state: _State, node) -> str | None:
    """TopK over the last axis with a constant k (a mixture of experts' router)."""
    proto = node.proto
    data = proto.input[0]
    dims = plan.dims(data, model.shape(data, node))
    k = model.shapes.constants.get(proto.input[1]) if len(proto.input) > 1 else None
    if (
        k is None
        or node.attrs().get("axis", -1) % len(dims) != len(dims) - 1
        or {"K", "C"} & set(list(dims)[:-1])
    ):
        return "no operator model (TopK: not over the last axis with a constant k)"
    spec = ops.top_k(
        state.next_id, node.name, dims, int(np.ravel(k)[0]), sources=_src(state, {"I": data})
    )
    state.add([spec], proto.output)
    return None


def _decomposed(model, plan: AttentionPlan, state: _State, node) -> str | None:
    """Softmax, LayerNormalization and Gelu through their decompositions (last axis only)."""
    proto = node.proto
    data = proto.input[0]
    dims = plan.dims(data, model.shape(data, node))
    axis = node.attrs().get("axis", -1)
    if proto.op_type != "Gelu" and axis not in (-1, len(dims) - 1):
        return f"no operator model ({proto.op_type} over axis {axis})"
    source = _src(state, {"I": data}).get("I")
    if proto.op_type == "Softmax":
        make = lambda i, d: ops.softmax(i, node.name, d, source)  # noqa: E731
        state.add(plan.blocked(proto, dims, state.next_id, make), proto.output)
        return None
    if proto.op_type == "LayerNormalization":
        specs = ops.layernorm(state.next_id, node.name, dims, source)
    else:
        form = "tanh" if node.attrs().get("approximate", b"none") in (b"tanh", "tanh") else "erf"
        specs = ops.gelu(state.next_id, node.name, dims, source, form=form)
    state.add(specs, proto.output[:1])
    return None


def _axes(model, node, rank: int) -> list[int]:
    """The reduced axes (attribute, or the second input from opset 18), non-negative."""
    axes = node.attrs().get("axes")
    if axes is None and len(node.proto.input) > 1 and node.proto.input[1]:
        value = model.shapes.constants.get(node.proto.input[1])
        axes = None if value is None else [int(a) for a in np.ravel(value)]
    if axes is None:
        return list(range(rank))
    return sorted(a % rank for a in axes)


_WHY = {
    "input preprocessing": " (computed from constants and integer inputs only, e.g. the attention mask; not per-token work)",
    "NaN guard": " (the exporter's Where(IsNaN(p), 0, p) after a softmax)",
    "key scale": " (folded into the query's scale: scaling the keys would rewrite the KV cache)",
}


def _report(file: str, left_out: Counter) -> None:
    """One log line per reason a node has no layer."""
    for reason, count in sorted(left_out.items()):
        if reason == "constant":
            continue
        level = logging.INFO if reason in ("data movement", "key scale") else logging.WARNING
        logger.log(
            level,
            "%s: %d node%s left out: %s%s",
            file,
            count,
            "s" * (count > 1),
            reason,
            _WHY.get(reason, ""),
        )


def export_inference(model, name: str | None = None) -> dict:
    """Workload metadata of an LLM export (an ``onnx.ModelProto``; ``name`` default its graph's): past K/V
    inputs (float inputs of rank 4) make it a decode step whose context is their length; tokens = the id
    input's length; layers = its attention softmaxes (0: not a transformer)."""
    from zigzag.io.onnx_reading import shape_table

    floats, ints = [], []
    initializers = {i.name for i in model.graph.initializer}
    for info in model.graph.input:
        if info.name in initializers:
            continue
        tensor = info.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        (floats if tensor.elem_type in FLOAT_TYPES else ints).append((info.name, shape))
    past = [shape for _, shape in floats if len(shape) == 4]
    shapes = shape_table(
        model
    )  # attention softmaxes are over [B, heads, S, keys] (a router's is rank 2)
    softmaxes = [n for n in model.graph.node if n.op_type == "Softmax"]
    ids = next(
        (shape for name, shape in ints if "input_ids" in name), ints[0][1] if ints else [1, 1]
    )
    return {
        "model": name or model.graph.name or "onnx",
        "phase": "decode" if past else "prefill",
        "batch": ids[0] or 1,
        "tokens": ids[-1] if len(ids) > 1 else 1,
        "context": past[0][2] if past else 0,
        "layers": sum(1 for n in softmaxes if len(shapes.get(n.input[0], [4] * 4)) >= 4),
    }
