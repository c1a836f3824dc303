"""Build the example ONNX workloads in inputs/workload/ with the onnx helper API.

    python tools/build_example_models.py [OUT_DIR [MODEL ...]]

The models carry shapes only: weights and biases are graph inputs (no data), so the files stay
small; only tiny tensors needed by shape inference (Reshape targets, Clip bounds, the attention
scale) hold values. Every model is checked with ``onnx.checker`` and saved with inferred shapes.

* ``resnet18.onnx`` and ``mobilenetv2.onnx`` mirror the torchvision exports shipped with ZigZag
  (same node order, node names and layer shapes; ReLU6 is Clip with two Constant nodes).
* ``alexnet.onnx``: torchvision's AlexNet (5 Conv, 3 Gemm; 224 x 224 input).
* ``transformer_block.onnx``: one encoder block (sequence 128, model width 256, 4 heads,
  feed-forward 1024): Q/K/V projections, scaled Q.K^T and attention.V per head, Softmax, output
  projection, residual Add, LayerNormalization, feed-forward MatMul-Relu-MatMul, Add,
  LayerNormalization.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 17  # LayerNormalization
OUT_DIR = Path(__file__).resolve().parents[1] / "inputs" / "workload"

SEQ, D_MODEL, HEADS, FFN = 128, 256, 4, 1024


class GraphBuilder:
    """Accumulates nodes, graph inputs and initializers; node outputs are ``<name>_output_0``."""

    def __init__(self, name: str):
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def input(self, name: str, shape: list[int]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op_type: str, name: str, inputs: list[str], **attrs) -> str:
        output = f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attrs))
        return output

    def model(self, output: str, output_shape: list[int]) -> onnx.ModelProto:
        result = helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)
        graph = helper.make_graph(self.nodes, self.name, self.inputs, [result], self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model, full_check=True)
        return shape_inference.infer_shapes(model, strict_mode=True)


def conv(
    g: GraphBuilder,
    name: str,
    x: str,
    c_in: int,
    c_out: int,
    k: int,
    stride: int,
    groups: int = 1,
    pad: int | None = None,
) -> str:
    """A biased 2-D convolution with square kernel and 'same'-style padding (unless ``pad``)."""
    weight = g.input(f"{name}.weight", [c_out, c_in // groups, k, k])
    bias = g.input(f"{name}.bias", [c_out])
    return g.node(
        "Conv",
        f"{name}/Conv",
        [x, weight, bias],
        dilations=[1, 1],
        group=groups,
        kernel_shape=[k, k],
        pads=[k // 2 if pad is None else pad] * 4,
        strides=[stride, stride],
    )


def resnet18() -> onnx.ModelProto:
    g = GraphBuilder("resnet18")
    x = conv(g, "/conv1", g.input("input", [1, 3, 224, 224]), 3, 64, 7, 2)
    x = g.node("Relu", "/relu/Relu", [x])
    x = g.node(
        "MaxPool",
        "/maxpool/MaxPool",
        [x],
        ceil_mode=0,
        kernel_shape=[3, 3],
        pads=[1, 1, 1, 1],
        strides=[2, 2],
    )
    c_in = 64
    for stage, c_out in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            p = f"/layer{stage}/layer{stage}.{block}"
            y = conv(g, f"{p}/conv1", x, c_in, c_out, 3, stride)
            y = g.node("Relu", f"{p}/relu/Relu", [y])
            y = conv(g, f"{p}/conv2", y, c_out, c_out, 3, 1)
            if stride != 1:
                x = conv(g, f"{p}/downsample/downsample.0", x, c_in, c_out, 1, stride)
            y = g.node("Add", f"{p}/Add", [y, x])
            x = g.node("Relu", f"{p}/relu_1/Relu", [y])
            c_in = c_out
    x = g.node("GlobalAveragePool", "/avgpool/GlobalAveragePool", [x])
    x = g.node("Flatten", "/Flatten", [x], axis=1)
    fc = g.node(
        "Gemm",
        "/fc/Gemm",
        [x, g.input("fc.weight", [1000, 512]), g.input("fc.bias", [1000])],
        alpha=1.0,
        beta=1.0,
        transB=1,
    )
    return g.model(fc, [1, 1000])


def alexnet() -> onnx.ModelProto:
    """torchvision's AlexNet: five convolutions, three max-pools, three fully connected layers."""
    g = GraphBuilder("alexnet")
    x = g.input("input", [1, 3, 224, 224])
    pools_after = {0, 1, 4}
    c_in = 3
    for i, (c_out, k, stride, pad) in enumerate(
        [(64, 11, 4, 2), (192, 5, 1, 2), (384, 3, 1, 1), (256, 3, 1, 1), (256, 3, 1, 1)]
    ):
        x = conv(g, f"/features/features.{3 * i}", x, c_in, c_out, k, stride, pad=pad)
        x = g.node("Relu", f"/features/features.{3 * i + 1}/Relu", [x])
        if i in pools_after:
            x = g.node(
                "MaxPool",
                f"/features/pool{i}/MaxPool",
                [x],
                ceil_mode=0,
                kernel_shape=[3, 3],
                pads=[0, 0, 0, 0],
                strides=[2, 2],
            )
        c_in = c_out
    x = g.node("AveragePool", "/avgpool/AveragePool", [x], kernel_shape=[1, 1], strides=[1, 1])
    x = g.node("Flatten", "/Flatten", [x], axis=1)
    features = 256 * 6 * 6
    for i, (n_in, n_out) in enumerate([(features, 4096), (4096, 4096), (4096, 1000)]):
        name = f"/classifier/classifier.{(1, 4, 6)[i]}"
        x = g.node(
            "Gemm",
            f"{name}/Gemm",
            [x, g.input(f"{name}.weight", [n_out, n_in]), g.input(f"{name}.bias", [n_out])],
            alpha=1.0,
            beta=1.0,
            transB=1,
        )
        if i < 2:
            x = g.node("Relu", f"{name}/Relu", [x])
    return g.model(x, [1, 1000])


