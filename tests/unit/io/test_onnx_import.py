"""ONNX import (docs/reference/workload.md#onnx-models) against the reference oracle, plus our extensions and errors.

tests/data/onnx_oracle.json is produced by tools/make_onnx_oracle.py with the reference ZigZag.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from math import prod
from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from support import REFERENCE, REPO
from zigzag.errors import InputError
from zigzag.io.onnx_import import dependency_edges, read_onnx, without_dummies
from zigzag.io.workload_export import layers_to_yaml
from zigzag.mapping.entry import select_entry

ROOT = REPO
ORACLE = json.loads((ROOT / "tests" / "data" / "onnx_oracle.json").read_text())["models"]
OURS = ROOT / "inputs" / "workload"
MODELS = ("resnet18", "alexnet", "mobilenetv2")


def shared_model(name: str) -> Path:
    return REFERENCE / "workload" / f"{name}.onnx"


def expected_node(record: dict) -> dict:
    """What read_onnx must return for one oracle node."""
    if record["kind"] == "dummy":
        return {key: record[key] for key in ("kind", "id", "name", "type", "operand_source")}
    absent = {"pr_loop_dims": None, "pr_loop_sizes": None, "padding": None}
    return {"kind": "layer"} | absent | record["layer_data"]


def assert_matches_oracle(nodes: list[dict], model: str) -> None:
    records = ORACLE[model]["nodes"]
    assert len(nodes) == len(records)
    for node, record in zip(nodes, records):
        assert node == expected_node(record), record["name"]
        if node["kind"] == "layer":  # the own-id convention gives the reference's operand roles
            sources = node["operand_source"].items()
            assert [op for op, src in sources if src == node["id"]] == record["constant_operands"]
            assert {op: src for op, src in sources if src != node["id"]} == record[
                "input_operand_source"
            ]


def sorted_edges(edges) -> list[list[int]]:
    return sorted(list(e) for e in edges)


# --- (a) the shared models parse exactly like the reference -------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_shared_models_match_reference(model):
    assert_matches_oracle(read_onnx(shared_model(model)), model)


@pytest.mark.parametrize("model", MODELS)
def test_edges_match_reference(model):
    nodes = read_onnx(shared_model(model))
    edges = dependency_edges(nodes)
    assert sorted_edges(edges) == ORACLE[model]["edges"]
    layers, layer_edges = without_dummies(nodes, edges)
    assert sorted_edges(layer_edges) == ORACLE[model]["edges_without_dummies"]
    assert [n["id"] for n in layers] == [
        r["id"] for r in ORACLE[model]["nodes"] if r["kind"] == "layer"
    ]


@pytest.mark.parametrize("model", MODELS)
def test_edge_order_gives_reference_processing_order(model):
    """Edges come in the reference's insertion order, so networkx visits layers in the same order."""
    nodes = read_onnx(shared_model(model))
    graph = nx.DiGraph()
    graph.add_nodes_from(n["id"] for n in nodes)
    graph.add_edges_from(dependency_edges(nodes))
    assert list(nx.topological_sort(graph)) == ORACLE[model]["topological_order"]


COUNTS = {  # docs/reference/workload.md#onnx-models
    "resnet18": (
        49,
        56,
        {"Conv": 20, "Gemm": 1},
        {"relu": 17, "add": 8, "maxpool": 1, "globalaveragepool": 1, "flatten": 1},
        38,
    ),
    "alexnet": (
        24,
        23,
        {"Conv": 5, "Gemm": 3},
        {"relu": 7, "maxpool": 3, "lrn": 2, "dropout": 2, "reshape": 1, "softmax": 1},
        7,
    ),
    "mobilenetv2": (
        170,
        144,
        {"Conv": 52, "Gemm": 1},
        {"constant": 70, "clip": 35, "add": 10, "globalaveragepool": 1, "flatten": 1},
        68,
    ),
}


@pytest.mark.parametrize("model", MODELS)
def test_counts_table(model):
    n_nodes, n_edges, layer_types, dummy_types, n_layer_edges = COUNTS[model]
    nodes = read_onnx(shared_model(model))
    edges = dependency_edges(nodes)
    assert len(nodes) == n_nodes and len(edges) == n_edges
    assert Counter(n["operator_type"] for n in nodes if n["kind"] == "layer") == layer_types
    assert Counter(n["type"] for n in nodes if n["kind"] == "dummy") == dummy_types
    assert len(without_dummies(nodes, edges)[1]) == n_layer_edges


