"""Reading an ONNX file: the rules the single-core and the multi-core (Stream) imports share.

Loading a model (one-line errors), its table of known tensor shapes and the custom precision
attributes of a node (``weight_size``, ``act_size``, ``output_size``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Protocol

import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto, ModelProto, NodeProto

from zigzag.errors import InputError, missing_file


class ErrorSource(Protocol):
    """Where a node's problems are reported: ``error(node, message)`` builds the error."""

    def error(self, node, message: str) -> InputError: ...


def load_model(source: str | Path | ModelProto, file: str | None) -> ModelProto:
    """The ONNX model at ``source`` (or ``source`` itself), without external weight data."""
    if isinstance(source, ModelProto):
        return source
    if not Path(source).exists():
        raise missing_file(file or source)
    try:
        model = onnx.load(str(source), load_external_data=False)
    except (OSError, DecodeError) as exc:
        raise InputError(
            file, None, f"not a valid ONNX model ({exc}); give an .onnx model file"
        ) from None
    if not model.HasField("graph"):
        raise InputError(
            file, None, "not a valid ONNX model (it contains no graph); give an .onnx model file"
        )
    return model


def shape_table(model: ModelProto) -> dict[str, list[int]]:
    """Tensor name -> shape, first hit in inputs, outputs, value_info, initializers."""
    table: dict[str, list[int]] = {}
    graph = model.graph
    for info in itertools.chain(graph.input, graph.output, graph.value_info):
        tensor_type = info.type.tensor_type
        if tensor_type.HasField("shape"):
            table.setdefault(info.name, [d.dim_value for d in tensor_type.shape.dim])
    for init in graph.initializer:
        table.setdefault(init.name, list(init.dims))
    return table


def precision_bits(errors: ErrorSource, node) -> tuple[int, int, int]:
    """(weight, activation, partial-sum) bits of ``node`` (its ``proto`` a NodeProto) from the
    custom INT attributes, defaults 8, 8 and twice the activation."""
    proto: NodeProto = node.proto

    def read(name: str, default: int) -> int:
        attr = next((a for a in proto.attribute if a.name == name), None)
        if attr is None:
            return default
        if attr.type != AttributeProto.INT:
            raise errors.error(node, f"custom attribute '{name}' must be an integer (bits)")
        return attr.i

    act = read("act_size", 8)
    return read("weight_size", 8), act, read("output_size", 2 * act)