def conv_relu6(
    g: GraphBuilder, module: str, x: str, c_in: int, c_out: int, k: int, stride: int, groups=1
) -> str:
    """torchvision Conv2dNormActivation ``module``: Conv (BN folded), then ReLU6 as Clip(0, 6)."""
    x = conv(g, f"{module}.0", x, c_in, c_out, k, stride, groups)
    bounds = [
        g.node(
            "Constant",
            f"{module}.2/Constant{suffix}",
            [],
            value=numpy_helper.from_array(np.float32(v)),
        )
        for suffix, v in (("", 0.0), ("_1", 6.0))
    ]
    return g.node("Clip", f"{module}.2/Clip", [x, *bounds])


MOBILENET_V2_SETTINGS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def mobilenetv2() -> onnx.ModelProto:
    g = GraphBuilder("mobilenetv2")
    x = conv_relu6(
        g, "/features/features.0/features.0", g.input("input", [1, 3, 224, 224]), 3, 32, 3, 2
    )
    c_in, index = 32, 1
    for expand, c_out, repeats, first_stride in MOBILENET_V2_SETTINGS:
        for r in range(repeats):
            x = inverted_residual(
                g,
                f"/features/features.{index}",
                x,
                c_in,
                c_out,
                expand,
                first_stride if r == 0 else 1,
            )
            c_in, index = c_out, index + 1
    x = conv_relu6(g, f"/features/features.{index}/features.{index}", x, c_in, 1280, 1, 1)
    x = g.node("GlobalAveragePool", "/GlobalAveragePool", [x])
    x = g.node("Flatten", "/Flatten", [x], axis=1)
    weight, bias = (
        g.input("classifier.1.weight", [1000, 1280]),
        g.input("classifier.1.bias", [1000]),
    )
    fc = g.node(
        "Gemm", "/classifier/classifier.1/Gemm", [x, weight, bias], alpha=1.0, beta=1.0, transB=1
    )
    return g.model(fc, [1, 1000])


