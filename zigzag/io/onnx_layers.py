"""ONNX nodes -> layer dicts: the converters of the operators ZigZag's import knows (Conv, Gemm /
MatMul, pooling, element-wise) and the model and node views they read, shared by
:mod:`zigzag.io.onnx_import` and :mod:`zigzag.io.onnx_operators` (docs/reference/workload.md#onnx-models).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable

from onnx import AttributeProto, ModelProto, NodeProto, helper, shape_inference

from zigzag.errors import InputError
from zigzag.io.onnx_reading import precision_bits
from zigzag.io.onnx_shapes import ShapeLookup
from zigzag.workload.operators import matmul

logger = logging.getLogger(__name__)


LAYER_FIELDS = (
    "id",
    "name",
    "operator_type",
    "equation",
    "dimension_relations",
    "loop_dims",
    "loop_sizes",
    "operand_precision",
    "operand_source",
    "pr_loop_dims",
    "pr_loop_sizes",
    "padding",
)
CONV_EQUATION = "O[b][g][k][oy][ox]+=W[g][k][c][fy][fx]*I[b][g][c][iy][ix]"
POOL_EQUATION = "O[b][g][oy][ox]+=W[fx][fy]*I[b][g][iy][ix]"
# Loop dims of an element-wise layer by output rank (channels named G, as in the YAML workloads).
ELEMENTWISE_DIMS = {1: ("g",), 2: ("d", "g"), 3: ("b", "d", "g"), 4: ("b", "g", "oy", "ox")}


@dataclass(frozen=True)
class _Node:
    """One ONNX node with its id, effective name and producer ids (docs/reference/workload.md#onnx-models)."""

    id: int
    name: str
    proto: NodeProto
    preds: list[int]
    producers: dict[str, list[int]]

    @property
    def where(self) -> str:
        return f"node {self.id} '{self.name}' ({self.proto.op_type})"

    def attrs(self) -> dict:
        return {a.name: helper.get_attribute_value(a) for a in self.proto.attribute}

    def source_of(self, input_index: int) -> int:
        """Id of the node producing the given input, or this node's id if it is constant."""
        return (self.producers.get(self.proto.input[input_index]) or [self.id])[0]


class _Model:
    """The model being read, its tensor shapes and where errors are reported."""

    def __init__(self, model: ModelProto, file: str | None, reference_hw_pairing: bool):
        self.model = model
        self.file = file
        self.shapes = ShapeLookup(model)
        self.x_axis, self.y_axis = (0, 1) if reference_hw_pairing else (1, 0)

    def error(self, node: _Node, message: str) -> InputError:
        return InputError(self.file, node.where, message)

    def is_shape_arithmetic(self, node: _Node) -> bool:
        """Does the node compute shape values (index arithmetic), not tensors?"""
        try:
            return self.shapes.is_shape_arithmetic(node.proto)
        except shape_inference.InferenceError as exc:
            raise self.error(node, f"ONNX shape inference failed: {exc}") from None

    def shape(self, tensor: str, node: _Node) -> list[int]:
        """Shape of a tensor (unknown dims read as 0), completed by shape inference and folding of
        the constant shape computations when it is missing or unknown (see docs/reference/onnx-operators.md)."""
        try:
            shape = self.shapes.get(tensor)
        except shape_inference.InferenceError as exc:
            raise self.error(node, f"ONNX shape inference failed: {exc}") from None
        if shape is None:
            raise self.error(
                node, f"the shape of tensor '{tensor}' is unknown: {self.shapes.why_unknown()}"
            )
        return shape


def _input_shape(model: _Model, node: _Node, index: int) -> list[int]:
    if len(node.proto.input) <= index or not node.proto.input[index]:
        raise model.error(node, f"has no input {index + 1}; re-export the model")
    return model.shape(node.proto.input[index], node)


def _output_shape(model: _Model, node: _Node) -> list[int]:
    if not node.proto.output or not node.proto.output[0]:
        raise model.error(node, "has no output; re-export the model")
    return model.shape(node.proto.output[0], node)


def _check_sizes(model: _Model, node: _Node, layer: dict) -> dict:
    """A converted layer whose loop sizes are all known and positive."""
    sizes = dict(zip(layer["loop_dims"], layer["loop_sizes"]))
    sizes |= dict(zip(layer["pr_loop_dims"] or [], layer["pr_loop_sizes"] or []))
    if min(sizes.values()) < 1:
        raise model.error(
            node,
            f"its tensor shapes give loop sizes {sizes}, some unknown (0) or negative: "
            f"{model.shapes.why_unknown()}",
        )
    return layer


def _ints(
    model: _Model, node: _Node, name: str, default: list[int], minimum: int, axes: int = 2
) -> list[int]:
    """A list-of-INTs attribute with one entry per spatial axis (``axes``), each at least ``minimum``."""
    attr = next((a for a in node.proto.attribute if a.name == name), None)
    if attr is None:
        return list(default)
    values = list(attr.ints) if attr.type == AttributeProto.INTS else None
    count = 2 * axes if name == "pads" else axes
    if values is None or len(values) != count or min(values) < minimum:
        raise model.error(
            node,
            f"attribute '{name}' must be {count} whole numbers of at least {minimum}, "
            f"got {helper.get_attribute_value(attr)!r}; re-export the model",
        )
    return values


def _int(model: _Model, node: _Node, name: str, default: int, allowed: range) -> int:
    """An INT attribute within ``allowed``."""
    attr = next((a for a in node.proto.attribute if a.name == name), None)
    if attr is None:
        return default
    if attr.type != AttributeProto.INT or attr.i not in allowed:
        raise model.error(
            node,
            f"attribute '{name}' must be a whole number from {allowed.start} to "
            f"{allowed.stop - 1}, got {helper.get_attribute_value(attr)!r}; re-export the model",
        )
    return attr.i


def _operand_precision(weight: int, act: int, partial: int) -> dict[str, int]:
    return {"W": weight, "I": act, "O_final": act, "O": partial}


def _operand_source(model: _Model, node: _Node) -> dict[str, int]:
    """I and W sources from the producer list; a missing producer means a constant operand."""
    preds = node.preds
    if len(preds) > 2:
        raise model.error(
            node,
            f"{len(preds)} of its inputs are produced by other nodes (ids {preds}); at most 2 are "
            "supported -- make weights, biases and quantisation parameters initializers",
        )
    return {"W": preds[1] if len(preds) == 2 else node.id, "I": preds[0] if preds else node.id}


def _layer(node: _Node, operator_type: str, **fields) -> dict:
    """A layer dict with all workload-YAML fields, in their usual order (absent ones null)."""
    values = {
        "id": node.id,
        "name": node.name,
        "operator_type": operator_type,
        "dimension_relations": [],
    }
    values |= fields
    return {"kind": "layer"} | {field: values.get(field) for field in LAYER_FIELDS}


def _window(kernel, strides, dilations, pads, x: int, y: int) -> dict:
    """Relations and padding of a 2-D sliding window; x / y = ONNX spatial axis index used."""
    return {
        "dimension_relations": [
            f"ix={strides[x]}*ox+{dilations[x]}*fx",
            f"iy={strides[y]}*oy+{dilations[y]}*fy",
        ],
        "padding": [[pads[x], pads[x + 2]], [pads[y], pads[y + 2]]],
        "fx": kernel[x],
        "fy": kernel[y],
    }


def _conv(model: _Model, node: _Node) -> dict:
    """Conv / QLinearConv (docs/reference/workload.md#onnx-models); a 1-D convolution (NCW, e.g. Mamba's
    depthwise one over the tokens) is read as a 2-D one of height 1."""
    attrs = node.attrs()
    if "kernel_shape" not in attrs:
        raise model.error(
            node, "has no kernel_shape attribute; re-export the model with kernel_shape set"
        )
    kernel = attrs["kernel_shape"]
    ia = _input_shape(model, node, 0)
    oa = _output_shape(model, node)
    axes = len(kernel) if isinstance(kernel, list) else 0
    if axes not in (1, 2) or len(ia) != axes + 2 or len(oa) != axes + 2:
        raise model.error(
            node,
            f"only 1-D and 2-D convolutions on NCW / NCHW tensors are supported (kernel_shape "
            f"{kernel}, input shape {ia}, output shape {oa})",
        )
    if ia[0] != oa[0]:
        raise model.error(node, f"batch size of input {ia} and output {oa} differ")
    group = _int(model, node, "group", 1, range(1, max(ia[1], 1) + 1))
    kernel = _ints(model, node, "kernel_shape", [], 1, axes)
    strides = _ints(model, node, "strides", [1] * axes, 1, axes)
    dilations = _ints(model, node, "dilations", [1] * axes, 1, axes)
    pads = _ints(model, node, "pads", [0] * 2 * axes, 0, axes)
    if axes == 1:  # height 1: the one spatial axis is the width
        ia, oa = ia[:2] + [1] + ia[2:], oa[:2] + [1] + oa[2:]
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        pads = [0, pads[0], 0, pads[1]]
    x_axis, y_axis = (model.x_axis, model.y_axis) if axes == 2 else (1, 0)
    window = _window(kernel, strides, dilations, pads, x_axis, y_axis)
    weight, act, partial = precision_bits(model, node)
    return _layer(
        node,
        node.proto.op_type,
        equation=CONV_EQUATION,
        dimension_relations=window["dimension_relations"],
        loop_dims=["B", "K", "G", "OX", "OY", "C", "FX", "FY"],
        loop_sizes=[
            oa[0] or 1,
            math.ceil(oa[1] / group),
            group,
            oa[3],
            oa[2],
            math.ceil(ia[1] / group),
            window["fx"],
            window["fy"],
        ],
        operand_precision=_operand_precision(weight, act, partial),
        operand_source=_operand_source(model, node),
        pr_loop_dims=["IX", "IY"],
        pr_loop_sizes=[ia[3], ia[2]],
        padding=window["padding"],
    )


def _matmul_shapes(model: _Model, node: _Node) -> tuple[list[int], list[int]]:
    """Checked (input, output) shapes of a Gemm / MatMul, input transposed if transA."""
    ia = _input_shape(model, node, 0)
    oa = _output_shape(model, node)
    if len(ia) != len(oa):
        raise model.error(
            node, f"input rank {len(ia)} ({ia}) differs from output rank {len(oa)} ({oa})"
        )
    if _int(model, node, "transA", 0, range(2)):
        if len(ia) != 2:
            raise model.error(node, f"transA is only supported for 2-D inputs, got {ia}")
        ia = ia[::-1]
    if len(ia) not in (2, 3, 4):
        raise model.error(
            node,
            f"rank-{len(ia)} input {ia}: only ranks 2, 3 (batch) and 4 (batch, heads) are supported",
        )
    if ia[-2] != oa[-2] or ia[:-2] != oa[:-2]:
        raise model.error(node, f"input {ia} and output {oa} differ in rows or batch dimensions")
    return ia, oa


def _matmul(model: _Model, node: _Node) -> dict:
    """Gemm / MatMul (docs/reference/workload.md#onnx-models): O[b][h][d][k] += I[b][h][d][c] * W([b][h])[c][k]."""
    ia, oa = _matmul_shapes(model, node)
    return matmul(
        node.id,
        node.name,
        rows=ia[-2],
        reduction=ia[-1],
        cols=oa[-1],
        batch=(ia[0] or 1) if len(ia) >= 3 else None,
        heads=ia[1] if len(ia) == 4 and ia[1] else None,
        w_role="weight" if len(node.preds) < 2 else "activation",
        sources=_operand_source(model, node),
        operator_type=node.proto.op_type,
        roles=False,
        bits=precision_bits(model, node),
    )


def _pooling(model: _Model, node: _Node) -> dict | None:
    """MaxPool / AveragePool / GlobalAveragePool as a Pooling layer (height/width paired correctly)."""
    ia = _input_shape(model, node, 0)
    oa = _output_shape(model, node)
    global_pool = node.proto.op_type == "GlobalAveragePool"
    if len(ia) != 4 or len(oa) != 4 or not (global_pool or "kernel_shape" in node.attrs()):
        return None
    window = _window(
        ia[2:] if global_pool else _ints(model, node, "kernel_shape", [], 1),
        _ints(model, node, "strides", [1, 1], 1),
        _ints(model, node, "dilations", [1, 1], 1),
        _ints(model, node, "pads", [0, 0, 0, 0], 0),
        x=1,
        y=0,
    )
    _, act, partial = precision_bits(model, node)
    return _layer(
        node,
        "Pooling",
        equation=POOL_EQUATION,
        dimension_relations=window["dimension_relations"],
        loop_dims=["B", "G", "OY", "OX", "FX", "FY"],
        loop_sizes=[oa[0] or 1, oa[1], oa[2], oa[3], window["fx"], window["fy"]],
        operand_precision=_operand_precision(0, act, partial),
        operand_source={"I": node.source_of(0), "W": node.id},
        pr_loop_dims=["IX", "IY"],
        pr_loop_sizes=[ia[3], ia[2]],
        padding=window["padding"],
    )


def _broadcast_dims(shape: list[int], out_shape: list[int], names: tuple[str, ...]) -> list[str]:
    """Output dims an input spans under ONNX (right-aligned) broadcasting."""
    offset = len(out_shape) - len(shape)
    return [names[offset + i] for i, size in enumerate(shape) if size == out_shape[offset + i]]


def _elementwise(model: _Model, node: _Node) -> dict | None:
    """Add / Sub / Mul as a layer of that operator type: O[..] = W[..] + I[..] (``*`` for Mul),
    broadcast operands indexed less."""
    oa = _output_shape(model, node)
    names = ELEMENTWISE_DIMS.get(len(oa))
    if names is None or len(node.proto.input) != 2 or not all(node.proto.input):
        return None
    roles = {"I": 0, "W": 1}
    if node.source_of(0) == node.id != node.source_of(1):
        roles = {"I": 1, "W": 0}  # the constant input plays the weight
    index = {
        op: "".join(
            f"[{d}]" for d in _broadcast_dims(model.shape(node.proto.input[i], node), oa, names)
        )
        for op, i in roles.items()
    }
    sign = "*" if node.proto.op_type == "Mul" else "+"
    order = ("I", "W") if not index["W"] else ("W", "I")  # only the last operand may be written X[]
    inputs = f"{order[0]}{index[order[0]]}{sign}{order[1]}{index[order[1]] or '[]'}"
    source = {op: node.source_of(i) for op, i in roles.items()}
    weight, act, partial = precision_bits(model, node)
    return _layer(
        node,
        node.proto.op_type,
        equation=f"O{''.join(f'[{d}]' for d in names)}={inputs}",
        loop_dims=[d.upper() for d in names],
        loop_sizes=[size or 1 for size in oa],
        operand_precision=_operand_precision(
            weight if source["W"] == node.id else act, act, partial
        ),
        operand_source=source,
    )


def _dummy(node: _Node) -> dict:
    """A node that is only a dependency (docs/reference/workload.md#onnx-models): at most two sources, I then W."""
    source = dict(zip(("I", "W"), node.preds))
    return {
        "kind": "dummy",
        "id": node.id,
        "name": node.name,
        "type": node.proto.op_type.lower(),
        "operand_source": source,
    }


Converter = Callable[[_Model, _Node], "dict | None"]
LAYER_OPERATORS: dict[str, Converter] = {
    "Conv": _conv,
    "QLinearConv": _conv,
    "Gemm": _matmul,
    "MatMul": _matmul,
}
EXTRA_OPERATORS: dict[str, Converter] = {
    "MaxPool": _pooling,
    "AveragePool": _pooling,
    "GlobalAveragePool": _pooling,
    "Add": _elementwise,
    "Sub": _elementwise,
    "Mul": _elementwise,
}