def test_unnamed_nodes_are_named_by_position():
    """alexnet.onnx already stores the names Op<id>; with the names removed the result is the same."""
    proto = onnx.load(str(shared_model("alexnet")), load_external_data=False)
    for node in proto.graph.node:
        node.name = ""
    assert_matches_oracle(read_onnx(proto), "alexnet")
    assert all(node.name == "" for node in proto.graph.node)  # the caller's model is left alone


TPU_LIKE = [
    SimpleNamespace(name=e["name"])
    for e in yaml.safe_load((REFERENCE / "mapping" / "tpu_like.yaml").read_text())
]


@pytest.mark.parametrize("model", list(ORACLE))
def test_mapping_entry_choice_matches_reference(model):
    for record in ORACLE[model]["nodes"]:
        if record["kind"] == "layer":
            assert (
                select_entry(TPU_LIKE, record["name"], record["type"]).name
                == record["mapping_entry"]
            )


@pytest.mark.parametrize(
    ("name", "operator_type", "chosen"),
    [
        ("example_name_of_layer0", "Conv", "example_name_of_layer0"),  # by name first
        ("/maxpool/MaxPool", "Pooling", "Pooling"),  # then by operator type
        ("Add", "Conv", "Add"),  # a name equal to an entry wins over the type
        ("/fc/MatMul", "MatMul", "default"),  # else default
        ("/conv1/conv", "conv", "default"),  # case-sensitive
    ],
)
def test_mapping_entry_selection_rule(name, operator_type, chosen):
    assert select_entry(TPU_LIKE, name, operator_type).name == chosen


@pytest.mark.parametrize("model", ["resnet18", "mobilenetv2"])
def test_built_models_match_reference(model):
    assert_matches_oracle(read_onnx(OURS / f"{model}.onnx"), model)
    edges = dependency_edges(read_onnx(OURS / f"{model}.onnx"))
    assert sorted_edges(edges) == ORACLE[model]["edges"]


