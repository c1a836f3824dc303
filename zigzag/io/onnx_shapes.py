"""Static tensor shapes of an ONNX model, with its constant shape computations folded.

Exporters often write a shape as arithmetic on another tensor's shape (``Shape -> Gather ->
Div -> Concat -> Reshape``, or the ``Slice`` bounds of a channel split). ONNX shape inference,
even with data propagation, leaves the tensors behind such arithmetic without a shape. When the
model's input shapes are static, that arithmetic only depends on constants, so it is evaluated
here (with ``onnx.reference``, node by node) and its results are handed back to shape inference
as constants, until no more shapes can be found. The model given is never modified; node order
and names are unchanged, so the results index the original model.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator

from zigzag.io.onnx_reading import shape_table

#: Operators folded when all their inputs are known constants (``Shape`` when its input's
#: shape is static): the vocabulary of exported shape arithmetic.
SHAPE_OPERATORS = frozenset(
    {
        "Add",
        "Cast",
        "Ceil",
        "Concat",
        "Constant",
        "ConstantOfShape",
        "Div",
        "Equal",
        "Expand",
        "Floor",
        "Gather",
        "Identity",
        "Max",
        "Min",
        "Mod",
        "Mul",
        "Neg",
        "Range",
        "ReduceProd",
        "Reshape",
        "Shape",
        "Size",
        "Slice",
        "Sqrt",
        "Squeeze",
        "Sub",
        "Unsqueeze",
        "Where",
    }
)
#: Larger constants are data (weights), not shape arithmetic: they are never folded.
MAX_FOLDED_ELEMENTS = 4096


def is_static(shape: list[int] | None) -> bool:
    """Is ``shape`` known with every dimension positive (as read by ``shape_table``)?"""
    return shape is not None and all(size > 0 for size in shape)


def dynamic_inputs(model: ModelProto) -> list[str]:
    """The model inputs (not initializers) whose shape is not static, e.g. ``'x' [N, 3, 224, 224]``."""
    initializers = {init.name for init in model.graph.initializer}
    found = []
    for info in model.graph.input:
        if info.name in initializers:
            continue
        tensor_type = info.type.tensor_type
        if not tensor_type.HasField("shape"):
            found.append(f"'{info.name}' (no shape)")
            continue
        dims = [
            d.dim_value if d.dim_value > 0 else (d.dim_param or "?") for d in tensor_type.shape.dim
        ]
        if any(isinstance(d, str) for d in dims):
            found.append(f"'{info.name}' [{', '.join(map(str, dims))}]")
    return found


class ShapeLookup:
    """The tensor shapes of a model: those stored in it, completed on the first missing or
    unknown one by shape inference with the constant shape computations folded (once)."""

    def __init__(self, model: ModelProto):
        self.model = model
        self.table = shape_table(model)
        self.constants: dict[str, np.ndarray] = {}
        self.index_values: set[str] = (
            set()
        )  # integer tensors of at most one dimension (shape values)
        self.completed = False
        self.computes_shapes = any(node.op_type in ("Shape", "Size") for node in model.graph.node)

    def get(self, tensor: str) -> list[int] | None:
        """The shape of ``tensor`` (unknown dims 0), None if unknown; raises
        ``onnx.shape_inference.InferenceError`` when ONNX shape inference fails."""
        shape = self.table.get(tensor)
        if not is_static(shape) and not self.completed:
            self.complete()
            shape = self.table.get(tensor)
        return shape

    def complete(self) -> None:
        """Run shape inference with folding now (``constants`` then holds the folded values)."""
        if not self.completed:
            self.completed = True
            self.constants, shapes, self.index_values = fold_shapes(self.model)
            self.table = _merged(self.table, shapes)

    def is_shape_arithmetic(self, node: NodeProto) -> bool:
        """Does ``node`` compute shape values, not tensors (index arithmetic such as a channel count
        divided by 2)? True when its outputs are constants computed from constants and static shapes,
        or integer values of at most one dimension in a model that computes shapes (a Shape or Size
        node; its shape computations are folded first)."""
        if not self.computes_shapes or node.op_type == "Constant" or not node.output:
            return False
        self.complete()
        return all(out in self.constants or out in self.index_values for out in node.output)

    def why_unknown(self) -> str:
        """Why a shape stays unknown after completion, and what to do about it."""
        dynamic = dynamic_inputs(self.model)
        if dynamic:
            return (
                f"the model input {', '.join(dynamic)} has dynamic dimensions; export the model with a "
                "fixed input shape"
            )
        return (
            "the input shapes are static, but ONNX shape inference cannot derive it, even with the "
            "constant shape computations folded; store the tensor's shape in the model's value_info"
        )


def fold_shapes(model: ModelProto) -> tuple[dict[str, np.ndarray], dict[str, list[int]], set[str]]:
    """(small constants computed from constants and static shapes, tensor name -> inferred shape,
    the integer tensors of rank 0 or 1) of ``model``; raises ``onnx.shape_inference.InferenceError``
    when shape inference fails."""
    work = ModelProto()
    work.CopyFrom(model)
    _forget_unknown_shapes(work)
    opsets = {entry.domain or "": entry.version for entry in model.opset_import}
    values = _initializer_values(work)
    while True:
        work = shape_inference.infer_shapes(work)
        shapes = shape_table(work)
        if not _fold_round(work, shapes, values, opsets):
            return values, shapes, _index_values(work)


def _fold_round(
    work: ModelProto, shapes: dict, values: dict[str, np.ndarray], opsets: dict
) -> bool:
    """Folds every node that can be folded now into Constant nodes; did anything change?"""
    changed = False
    partial: dict[
        str, list[int]
    ] = {}  # Shape outputs with unknown (0) entries, e.g. a dynamic batch
    for index, node in enumerate(list(work.graph.node)):
        if (
            node.op_type == "Shape"
            and not is_static(shapes.get(node.input[0]))
            and node.input[0] in shapes
        ):
            partial[node.output[0]] = _shape_slice(node, shapes[node.input[0]])
            continue
        if node.op_type == "Gather" and node.input[0] in partial and node.input[1] in values:
            picked = np.take(
                np.array(partial[node.input[0]], dtype=np.int64), values[node.input[1]]
            )
            if not (picked > 0).all():
                continue
            values[node.output[0]] = picked
            work.graph.node[index].CopyFrom(_constant(node, node.output[0], picked))
            changed = True
            continue
        if node.op_type not in SHAPE_OPERATORS or node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type == "Constant" and all(out in values for out in node.output):
            continue
        outputs = _evaluate(node, shapes, values, opsets)
        if outputs is None:
            continue
        values.update(outputs)
        if node.op_type != "Constant":
            name, value = next(iter(outputs.items()))  # every folded operator has one output
            work.graph.node[index].CopyFrom(_constant(node, name, value))
            changed = True
    return changed


def _constant(node: NodeProto, output: str, value: np.ndarray) -> NodeProto:
    """A Constant node standing for ``node``, which has been folded to ``value``."""
    return helper.make_node(
        "Constant", [], [output], name=node.name, value=numpy_helper.from_array(value, output)
    )


def _shape_slice(node: NodeProto, shape: list[int]) -> list[int]:
    """What a Shape node returns for an input of ``shape`` (its ``start`` / ``end`` attributes)."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    rank = len(shape)
    start, end = (
        max(0, min(rank, i + rank if i < 0 else i))
        for i in (attrs.get("start", 0), attrs.get("end", rank))
    )
    return list(shape[start:end])


