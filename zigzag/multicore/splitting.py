"""Graph-level splitting of big Conv/Gemm layers along output channels (the seed's LayerSplittingStage).

``split_layers`` rewrites an ONNX model: a node split ``n`` ways becomes ``n`` nodes of the same
operator, each computing ``K / n`` output channels with its own slice of the weights (and bias),
named ``<name>_<i>``, followed by a ``Concat`` (``<name>_split_concat``) that rebuilds the
original output tensor. Only shapes are written: the new weight initializers carry no values.
The pieces are ordinary layers for the rest of the flow, so each can get its own core; the
consumers depend on them through the Concat (element maps, ``zigzag.multicore.propagation``).

``weight_split_factors`` chooses the factors the seed's way: the smallest divisor of K that makes
a layer's constant weights fit in ``fraction`` of the smallest weight memory among its
candidate cores (``fraction`` 0.5 = double-buffered weights, the seed's ``split_W_double_buffered``).

Stream at ed4e12e no longer runs this stage (a dead helper remains; its Concat support needs a
constant input); this is implemented from the seed's description.
"""

from __future__ import annotations

import copy
import math

from onnx import ModelProto, TensorProto, helper

from zigzag.errors import InputError
from zigzag.io.onnx_reading import shape_table as _shape_table
from zigzag.multicore.workload import StreamWorkload

SPLITTABLE = {"Conv": (1, 0, 2), "Gemm": (1, None, 2)}
"""op type -> (weight input index, weight output-channel axis (None: from transB), bias input index)."""


def split_layers(model: ModelProto, factors: dict[str, int], file: str | None = None) -> ModelProto:
    """A copy of ``model`` with each named Conv/Gemm node split ``factors[name]`` ways along K."""
    model = copy.deepcopy(model)
    graph = model.graph
    shapes = _shape_table(model)
    names = {node.name for node in graph.node}
    for name in factors:
        if name not in names:
            raise InputError(
                file, f"layer split '{name}'", "no node with that name; use the ONNX node name"
            )
    initializers = {init.name: init for init in graph.initializer}
    new_nodes = []
    for node in graph.node:
        n = factors.get(node.name, 1)
        if n == 1:
            new_nodes.append(node)
            continue
        new_nodes += _split_node(graph, node, n, shapes, initializers, file)
    del graph.node[:]
    graph.node.extend(new_nodes)
    return model


def _split_node(graph, node, n: int, shapes, initializers, file) -> list:
    where = f"layer split '{node.name}'"
    if node.op_type not in SPLITTABLE:
        raise InputError(file, where, f"{node.op_type} cannot be split; only Conv and Gemm layers")
    w_index, w_axis, b_index = SPLITTABLE[node.op_type]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if w_axis is None:
        w_axis = 0 if attrs.get("transB", 0) else 1
    weight = initializers.get(node.input[w_index])
    out = node.output[0]
    if weight is None or out not in shapes:
        raise InputError(file, where, "weights must be an initializer and the output shape known")
    out_shape = list(shapes[out])
    channel_axis = 1 if node.op_type == "Conv" else len(out_shape) - 1
    channels = out_shape[channel_axis]
    if channels % n:
        raise InputError(
            file, where, f"{n} does not divide the {channels} output channels; pick a divisor"
        )
    nodes = []
    for i in range(n):
        inputs = list(node.input)
        inputs[w_index] = _slice_initializer(graph, weight, w_axis, n, i)
        if len(inputs) > b_index and inputs[b_index] in initializers:
            inputs[b_index] = _slice_initializer(graph, initializers[inputs[b_index]], 0, n, i)
        piece_out = f"{out}_split_{i}"
        piece_shape = list(out_shape)
        piece_shape[channel_axis] = channels // n
        graph.value_info.append(
            helper.make_tensor_value_info(piece_out, TensorProto.FLOAT, piece_shape)
        )
        piece = helper.make_node(node.op_type, inputs, [piece_out], name=f"{node.name}_{i}")
        piece.attribute.extend(node.attribute)
        nodes.append(piece)
    concat = helper.make_node(
        "Concat",
        [p.output[0] for p in nodes],
        [out],
        name=f"{node.name}_split_concat",
        axis=channel_axis,
    )
    return nodes + [concat]


def _slice_initializer(graph, tensor: TensorProto, axis: int, n: int, i: int) -> str:
    dims = list(tensor.dims)
    dims[axis] //= n
    piece = TensorProto(name=f"{tensor.name}_split_{i}", data_type=tensor.data_type, dims=dims)
    graph.initializer.append(piece)
    return piece.name


def weight_split_factors(
    workload: StreamWorkload, weight_capacities: dict[int, int], fraction: float
) -> dict[str, int]:
    """{Conv/Gemm node name: K split factor > 1} so that each piece's weights fit (see module doc)."""
    if not fraction > 0:
        raise InputError(
            None, "split_W_percentage", f"{fraction} must be > 0 (e.g. 0.5 for double buffering)"
        )
    factors = {}
    for layer in workload.layers:
        if layer.op_type not in SPLITTABLE or "W" not in layer.constant_operands:
            continue
        cores = [c for c in layer.mapping.core_allocation if c in weight_capacities]
        if not cores:
            continue
        capacity = fraction * min(weight_capacities[c] for c in cores)
        factor = math.ceil(layer.layer.operand_size_bit("W") / capacity)
        k = layer.sizes["K"]
        while factor > 1 and k % factor:
            factor += 1
        if factor > 1:
            factors[layer.name] = factor
    return factors