def load_builder():
    spec = importlib.util.spec_from_file_location(
        "build_example_models", ROOT / "tools" / "build_example_models.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_built_models_are_up_to_date():
    builder = load_builder()
    for name, build in builder.MODELS.items():
        assert build().SerializeToString() == (OURS / f"{name}.onnx").read_bytes(), (
            f"rerun the builder ({name})"
        )


# --- (b) the transformer block -----------------------------------------------------------------

SEQ, D_MODEL, HEADS, FFN = 128, 256, 4, 1024
TRANSFORMER_MACS = {
    "/attn/q_proj/MatMul": SEQ * D_MODEL * D_MODEL,
    "/attn/k_proj/MatMul": SEQ * D_MODEL * D_MODEL,
    "/attn/v_proj/MatMul": SEQ * D_MODEL * D_MODEL,
    "/attn/qk/MatMul": HEADS * SEQ * SEQ * (D_MODEL // HEADS),
    "/attn/av/MatMul": HEADS * SEQ * SEQ * (D_MODEL // HEADS),
    "/attn/out_proj/MatMul": SEQ * D_MODEL * D_MODEL,
    "/ffn/fc1/MatMul": SEQ * D_MODEL * FFN,
    "/ffn/fc2/MatMul": SEQ * FFN * D_MODEL,
}
ELEMENTWISE_OPS = {
    "/attn/scale/Mul": HEADS * SEQ * SEQ,
    "/attn/residual/Add": SEQ * D_MODEL,
    "/ffn/residual/Add": SEQ * D_MODEL,
}


def macs(nodes: list[dict]) -> dict[str, int]:
    return {n["name"]: prod(n["loop_sizes"]) for n in nodes if n["kind"] == "layer"}


def test_transformer_block_reference_mode():
    nodes = read_onnx(OURS / "transformer_block.onnx")
    assert_matches_oracle(nodes, "transformer_block")
    assert sorted_edges(dependency_edges(nodes)) == ORACLE["transformer_block"]["edges"]
    assert macs(nodes) == TRANSFORMER_MACS
    by_name = {n["name"]: n for n in nodes}
    qk = by_name["/attn/qk/MatMul"]
    assert qk["equation"] == "O[b][h][d][k]+=I[b][h][d][c]*W[b][h][c][k]"
    assert dict(zip(qk["loop_dims"], qk["loop_sizes"])) == {
        "C": 64,
        "D": SEQ,
        "K": SEQ,
        "B": 1,
        "H": HEADS,
    }
    assert qk["operand_source"] == {
        "I": by_name["/attn/q_proj/Transpose"]["id"],
        "W": by_name["/attn/k_proj/Transpose"]["id"],
    }
    assert by_name["/attn/q_proj/MatMul"]["equation"] == "O[b][d][k]+=I[b][d][c]*W[c][k]"
    dummies = Counter(n["type"] for n in nodes if n["kind"] == "dummy")
    assert dummies == {
        "reshape": 4,
        "transpose": 4,
        "mul": 1,
        "softmax": 1,
        "add": 2,
        "layernormalization": 2,
        "relu": 1,
    }


def test_transformer_block_all_operators():
    nodes = read_onnx(OURS / "transformer_block.onnx", evaluate_all_operators=True)
    assert macs(nodes) == TRANSFORMER_MACS | ELEMENTWISE_OPS
    by_name = {n["name"]: n for n in nodes}
    scale = by_name["/attn/scale/Mul"]
    assert scale["operator_type"] == "Mul"
    assert scale["equation"] == "O[b][g][oy][ox]=I[b][g][oy][ox]*W[]"  # scalar weight written last
    assert scale["operand_source"] == {"I": by_name["/attn/qk/MatMul"]["id"], "W": scale["id"]}
    residual = by_name["/ffn/residual/Add"]
    assert residual["equation"] == "O[b][d][g]=W[b][d][g]+I[b][d][g]"
    assert residual["operand_source"] == {
        "I": by_name["/ffn/fc2/MatMul"]["id"],
        "W": by_name["/norm1/LayerNormalization"]["id"],
    }
    assert {n["type"] for n in nodes if n["kind"] == "dummy"} == {
        "reshape",
        "transpose",
        "softmax",
        "layernormalization",
        "relu",
    }


def yaml_layers_by_id(path: Path) -> dict[int, dict]:
    return {layer["id"]: layer for layer in yaml.safe_load(path.read_text())}


def test_all_operators_resnet18_matches_hand_written_yaml():
    """Pooling and Add layers come out as resnet18.yaml writes them."""
    nodes = {n["name"]: n for n in read_onnx(shared_model("resnet18"), evaluate_all_operators=True)}
    hand = yaml_layers_by_id(REFERENCE / "workload" / "resnet18.yaml")
    for onnx_name, yaml_id in [
        ("/maxpool/MaxPool", 1),
        ("/avgpool/GlobalAveragePool", 29),
        ("/layer1/layer1.0/Add", 4),
    ]:
        ours, theirs = nodes[onnx_name], hand[yaml_id]
        for field in ("operator_type", "equation", "dimension_relations", "operand_precision"):
            assert ours[field] == theirs.get(field, []), (onnx_name, field)
        assert dict(zip(ours["loop_dims"], ours["loop_sizes"])) == dict(
            zip(theirs["loop_dims"], theirs["loop_sizes"])
        )
    maxpool = nodes["/maxpool/MaxPool"]
    assert (maxpool["padding"], maxpool["pr_loop_sizes"]) == ([[1, 1], [1, 1]], [112, 112])
    assert maxpool["operand_source"] == {"I": nodes["/relu/Relu"]["id"], "W": maxpool["id"]}
    add = nodes["/layer1/layer1.0/Add"]  # Add(conv2, identity): I = main path, W = residual
    assert add["operand_source"] == {
        "I": nodes["/layer1/layer1.0/conv2/Conv"]["id"],
        "W": nodes["/maxpool/MaxPool"]["id"],
    }


def make_model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def single_node_model(node, inputs: dict, outputs: dict):
    return make_model(
        [node],
        [tensor(n, s) for n, s in inputs.items()],
        [tensor(n, s) for n, s in outputs.items()],
    )


def test_broadcast_operands_span_fewer_dims():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Add", ["bias", "r"], ["y"], name="add"),
    ]
    model = make_model(
        nodes, [tensor("x", [2, 8, 16]), tensor("bias", [16])], [tensor("y", [2, 8, 16])]
    )
    _, layer = read_onnx(model, evaluate_all_operators=True)
    assert layer["equation"] == "O[b][d][g]=W[g]+I[b][d][g]"  # the constant input plays W
    assert layer["operand_source"] == {"I": 0, "W": 1}
    assert dict(zip(layer["loop_dims"], layer["loop_sizes"])) == {"B": 2, "D": 8, "G": 16}


def test_non_square_convolution_pairing():
    """Reference pairing: ONNX index 0 (height) with x; corrected pairing on request."""
    node = helper.make_node(
        "Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 5], strides=[1, 2], pads=[1, 2, 1, 2]
    )
    model = single_node_model(node, {"x": [1, 3, 16, 32], "w": [8, 3, 3, 5]}, {"y": [1, 8, 16, 16]})
    [ref] = read_onnx(model)
    [fixed] = read_onnx(model, reference_hw_pairing=False)
    assert ref["loop_sizes"][-2:] == [3, 5] and fixed["loop_sizes"][-2:] == [5, 3]
    assert ref["dimension_relations"] == ["ix=1*ox+1*fx", "iy=2*oy+1*fy"]
    assert fixed["dimension_relations"] == ["ix=2*ox+1*fx", "iy=1*oy+1*fy"]
    assert ref["padding"] == [[1, 1], [2, 2]] and fixed["padding"] == [[2, 2], [1, 1]]
    assert ref["pr_loop_sizes"] == fixed["pr_loop_sizes"] == [32, 16]


def test_symbolic_batch_and_custom_precisions():
    node = helper.make_node(
        "Conv", ["x", "w"], ["y"], kernel_shape=[1, 1], act_size=4, weight_size=2
    )
    model = single_node_model(node, {"x": ["N", 3, 8, 8], "w": [4, 3, 1, 1]}, {"y": ["N", 4, 8, 8]})
    [layer] = read_onnx(model)
    assert layer["name"] == "Op0" and layer["loop_sizes"][0] == 1
    assert layer["operand_precision"] == {"W": 2, "I": 4, "O_final": 4, "O": 8}


# --- (c) errors --------------------------------------------------------------------------------


def conv_model(**attrs):
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    return single_node_model(node, {"x": [1, 3, 8, 8], "w": [4, 3, 3, 3]}, {"y": [1, 4, 8, 8]})


def test_error_not_an_onnx_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_text("name: not a model\n")
    with pytest.raises(
        InputError,
        match=rf"^{re.escape(str(bad))}: not a valid ONNX model \(.*\); give an \.onnx model file$",
    ):
        read_onnx(bad)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="not a valid ONNX model .it contains no graph"):
        read_onnx(empty)
    with pytest.raises(InputError, match="missing.onnx: does not exist"):
        read_onnx(tmp_path / "missing.onnx")


def test_error_shape_cannot_be_inferred():
    custom = helper.make_node("Mystery", ["x"], ["t"], name="m", domain="example.custom")
    conv = helper.make_node("Conv", ["t", "w"], ["y"], name="conv", kernel_shape=[3, 3])
    model = make_model(
        [custom, conv],
        [tensor("x", [1, 3, 8, 8]), tensor("w", [4, 3, 3, 3])],
        [tensor("y", None)],
    )
    model.opset_import.append(helper.make_opsetid("example.custom", 1))
    with pytest.raises(
        InputError,
        match=r"^model\.onnx: node 1 'conv' \(Conv\): the shape of tensor 't' is unknown: the input shapes are "
        r"static, but ONNX shape inference cannot derive it, even with the constant shape computations folded; "
        r"store the tensor's shape in the model's value_info$",
    ):
        read_onnx(model, file="model.onnx")


def test_error_missing_kernel_shape():
    with pytest.raises(InputError, match=r"node 0 'conv' \(Conv\): has no kernel_shape attribute"):
        read_onnx(conv_model())


def test_1d_convolution_reads_as_height_1():
    """A depthwise 1-D convolution (Mamba's, over 16 tokens, 4 taps, padded 3 each side) as 2-D of height 1."""
    node = helper.make_node(
        "Conv", ["x", "w"], ["y"], name="c1", kernel_shape=[4], pads=[3, 3], group=8
    )
    model = single_node_model(node, {"x": [1, 8, 16], "w": [8, 1, 4]}, {"y": [1, 8, 19]})
    (layer,) = [n for n in read_onnx(model) if n["kind"] == "layer"]
    sizes = dict(zip(layer["loop_dims"], layer["loop_sizes"]))
    assert sizes == {"B": 1, "K": 1, "G": 8, "OX": 19, "OY": 1, "C": 1, "FX": 4, "FY": 1}
    assert layer["padding"] == [[3, 3], [0, 0]] and layer["pr_loop_sizes"] == [16, 1]


def test_error_3d_convolution():
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="c3", kernel_shape=[3, 3, 3])
    model = single_node_model(
        node, {"x": [1, 3, 8, 8, 8], "w": [4, 3, 3, 3, 3]}, {"y": [1, 4, 6, 6, 6]}
    )
    with pytest.raises(
        InputError,
        match=r"'c3' \(Conv\): only 1-D and 2-D convolutions on NCW / NCHW tensors are supported "
        r"\(kernel_shape \[3, 3, 3\]",
    ):
        read_onnx(model)