def _evaluate(
    node: NodeProto, shapes: dict, values: dict, opsets: dict
) -> dict[str, np.ndarray] | None:
    """The outputs of ``node`` if its inputs are known constants and the outputs are small."""
    if node.op_type == "Shape":
        shape = shapes.get(node.input[0])
        if not is_static(shape):
            return None
        return {node.output[0]: np.array(_shape_slice(node, shape), dtype=np.int64)}
    inputs = [name for name in node.input if name]
    if not all(name in values for name in inputs):
        return None
    try:
        results = ReferenceEvaluator(node, opsets=opsets).run(
            None, {name: values[name] for name in inputs}
        )
    except Exception:  # noqa: BLE001 - an operator the evaluator cannot run is simply not folded
        return None
    if any(np.asarray(r).size > MAX_FOLDED_ELEMENTS for r in results):
        return None
    return {name: np.asarray(result) for name, result in zip(node.output, results)}


def _index_values(model: ModelProto) -> set[str]:
    """The tensors whose inferred type is an integer of rank 0 or 1: shape values, not data."""
    integer_types = (TensorProto.INT64, TensorProto.INT32)
    found = set()
    for info in itertools.chain(model.graph.input, model.graph.output, model.graph.value_info):
        tensor_type = info.type.tensor_type
        if (
            tensor_type.elem_type in integer_types
            and tensor_type.HasField("shape")
            and len(tensor_type.shape.dim) <= 1
        ):
            found.add(info.name)
    return found


def _initializer_values(model: ModelProto) -> dict[str, np.ndarray]:
    """Small initializers whose data is stored in the model (weights kept outside are skipped)."""
    values = {}
    for init in model.graph.initializer:
        external = init.data_location == TensorProto.EXTERNAL
        if not external and math.prod(init.dims) <= MAX_FOLDED_ELEMENTS:
            values[init.name] = numpy_helper.to_array(init)
    return values


def _forget_unknown_shapes(model: ModelProto) -> None:
    """Drops value_info entries with unknown dims, so inference can fill them in afresh."""
    kept = [info for info in model.graph.value_info if is_static(_shape_of(info))]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)


def _shape_of(info) -> list[int] | None:
    """The shape of one ValueInfoProto as ``shape_table`` reads it, None if it has none."""
    tensor_type = info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    return [d.dim_value for d in tensor_type.shape.dim]


def _merged(original: dict[str, list[int]], inferred: dict[str, list[int]]) -> dict[str, list[int]]:
    """The original shapes, a static inferred shape replacing a missing or unknown one."""
    merged = dict(original)
    for name, shape in inferred.items():
        if name not in merged or (not is_static(merged[name]) and is_static(shape)):
            merged[name] = shape
    return merged
