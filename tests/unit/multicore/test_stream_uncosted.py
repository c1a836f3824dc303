"""On an accelerator with vector units every working operator of the data path gets a core and a
cost, or the import stops with a one-line error naming the file and the node: a reduction over
several axes, a TopK not over the last axis, a class no vector unit runs."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from zigzag.errors import InputError
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO

MAPPING = REPO / "inputs/stream/mapping/llm_vector_quad_core.yaml"
VECTOR = {5: frozenset({"add", "mul", "div", "copy", "reduce_mean", "reduce_max", "sqrt", "pow"})}


def _model(tmp_path: Path, tail: list, out_shape: list[int], extra=(), opset: int = 17) -> Path:
    """x -> MatMul (a layer) -> ``tail`` nodes (reading 'h') -> y."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    w = helper.make_tensor("w", TensorProto.FLOAT, [16, 16], [0.0] * 256)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="/proj"), *tail]
    graph = helper.make_graph(nodes, "g", [x], [y], [w, *extra])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def _read(path: Path, classes=VECTOR):
    return read_stream_workload(
        path, load_stream_mapping(MAPPING), check_entries=False, vector_classes=classes
    )


def test_a_reduction_over_several_axes_is_a_one_line_error(tmp_path):
    tail = [helper.make_node("ReduceMean", ["h"], ["y"], name="/both", axes=[1, 2], keepdims=1)]
    path = _model(tmp_path, tail, [1, 1, 1], opset=13)
    with pytest.raises(InputError) as caught:
        _read(path)
    text = str(caught.value)
    assert (
        str(path) in text
        and "'/both' (ReduceMean)" in text
        and "no core and no cost" in text
        and "\n" not in text
    )


def test_a_top_k_not_over_the_last_axis_is_a_one_line_error(tmp_path):
    k = helper.make_tensor("k", TensorProto.INT64, [1], [2])
    tail = [helper.make_node("TopK", ["h", "k"], ["y", "i"], name="/route", axis=1)]
    with pytest.raises(InputError) as caught:
        _read(_model(tmp_path, tail, [1, 2, 16], extra=[k]))
    assert "'/route' (TopK)" in str(caught.value) and "\n" not in str(caught.value)


def test_a_class_no_vector_unit_runs_is_a_one_line_error(tmp_path):
    tail = [helper.make_node("Tanh", ["h"], ["y"], name="/squash")]
    with pytest.raises(InputError) as caught:
        _read(_model(tmp_path, tail, [1, 8, 16]))
    assert "'/squash' (Tanh)" in str(caught.value) and "'tanh'" in str(caught.value)


def test_the_same_operators_get_a_core_when_they_can(tmp_path):
    tail = [
        helper.make_node("ReduceMean", ["h"], ["m"], name="/mean", axes=[2], keepdims=1),
        helper.make_node("Sqrt", ["m"], ["s"], name="/sqrt"),
        helper.make_node("Div", ["h", "s"], ["y"], name="/div"),
    ]
    workload = _read(_model(tmp_path, tail, [1, 8, 16], opset=13))
    ops = {layer.name: layer.layer.vector_op for layer in workload.layers}
    assert ops["/mean"] == "reduce_mean" and ops["/sqrt"] == "sqrt" and ops["/div"] == "div"
