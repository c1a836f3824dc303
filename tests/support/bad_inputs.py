"""Small bad or odd inputs shared by the bad-input, warning and workflow-error tests."""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from support import DATA, reference_input

SMALL = DATA / "workflow" / "small_convs.yaml"  # four convolutions
TPU = reference_input("hardware", "tpu_like.yaml")
TPU_MAPPING = reference_input("mapping", "tpu_like.yaml")


def tensor(name, shape):
    """A float tensor's value info."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def onnx_file(path: Path, nodes, inputs: dict, outputs: dict, initializers=()) -> str:
    """An ONNX model of ``nodes`` saved at ``path``."""
    graph = helper.make_graph(
        nodes,
        "g",
        [tensor(n, s) for n, s in inputs.items()],
        [tensor(n, s) for n, s in outputs.items()],
        list(initializers),
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def relu_softmax(path: Path) -> str:
    """A model of a Relu and a Softmax: no operator evaluated by default."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Softmax", ["r"], ["y"], name="softmax"),
    ]
    return onnx_file(path, nodes, {"x": [1, 16]}, {"y": [1, 16]})


def warnings_of(caplog) -> list[str]:
    """The warnings pytest's ``caplog`` holds."""
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
