"""An element-wise node whose inputs are all graph inputs (a Relu on the network's input) has no produced
input to stream through the cores. Late-2024 Stream's parser refuses it (its operand sources need one or
two producing nodes), and so does ours, in one line saying what to do; the same Relu after the first
layer is a layer (docs/models/multi-core.md#onnx-workloads)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zigzag.errors import InputError
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.workload_onnx import read_stream_workload


def _network(path, relu_first: bool):
    """x[1, 64] -> Relu -> Gemm (64 x 32 constant weights) -> y, or the Gemm first."""
    weights = numpy_helper.from_array(np.zeros((64, 32), dtype=np.float32), "w")
    width = 64 if relu_first else 32
    relu = helper.make_node(
        "Relu", ["x" if relu_first else "h"], ["h" if relu_first else "y"], name="relu"
    )
    gemm = helper.make_node(
        "Gemm", ["h" if relu_first else "x", "w"], ["y" if relu_first else "h"], name="fc"
    )
    graph = helper.make_graph(
        [relu, gemm] if relu_first else [gemm, relu],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])],
        [weights],
        value_info=[helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, width])],
    )
    onnx.save(helper.make_model(graph), path)
    return path


@pytest.fixture
def mapping(tmp_path):
    path = tmp_path / "mapping.yaml"
    path.write_text("- name: default\n  core_allocation: [0]\n")
    return load_stream_mapping(path)


def test_an_elementwise_node_on_the_graph_input_is_one_line_saying_what_to_do(tmp_path, mapping):
    network = _network(tmp_path / "relu_first.onnx", relu_first=True)
    with pytest.raises(InputError) as caught:
        read_stream_workload(network, mapping)
    message = str(caught.value)
    assert "\n" not in message
    assert "node 0 'relu' (Relu)" in message and "graph inputs" in message
    assert "remove the node or move it after the first layer" in message


def test_the_same_node_after_a_layer_is_a_layer(tmp_path, mapping):
    workload = read_stream_workload(
        _network(tmp_path / "relu_after.onnx", relu_first=False), mapping
    )
    relu = next(layer for layer in workload.layers if layer.name == "relu")
    fc = next(layer for layer in workload.layers if layer.name == "fc")
    assert relu.input_operand_source == {"I": fc.id} and relu.constant_operands == ("W",)