def test_error_rank5_matmul():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    model = single_node_model(node, {"a": [1, 2, 3, 4, 5], "b": [5, 6]}, {"y": [1, 2, 3, 4, 6]})
    with pytest.raises(
        InputError, match=r"'mm' \(MatMul\): rank-5 input \[1, 2, 3, 4, 5\]: only ranks 2, 3"
    ):
        read_onnx(model)


def test_error_more_than_two_producers():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Identity", ["w0"], ["w"], name="wid"),
        helper.make_node("Identity", ["b0"], ["b"], name="bid"),
        helper.make_node("Conv", ["r", "w", "b"], ["y"], name="conv", kernel_shape=[1, 1]),
    ]
    model = make_model(
        nodes,
        [tensor("x", [1, 3, 8, 8]), tensor("w0", [4, 3, 1, 1]), tensor("b0", [4])],
        [tensor("y", [1, 4, 8, 8])],
    )
    with pytest.raises(
        InputError,
        match=r"node 3 'conv' \(Conv\): 3 of its inputs are produced by other nodes \(ids \[0, 1, 2\]\); at most 2",
    ):
        read_onnx(model)


def test_error_non_integer_precision_attribute():
    with pytest.raises(
        InputError, match=r"'conv' \(Conv\): custom attribute 'weight_size' must be an integer"
    ):
        read_onnx(conv_model(kernel_shape=[3, 3], pads=[1, 1, 1, 1], weight_size=4.0))


