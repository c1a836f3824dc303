"""Build the toy residual network of the constraint-optimisation oracle (toy_residual.onnx).

conv0 3->16 3x3 pad 1 on 16x16, conv1 16->16 3x3 pad 1, conv2 16->16 1x1, Add(conv0, conv2),
conv3 16->32 3x3 stride 2 pad 1. Shapes only (zero weights); run with any Python that has onnx.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(name, x, y, cin, cout, k, pad, stride=1):
    w = numpy_helper.from_array(
        np.zeros((cout, cin, k, k), dtype=np.float32), name=f"{name}.weight"
    )
    node = helper.make_node(
        "Conv",
        [x, w.name],
        [y],
        name=f"/{name}/Conv",
        kernel_shape=[k, k],
        pads=[pad] * 4,
        strides=[stride, stride],
        dilations=[1, 1],
        group=1,
    )
    return node, w


n0, w0 = conv("conv0", "input", "a0", 3, 16, 3, 1)
n1, w1 = conv("conv1", "a0", "a1", 16, 16, 3, 1)
n2, w2 = conv("conv2", "a1", "a2", 16, 16, 1, 0)
add = helper.make_node("Add", ["a0", "a2"], ["a3"], name="/add/Add")
n3, w3 = conv("conv3", "a3", "output", 16, 32, 3, 1, stride=2)
graph = helper.make_graph(
    [n0, n1, n2, add, n3],
    "toy_residual",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
    [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 32, 8, 8])],
    initializer=[w0, w1, w2, w3],
)
model = onnx.shape_inference.infer_shapes(
    helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
)
onnx.checker.check_model(model)
onnx.save(model, "toy_residual.onnx")
