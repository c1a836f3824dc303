"""Make asym.onnx: MatMul -> Add with a (D, K) bias (asymmetric element-wise) -> MatMul -> Mul of two activations.

Shapes only (zero weights). Run: python make_asym.py (writes asym.onnx next to this file).
"""

from pathlib import Path
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("MatMul", ["x", "w0"], ["a0"], name="/mm0"),
    helper.make_node("Add", ["a0", "bias"], ["a1"], name="/add_bias"),
    helper.make_node("MatMul", ["a1", "w1"], ["a2"], name="/mm1"),
    helper.make_node("Mul", ["a2", "a0"], ["y"], name="/mul"),
]
graph = helper.make_graph(
    nodes,
    "asym",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 16])],
    initializer=[
        numpy_helper.from_array(np.zeros((8, 16), np.float32), "w0"),
        numpy_helper.from_array(np.zeros((4, 16), np.float32), "bias"),
        numpy_helper.from_array(np.zeros((16, 16), np.float32), "w1"),
    ],
)
model = onnx.shape_inference.infer_shapes(
    helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
)
onnx.save(model, Path(__file__).with_name("asym.onnx"))