def test_error_gemm_rank_mismatch():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    model = single_node_model(node, {"a": [8, 16], "b": [2, 16, 4]}, {"y": [2, 8, 4]})
    with pytest.raises(
        InputError, match=r"'mm' \(MatMul\): input rank 2 \(\[8, 16\]\) differs from output rank 3"
    ):
        read_onnx(model)


# --- (d) shape inference fallback --------------------------------------------------------------


@pytest.mark.parametrize("model", ["resnet18", "mobilenetv2"])
def test_model_without_value_info_is_inferred(model):
    proto = onnx.load(str(shared_model(model)), load_external_data=False)
    del proto.graph.value_info[:]
    assert_matches_oracle(read_onnx(proto), model)
    assert len(proto.graph.value_info) == 0  # the caller's model is left alone


def test_transformer_without_value_info_is_inferred():
    proto = onnx.load(str(OURS / "transformer_block.onnx"))
    expected = read_onnx(proto, evaluate_all_operators=True)
    del proto.graph.value_info[:]
    assert read_onnx(proto, evaluate_all_operators=True) == expected


# --- (e) YAML export ---------------------------------------------------------------------------

EQUATION = re.compile(
    r"^O(\[\w+\])+\s*\+?\s*=\s*\w(\[\w+\])+\s*[*+]\s*\w(\[(?:\w+)?\])+\s*$"
)  # docs/reference/workload.md
YAML_TYPES = {
    "Max",
    "Conv",
    "Pooling",
    "Add",
    "Conv_downsample",
    "Gemm",
    "Pool",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
}


