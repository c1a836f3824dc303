"""Make gather_concat.onnx: conv -> Reshape -> Gather (constant indices) -> Concat with a constant -> MatMul.

Shapes only (zero weights). Run: python make_gather_concat.py (writes gather_concat.onnx next to this file).
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, array):
    return helper.make_node(
        "Constant", [], [name], name=f"/{name}", value=numpy_helper.from_array(array)
    )


nodes = [
    helper.make_node(
        "Conv", ["x", "w0"], ["a0"], name="/conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
    ),
    const("shape", np.array([1, 16, 64], dtype=np.int64)),
    helper.make_node("Reshape", ["a0", "shape"], ["a1"], name="/reshape"),
    const("indices", np.arange(0, 16, 2, dtype=np.int64)),
    helper.make_node("Gather", ["a1", "indices"], ["a2"], name="/gather", axis=1),
    const("constant_pad", np.zeros((1, 8, 64), dtype=np.float32)),
    helper.make_node("Concat", ["a2", "constant_pad"], ["a3"], name="/concat", axis=1),
    helper.make_node("MatMul", ["a3", "w1"], ["y"], name="/matmul"),
]
graph = helper.make_graph(
    nodes,
    "gather_concat",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32])],
    initializer=[
        numpy_helper.from_array(np.zeros((16, 8, 3, 3), np.float32), "w0"),
        numpy_helper.from_array(np.zeros((64, 32), np.float32), "w1"),
    ],
)
model = onnx.shape_inference.infer_shapes(
    helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
)
onnx.save(model, Path(__file__).with_name("gather_concat.onnx"))
