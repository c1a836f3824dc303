"""Property-based fuzzing of the input loaders: random mutations of valid files end in a valid
result or in our one-line error (InputError, or MappingError once a search starts), never in
another exception.

Examples are bounded and derandomised, so the run is deterministic and takes well under a minute.
Fuzz harder locally with ZIGZAG_FUZZ_EXAMPLES=2000 (examples per test; default 120).
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import onnx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from support import DATA, reference_input
from support.fuzz import EXAMPLES, FUZZ, mutate
from zigzag.errors import InputError, MappingError
from zigzag.io.loaders import load_inputs, load_mapping, load_workload
from zigzag.io.onnx_import import read_onnx
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

SMALL = DATA / "workflow" / "small_convs.yaml"
TPU = reference_input("hardware", "tpu_like.yaml")
TPU_MAPPING = reference_input("mapping", "tpu_like.yaml")
SCRATCH = Path(tempfile.mkdtemp(prefix="zigzag-fuzz-"))


def write(name: str, doc) -> str:
    path = SCRATCH / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return str(path)


def assert_ours_or_valid(run) -> None:
    """``run()`` either succeeds or raises our one-line error."""
    try:
        run()
    except (InputError, MappingError) as exc:
        assert "\n" not in str(exc), str(exc)


def search_start(workload, accelerator, mapping) -> None:
    """Load the inputs, generate each layer's spatial mappings and search the first layer (few orderings)."""
    layers, hardware = load_inputs(workload, accelerator, mapping)
    for layer in layers.layers:
        generate_spatial_mappings(layer, hardware, nb_mappings=1)
    search_layer(
        layers.layers[0],
        hardware,
        SearchOptions(lpf_limit=2, nb_spatial_mappings_generated=1),
        show_progress=False,
    )


HARDWARE = load_yaml(TPU)
WORKLOAD = load_yaml(SMALL)
MAPPING = load_yaml(TPU_MAPPING)


@pytest.mark.slow
@FUZZ
@given(st.data())
def test_fuzzed_hardware(data):
    path = write("hardware.yaml", mutate(data, HARDWARE))
    assert_ours_or_valid(lambda: search_start(str(SMALL), path, TPU_MAPPING))


@FUZZ
@given(st.data())
def test_fuzzed_workload(data):
    layers = mutate(data, WORKLOAD)
    assert_ours_or_valid(lambda: search_start(write("workload.yaml", layers), TPU, TPU_MAPPING))


@FUZZ
@given(st.data())
def test_fuzzed_mapping(data):
    path = write("mapping.yaml", mutate(data, MAPPING))
    assert_ours_or_valid(lambda: search_start(str(SMALL), TPU, path))


@settings(FUZZ, max_examples=EXAMPLES // 2)
@given(st.sampled_from([SMALL, Path(TPU), Path(TPU_MAPPING)]), st.data())
def test_fuzzed_yaml_text(source, data):
    """Characters inserted, deleted or replaced anywhere in the file's text."""
    text = source.read_text()
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 3))
        text = (
            text[:at]
            + data.draw(
                st.sampled_from(
                    [
                        "",
                        ":",
                        "-",
                        "[",
                        "]",
                        "{",
                        "'",
                        "\t",
                        "\n",
                        " ",
                        "#",
                        "*",
                        "&a",
                        "!!python/object",
                        "0",
                    ]
                )
            )
            + text[at + cut :]
        )
    path = SCRATCH / f"text_{source.name}"
    path.write_text(text)
    files = {
        SMALL: (str(path), TPU, TPU_MAPPING),
        Path(TPU): (str(SMALL), str(path), TPU_MAPPING),
        Path(TPU_MAPPING): (str(SMALL), TPU, str(path)),
    }[source]
    assert_ours_or_valid(lambda: load_inputs(*files))


# ---- ONNX ---------------------------------------------------------------------------------------