def exported(nodes: list[dict]) -> list[dict]:
    return yaml.safe_load(layers_to_yaml(nodes))


def test_export_round_trip_resnet18():
    nodes = read_onnx(shared_model("resnet18"))
    loaded = exported(nodes)
    layers = [{k: v for k, v in n.items() if k != "kind"} for n in nodes if n["kind"] == "layer"]
    assert [{k: v for k, v in layer.items() if k != "operand_source"} for layer in loaded] == [
        {k: v for k, v in layer.items() if k != "operand_source"} for layer in layers
    ]
    sources = {layer["name"]: layer["operand_source"] for layer in loaded}
    assert sources["/conv1/Conv"] == {"W": 0, "I": 0}
    assert sources["/layer1/layer1.0/conv1/Conv"] == {"W": 3, "I": 0}  # through Relu and MaxPool
    assert sources["/layer1/layer1.1/conv1/Conv"] == {
        "W": 8,
        "I": 5,
    }  # through Relu and Add (its I first)
    assert sources["/fc/Gemm"] == {"W": 48, "I": 43}  # through Flatten, pool, Relu, Add


def test_export_preserves_layer_dependencies():
    """Every layer-to-layer dependency of the exported file is one of the reference's bridged edges."""
    nodes = read_onnx(shared_model("mobilenetv2"))
    bridged = set(map(tuple, ORACLE["mobilenetv2"]["edges_without_dummies"]))
    for layer in exported(nodes):
        for src in layer["operand_source"].values():
            assert src == layer["id"] or (src, layer["id"]) in bridged


def test_export_transformer_all_operators_is_valid_yaml_workload():
    nodes = read_onnx(OURS / "transformer_block.onnx", evaluate_all_operators=True)
    loaded = exported(nodes)
    by_name = {layer["name"]: layer for layer in loaded}
    assert all(EQUATION.match(layer["equation"]) for layer in loaded)
    assert {layer["operator_type"] for layer in loaded} == {"Gemm", "Add"}
    assert by_name["/attn/qk/MatMul"]["operand_source"] == {"W": 3, "I": 0}  # K and Q projections
    assert by_name["/attn/residual/Add"]["operand_source"] == {
        "I": 15,
        "W": 16,
    }  # x is a graph input
    assert by_name["/ffn/fc1/MatMul"]["operand_source"] == {
        "W": 18,
        "I": 16,
    }  # through LayerNormalization
    original = {n["name"]: n for n in nodes}
    for layer in loaded:
        assert {k: v for k, v in layer.items() if k not in ("operand_source", "operator_type")} == {
            k: v
            for k, v in original[layer["name"]].items()
            if k not in ("operand_source", "operator_type", "kind")
        }


def test_export_maps_operator_types_the_validator_rejects():
    nodes = [
        helper.make_node(
            "QLinearConv",
            ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
            ["y"],
            name="qconv",
            kernel_shape=[1, 1],
        ),
        helper.make_node("MaxPool", ["y"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    ]
    scalars = [helper.make_tensor(n, TensorProto.FLOAT, [], [1.0]) for n in ("xs", "ws", "ys")]
    zeros = [helper.make_tensor(n, TensorProto.UINT8, [], [0]) for n in ("xz", "wz", "yz")]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 8, 8]),
        helper.make_tensor_value_info("w", TensorProto.UINT8, [4, 3, 1, 1]),
    ]
    model = make_model(
        nodes,
        inputs,
        [helper.make_tensor_value_info("p", TensorProto.UINT8, [1, 4, 4, 4])],
        initializers=scalars + zeros,
    )
    parsed = read_onnx(model, evaluate_all_operators=True)
    assert [n["operator_type"] for n in parsed] == ["QLinearConv", "Pooling"]
    loaded = exported(parsed)
    assert [layer["operator_type"] for layer in loaded] == ["Conv", "Pooling"]
    assert {layer["operator_type"] for layer in loaded} <= YAML_TYPES
    assert [layer["name"] for layer in loaded] == ["qconv", "pool"]
