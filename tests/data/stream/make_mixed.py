"""Make mixed.onnx: a small network exercising Stream's less common paths (shapes only, zero weights).

conv 3x3 (8->16, pad 1) -> Relu -> depthwise conv 3x3 (group 16, pad 1) -> MaxPool 2x2/2 -> Add (with a
second pooled branch) -> Reshape (1,16,16) -> Transpose (0,2,1) -> MatMul (16->32) -> Relu.
Run: python make_mixed.py (writes mixed.onnx next to this file).
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


nodes = [
    helper.make_node(
        "Conv", ["x", "w0"], ["a0"], name="/conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
    ),
    helper.make_node("Relu", ["a0"], ["a1"], name="/relu0"),
    helper.make_node(
        "Conv", ["a1", "w1"], ["a2"], name="/dw", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16
    ),
    helper.make_node("MaxPool", ["a2"], ["a3"], name="/pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node(
        "AveragePool", ["a1"], ["b0"], name="/avg", kernel_shape=[2, 2], strides=[2, 2]
    ),
    helper.make_node("Add", ["a3", "b0"], ["a4"], name="/add"),
    helper.make_node(
        "Constant",
        [],
        ["shape"],
        name="/shape",
        value=numpy_helper.from_array(np.array([1, 16, 16], dtype=np.int64)),
    ),
    helper.make_node("Reshape", ["a4", "shape"], ["a5"], name="/reshape"),
    helper.make_node("Transpose", ["a5"], ["a6"], name="/transpose", perm=[0, 2, 1]),
    helper.make_node("MatMul", ["a6", "w2"], ["a7"], name="/matmul"),
    helper.make_node("Relu", ["a7"], ["y"], name="/relu1"),
]
graph = helper.make_graph(
    nodes,
    "mixed",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32])],
    initializer=[weight("w0", (16, 8, 3, 3)), weight("w1", (16, 1, 3, 3)), weight("w2", (16, 32))],
)
model = onnx.shape_inference.infer_shapes(
    helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
)
onnx.save(model, Path(__file__).with_name("mixed.onnx"))