def base_model() -> onnx.ModelProto:
    """Conv -> Relu -> MaxPool -> Flatten -> Gemm, with shapes, plus a residual Add."""

    def tensor(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    weights = [
        helper.make_tensor("w1", TensorProto.FLOAT, [8, 3, 3, 3], [0.1] * 216),
        helper.make_tensor("w2", TensorProto.FLOAT, [10, 128], [0.1] * 1280),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["x", "w1"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "c"], ["a"], name="add"),
        helper.make_node("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w2"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "fuzz",
        [tensor("x", [1, 3, 8, 8])],
        [tensor("y", [1, 10])],
        weights,
        value_info=[
            tensor("c", [1, 8, 8, 8]),
            tensor("r", [1, 8, 8, 8]),
            tensor("a", [1, 8, 8, 8]),
            tensor("p", [1, 8, 4, 4]),
            tensor("f", [1, 128]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


BASE_MODEL = base_model()
OP_TYPES = [
    "Conv",
    "QLinearConv",
    "Gemm",
    "MatMul",
    "Add",
    "Mul",
    "MaxPool",
    "GlobalAveragePool",
    "ConvTranspose",
    "Relu",
    "LSTM",
    "If",
    "Unknown",
]


def mutate_model(data) -> onnx.ModelProto:
    model = copy.deepcopy(BASE_MODEL)
    graph = model.graph
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        action = data.draw(
            st.sampled_from(
                [
                    "op_type",
                    "attribute",
                    "drop_attribute",
                    "input",
                    "drop_input",
                    "shape",
                    "drop_shapes",
                    "drop_initializer",
                    "precision",
                ]
            ),
            label="action",
        )
        node = graph.node[data.draw(st.integers(0, len(graph.node) - 1), label="node")]
        if action == "op_type":
            node.op_type = data.draw(st.sampled_from(OP_TYPES))
        elif action == "attribute":
            name = data.draw(
                st.sampled_from(["kernel_shape", "pads", "strides", "dilations", "group", "transA"])
            )
            value = data.draw(
                st.one_of(st.lists(st.integers(-2, 9), min_size=1, max_size=5), st.integers(-2, 9))
            )
            kept = [a for a in node.attribute if a.name != name]
            del node.attribute[:]
            node.attribute.extend(kept + [helper.make_attribute(name, value)])
        elif action == "drop_attribute" and node.attribute:
            del node.attribute[data.draw(st.integers(0, len(node.attribute) - 1))]
        elif action == "input":
            node.input.append(data.draw(st.sampled_from(["x", "c", "w1", "y", "missing", ""])))
        elif action == "drop_input" and node.input:
            del node.input[data.draw(st.integers(0, len(node.input) - 1))]
        elif action == "shape":
            infos = list(graph.value_info) + list(graph.input) + list(graph.output)
            info = infos[data.draw(st.integers(0, len(infos) - 1))]
            dims = info.type.tensor_type.shape.dim
            if dims:
                dims[data.draw(st.integers(0, len(dims) - 1))].dim_value = data.draw(
                    st.integers(-1, 64)
                )
        elif action == "drop_shapes":
            del graph.value_info[:]
        elif action == "drop_initializer" and graph.initializer:
            del graph.initializer[data.draw(st.integers(0, len(graph.initializer) - 1))]
        elif action == "precision":
            node.attribute.append(
                helper.make_attribute(
                    data.draw(st.sampled_from(["act_size", "weight_size", "output_size"])),
                    data.draw(st.one_of(st.integers(-8, 32), st.just(2.5), st.just("8"))),
                )
            )
    return model


@FUZZ
@given(st.data())
def test_fuzzed_onnx_model(data):
    model = mutate_model(data)
    entries = load_mapping(TPU_MAPPING)
    assert_ours_or_valid(
        lambda: load_workload(model, entries, evaluate_all_operators=data.draw(st.booleans()))
    )


@settings(FUZZ, max_examples=EXAMPLES // 2)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6))
def test_fuzzed_onnx_bytes(flips):
    """Bytes of the serialised model overwritten: a decode error or a model read like any other."""
    raw = bytearray(BASE_MODEL.SerializeToString())
    for position, value in flips:
        raw[position % len(raw)] = value
    path = SCRATCH / "model.onnx"
    path.write_bytes(bytes(raw))
    assert_ours_or_valid(lambda: read_onnx(path))
