"""Make softmax.onnx: MatMul -> Softmax -> MatMul (shapes only, zero weights).

Run: python make_softmax.py (writes softmax.onnx next to this file).
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("MatMul", ["x", "w0"], ["a0"], name="/mm0"),
    helper.make_node("Softmax", ["a0"], ["a1"], name="/softmax", axis=-1),
    helper.make_node("MatMul", ["a1", "w1"], ["y"], name="/mm1"),
]
graph = helper.make_graph(
    nodes,
    "softmax",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])],
    initializer=[
        numpy_helper.from_array(np.zeros((8, 16), np.float32), "w0"),
        numpy_helper.from_array(np.zeros((16, 8), np.float32), "w1"),
    ],
)
model = onnx.shape_inference.infer_shapes(
    helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
)
onnx.save(model, Path(__file__).with_name("softmax.onnx"))
