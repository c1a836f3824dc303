"""ONNX models whose shapes are written as shape arithmetic (Shape -> Gather -> Div -> Concat ->
Reshape / Slice, as torchvision exports ShuffleNet's channel split and shuffle): their constant
shape computations are folded, so they load; truly dynamic models get an accurate error.

tests/data/workloads/shufflenet_v2_x0_5.onnx: see tests/data/workloads/README.md.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zigzag.errors import InputError
from zigzag.io.onnx_import import read_onnx
from zigzag.io.onnx_shapes import ShapeLookup, is_static
from zigzag.multicore.mapping import parse_stream_mapping
from zigzag.multicore.workload_onnx import read_stream_workload
from support import TESTS

DATA = TESTS / "data" / "workloads"
SHUFFLENET = DATA / "shufflenet_v2_x0_5.onnx"


def const(name: str, value) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], name=name, value=numpy_helper.from_array(np.array(value, np.int64))
    )


def shuffle_block(input_shape: list) -> onnx.ModelProto:
    """Conv -> channel split (Slice bounds from Shape/Gather/Div/Mul) -> Conv on one half -> Concat ->
    channel shuffle (Reshape to a shape built by Shape/Gather/Unsqueeze/Concat) -> Conv."""
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="conv0", kernel_shape=[1, 1]),
        helper.make_node("Shape", ["a"], ["a_shape"], name="shape"),
        const("one", [1]),
        const("two", [2]),
        const("zero", [0]),
        helper.make_node("Gather", ["a_shape", "one"], ["channels"], name="gather", axis=0),
        helper.make_node("Div", ["channels", "two"], ["half"], name="div"),
        helper.make_node("Mul", ["half", "one"], ["split_at"], name="mul"),
        helper.make_node("Mul", ["half", "two"], ["split_end"], name="mul_1"),
        helper.make_node("Slice", ["a", "zero", "split_at", "one"], ["left"], name="slice"),
        helper.make_node("Slice", ["a", "split_at", "split_end", "one"], ["right"], name="slice_1"),
        helper.make_node(
            "Conv",
            ["right", "w1"],
            ["right_out"],
            name="conv1",
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("Concat", ["left", "right_out"], ["joined"], name="concat", axis=1),
        helper.make_node("Shape", ["joined"], ["j_shape"], name="shape_1"),
        const("i0", 0),
        const("i2", 2),
        const("i3", 3),
        const("axes0", [0]),
        const("groups", [2]),
        const("per_group", [8]),
        const("channels_out", [16]),
    ]
    for dim, index in (("b", "i0"), ("h", "i2"), ("w", "i3")):
        nodes += [
            helper.make_node("Gather", ["j_shape", index], [dim], name=f"gather_{dim}", axis=0),
            helper.make_node("Unsqueeze", [dim, "axes0"], [f"{dim}1"], name=f"unsqueeze_{dim}"),
        ]
    nodes += [
        helper.make_node(
            "Concat", ["b1", "groups", "per_group", "h1", "w1"], ["shape5"], name="concat_1", axis=0
        ),
        helper.make_node("Reshape", ["joined", "shape5"], ["grouped"], name="reshape"),
        helper.make_node(
            "Transpose", ["grouped"], ["shuffled"], name="transpose", perm=[0, 2, 1, 3, 4]
        ),
        helper.make_node(
            "Concat", ["b1", "channels_out", "h1", "w1"], ["shape4"], name="concat_2", axis=0
        ),
        helper.make_node("Reshape", ["shuffled", "shape4"], ["flat"], name="reshape_1"),
        helper.make_node("Conv", ["flat", "w2"], ["y"], name="conv2", kernel_shape=[1, 1]),
    ]
    weights = [
        numpy_helper.from_array(np.zeros(shape, np.float32), name)
        for name, shape in (("w0", [16, 16, 1, 1]), ("w1", [8, 8, 3, 3]), ("w2", [4, 16, 1, 1]))
    ]
    graph = helper.make_graph(
        nodes,
        "shuffle_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def loops(layer: dict) -> dict[str, int]:
    return dict(zip(layer["loop_dims"], layer["loop_sizes"]))


def test_shape_arithmetic_is_folded():
    layers = [n for n in read_onnx(shuffle_block([1, 16, 8, 8])) if n["kind"] == "layer"]
    assert [layer["name"] for layer in layers] == ["conv0", "conv1", "conv2"]
    assert loops(layers[1]) == {"B": 1, "K": 8, "G": 1, "OX": 8, "OY": 8, "C": 8, "FX": 3, "FY": 3}
    assert loops(layers[2]) == {"B": 1, "K": 4, "G": 1, "OX": 8, "OY": 8, "C": 16, "FX": 1, "FY": 1}


def test_dynamic_batch_alone_still_folds_the_channel_split():
    """Only the batch is dynamic: the channel count is still known, so the split is folded (the
    shuffle's Reshape takes the batch, so its output stays unknown)."""
    shapes = ShapeLookup(shuffle_block(["N", 16, 8, 8]))
    assert shapes.get("right_out") == [0, 8, 8, 8]
    assert shapes.get("flat") is None or not is_static(shapes.get("flat"))


def test_truly_dynamic_model_names_the_dynamic_input():
    with pytest.raises(InputError) as caught:
        read_onnx(shuffle_block([1, 16, "height", "width"]), file="dyn.onnx")
    message = str(caught.value)
    assert message.startswith("dyn.onnx: node 0 'conv0' (Conv): ")
    assert (
        "the model input 'x' [1, 16, height, width] has dynamic dimensions; export the model with a "
        "fixed input shape" in message
    )
    assert "\n" not in message


def test_multi_core_import_folds_too():
    workload = read_stream_workload(
        shuffle_block([1, 16, 8, 8]), parse_stream_mapping([{"name": "default"}])
    )
    convs = [layer for layer in workload.layers if layer.op_type == "Conv"]
    assert [(c.sizes["C"], c.sizes["K"]) for c in convs] == [(16, 16), (8, 8), (16, 4)]


def test_torchvision_shufflenet_loads_with_consistent_shapes():
    """torchvision's export (shapes only): 57 layers, each Conv's shapes agreeing with its weights."""
    model = onnx.load(str(SHUFFLENET), load_external_data=False)
    weights = {init.name: list(init.dims) for init in model.graph.initializer}
    protos = {node.name: node for node in model.graph.node}
    layers = [n for n in read_onnx(model) if n["kind"] == "layer"]
    assert len(layers) == 57
    for layer in layers:
        proto, size = protos[layer["name"]], loops(layer)
        if proto.op_type != "Conv":
            continue
        kernel = weights[proto.input[1]]
        assert (size["K"] * size["G"], size["C"], size["FY"], size["FX"]) == tuple(kernel), layer[
            "name"
        ]
        stride = int(layer["dimension_relations"][0].split("=")[1].split("*")[0])
        (pad_lo, pad_hi), _ = layer["padding"]
        ix = layer["pr_loop_sizes"][0]
        assert size["OX"] == math.floor((ix + pad_lo + pad_hi - size["FX"]) / stride) + 1, layer[
            "name"
        ]


# --- evaluate_all_operators: tensor operators only, each under its own operator type ------------


def test_all_operators_leave_index_arithmetic_out():
    """The Mul nodes computing the split's bounds from the channel count are not layers."""
    nodes = read_onnx(shuffle_block([1, 16, 8, 8]), evaluate_all_operators=True)
    assert [n["name"] for n in nodes if n["kind"] == "layer"] == ["conv0", "conv1", "conv2"]
    assert {n["name"]: n["type"] for n in nodes if n["name"] in ("mul", "mul_1")} == {
        "mul": "mul",
        "mul_1": "mul",
    }


def test_all_operators_name_each_element_wise_layer_by_its_operator():
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    nodes = [
        helper.make_node("Mul", ["x", "scale"], ["scaled"], name="mul"),
        helper.make_node("Sub", ["scaled", "x"], ["diff"], name="sub"),
        helper.make_node("Add", ["diff", "x"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "elementwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4, 4])],
        [scale],
    )
    layers = read_onnx(helper.make_model(graph), evaluate_all_operators=True)
    assert [(n["name"], n["operator_type"]) for n in layers] == [
        ("mul", "Mul"),
        ("sub", "Sub"),
        ("add", "Add"),
    ]
    assert layers[0]["equation"] == "O[b][g][oy][ox]=I[b][g][oy][ox]*W[]"


def test_all_operators_help_says_what_the_option_adds():
    from zigzag.mapping_search.options import OPTION_BY_NAME

    text = OPTION_BY_NAME["evaluate_all_operators"].help
    assert "batched" not in text
    for operator in ("MaxPool", "AveragePool", "GlobalAveragePool", "Add", "Sub", "Mul"):
        assert operator in text


def test_all_operators_leave_index_arithmetic_on_a_dynamic_batch_out():
    """The batch is dynamic, so ``2 * batch`` cannot be folded; it is still index arithmetic."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul"),
        helper.make_node("Shape", ["y"], ["y_shape"], name="shape"),
        const("first", [0]),
        const("two", [2]),
        const("columns", [6]),
        helper.make_node("Gather", ["y_shape", "first"], ["batch"], name="gather", axis=0),
        helper.make_node("Mul", ["batch", "two"], ["rows"], name="mul"),
        helper.make_node("Concat", ["rows", "columns"], ["new_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["y", "new_shape"], ["z"], name="reshape"),
    ]
    graph = helper.make_graph(
        nodes,
        "dynamic_index",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((8, 4), np.float32), "w")],
    )
    layers = [
        n
        for n in read_onnx(helper.make_model(graph), evaluate_all_operators=True)
        if n["kind"] == "layer"
    ]
    assert [layer["name"] for layer in layers] == ["matmul"]