def inverted_residual(
    g: GraphBuilder, p: str, x: str, c_in: int, c_out: int, expand: int, stride: int
) -> str:
    """Optional 1x1 expansion, 3x3 depthwise, 1x1 projection; residual Add when shapes allow."""
    hidden, part, y = c_in * expand, 0, x
    if expand != 1:
        y = conv_relu6(g, f"{p}/conv/conv.0/conv.0", y, c_in, hidden, 1, 1)
        part = 1
    y = conv_relu6(g, f"{p}/conv/conv.{part}/conv.{part}", y, hidden, hidden, 3, stride, hidden)
    y = conv(g, f"{p}/conv/conv.{part + 1}", y, hidden, c_out, 1, 1)
    return g.node("Add", f"{p}/Add", [x, y]) if stride == 1 and c_in == c_out else y


def transformer_block() -> onnx.ModelProto:
    g = GraphBuilder("transformer_block")
    head_dim = D_MODEL // HEADS
    x = g.input("input", [1, SEQ, D_MODEL])
    split = g.constant("heads_shape", np.array([1, SEQ, HEADS, head_dim], np.int64))
    merge = g.constant("model_shape", np.array([1, SEQ, D_MODEL], np.int64))
    scale = g.constant("attention_scale", np.array(1 / np.sqrt(head_dim), np.float32))

    def projection(name: str, y: str, c_in: int, c_out: int) -> str:
        return g.node("MatMul", f"/{name}/MatMul", [y, g.input(f"{name}.weight", [c_in, c_out])])

    def heads(name: str, perm: list[int]) -> str:
        y = g.node(
            "Reshape",
            f"/attn/{name}/Reshape",
            [projection(f"attn/{name}", x, D_MODEL, D_MODEL), split],
        )
        return g.node("Transpose", f"/attn/{name}/Transpose", [y], perm=perm)

    q, k_t, v = (
        heads("q_proj", [0, 2, 1, 3]),
        heads("k_proj", [0, 2, 3, 1]),
        heads("v_proj", [0, 2, 1, 3]),
    )
    scores = g.node(
        "Mul", "/attn/scale/Mul", [g.node("MatMul", "/attn/qk/MatMul", [q, k_t]), scale]
    )
    probs = g.node("Softmax", "/attn/Softmax", [scores], axis=-1)
    context = g.node(
        "Transpose",
        "/attn/context/Transpose",
        [g.node("MatMul", "/attn/av/MatMul", [probs, v])],
        perm=[0, 2, 1, 3],
    )
    context = g.node("Reshape", "/attn/context/Reshape", [context, merge])
    y = g.node(
        "Add", "/attn/residual/Add", [projection("attn/out_proj", context, D_MODEL, D_MODEL), x]
    )
    y = layer_norm(g, "/norm1", y)
    z = g.node("Relu", "/ffn/Relu", [projection("ffn/fc1", y, D_MODEL, FFN)])
    z = g.node("Add", "/ffn/residual/Add", [projection("ffn/fc2", z, FFN, D_MODEL), y])
    return g.model(layer_norm(g, "/norm2", z), [1, SEQ, D_MODEL])


def layer_norm(g: GraphBuilder, name: str, x: str) -> str:
    scale, bias = g.input(f"{name}.weight", [D_MODEL]), g.input(f"{name}.bias", [D_MODEL])
    return g.node("LayerNormalization", f"{name}/LayerNormalization", [x, scale, bias], axis=-1)


MODELS = {
    "resnet18": resnet18,
    "mobilenetv2": mobilenetv2,
    "transformer_block": transformer_block,
    "alexnet": alexnet,
}


def main(out_dir: Path = OUT_DIR, names: list[str] | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        if names and name not in names:
            continue
        path = out_dir / f"{name}.onnx"
        onnx.save(build(), path)
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR, sys.argv[2:])
