"""The computation layers of ONNX operators on the multi-core floor, with Stream's equations and dimension
names: convolutions (1-D as 2-D of height 1), pooling, matrix products, element-wise operators and a Softmax
as four layers. Each builder takes the reader (``zigzag.multicore.workload_onnx``: shapes, producers, the
mapping's entries, errors) and one ONNX node (docs/models/multi-core.md#onnx-workloads).
"""

from __future__ import annotations

import math

from zigzag.multicore.vector_layers import SOFTMAX_CLASSES
from zigzag.multicore.workload import SIMD_DIMS, StreamLayer


def window(parser, proto, node_id, kernel_default=None):
    attrs = parser.attrs(proto)
    kernel = list(attrs.get("kernel_shape", kernel_default or []))
    if len(kernel) == 1 and proto.op_type == "Conv":  # 1-D: the width, height 1
        pads = list(attrs.get("pads", [0, 0]))
        attrs = attrs | {
            "strides": [*attrs.get("strides", [1]), 1],
            "dilations": [*attrs.get("dilations", [1]), 1],
            "pads": [pads[0], 0, pads[1], 0],
        }
        kernel = [kernel[0], 1]
    if len(kernel) != 2:
        raise parser.error(
            proto, node_id, f"kernel_shape {kernel} is not 2-D; only 2-D windows are supported"
        )
    strides = list(attrs.get("strides", [1, 1]))
    dilations = list(attrs.get("dilations", [1, 1]))
    pads = list(attrs.get("pads", [0, 0, 0, 0]))
    relations = (
        f"ix={strides[0]}*ox+{dilations[0]}*fx",
        f"iy={strides[1]}*oy+{dilations[1]}*fy",
    )
    padding = {"IX": (pads[0], pads[2]), "IY": (pads[1], pads[3])}
    return kernel, relations, padding, attrs


def conv_layer(parser, proto, node_id, preds) -> StreamLayer:
    ia = parser.shape(proto, node_id, proto.input[0])
    oa = parser.shape(proto, node_id, proto.output[0])
    if len(ia) == 3 and len(oa) == 3:  # a 1-D convolution (NCW) as a 2-D one of height 1
        ia, oa = [*ia[:2], 1, ia[2]], [*oa[:2], 1, oa[2]]
    if len(ia) != 4 or len(oa) != 4 or ia[0] != oa[0]:
        raise parser.error(
            proto,
            node_id,
            f"input {ia} / output {oa}: only 1-D and 2-D convolutions on NCW / NCHW tensors",
        )
    kernel, relations, padding, attrs = window(parser, proto, node_id)
    group = attrs.get("group", 1)
    weight_dims = "[g][c][fy][fx]" if group > 1 else "[k][c][fy][fx]"
    sizes = {
        "B": oa[0],
        "K": math.ceil(oa[1] / group),
        "G": group,
        "OX": oa[3],
        "OY": oa[2],
        "C": math.ceil(ia[1] / group),
        "FX": kernel[0],
        "FY": kernel[1],
    }
    source = {
        "I": parser.producer.get(proto.input[0], node_id),
        "W": parser.producer.get(proto.input[1], node_id) if len(proto.input) > 1 else node_id,
    }
    return parser.make_layer(
        proto,
        node_id,
        "Conv",
        "conv",
        equation=f"O[b][g][k][oy][ox]+=W{weight_dims}*I[b][g][c][iy][ix]",
        loop_sizes=sizes,
        precision={"W": 8, "I": 8, "O": 16, "O_final": 8},
        source=source,
        relations=relations,
        pr_sizes={"IX": ia[3], "IY": ia[2]},
        padding=padding,
        reshape=_default_reshape(sizes, {"IX": ia[3], "IY": ia[2]}),
    )


def pooling_layer(parser, proto, node_id, preds) -> StreamLayer:
    ia = parser.shape(proto, node_id, proto.input[0])
    oa = parser.shape(proto, node_id, proto.output[0])
    is_global = proto.op_type.startswith("Global")
    if len(ia) != 4 or len(oa) != 4:
        raise parser.error(
            proto, node_id, f"input {ia} / output {oa}: only 4-D (NCHW) pooling is supported"
        )
    kernel, relations, padding, _ = window(parser, proto, node_id, ia[2:] if is_global else None)
    if is_global:
        kernel = ia[2:]
    if oa[1] != ia[1]:
        raise parser.error(
            proto, node_id, f"input channels {ia[1]} differ from output channels {oa[1]}"
        )
    if len(preds) > 1:
        raise parser.error(
            proto, node_id, "pooling with more than one produced input is not supported"
        )
    sizes = {
        "B": oa[0],
        "K": oa[1],
        "OX": oa[2],
        "OY": oa[3],
        "C": ia[1],
        "FX": kernel[0],
        "FY": kernel[1],
    }
    source = ({"I": preds[0]} if preds else {}) | {"W": node_id}
    return parser.make_layer(
        proto,
        node_id,
        "Pooling",
        "pooling",
        equation="O[b][k][oy][ox]+=W[fy][fx]*I[b][k][iy][ix]",
        loop_sizes=sizes,
        precision={"O": 8, "O_final": 8, "W": 0, "I": 8},
        source=source,
        relations=relations,
        pr_sizes={"IX": ia[2], "IY": ia[3]},
        padding=padding,
        reshape=_default_reshape(sizes, {"IX": ia[2], "IY": ia[3]}),
    )


def gemm_layer(parser, proto, node_id, preds) -> StreamLayer:
    ia = parser.shape(proto, node_id, proto.input[0])
    oa = parser.shape(proto, node_id, proto.output[0])
    if proto.op_type == "MatMul" and len(ia) == 2 and len(oa) == 3 and len(preds) == 1:
        return _weight_first(parser, proto, node_id, preds, ia, oa)
    if len(ia) != len(oa) or len(ia) not in (2, 3, 4) or ia[-2] != oa[-2]:
        raise parser.error(
            proto, node_id, f"input {ia} / output {oa}: need equal ranks 2-4 and equal rows"
        )
    if len(preds) > 2:
        raise parser.error(
            proto, node_id, "more than two produced inputs; make weights initializers"
        )
    batch = {}
    if len(ia) >= 3:
        batch["B"] = ia[0] or 1
    if len(ia) == 4 and ia[1]:
        batch["H"] = ia[1]
    outer = "".join(f"[{d.lower()}]" for d in batch)
    constant_w = len(preds) < 2
    if len(preds) == 2:
        sources = {"W": preds[1], "I": preds[0]}
    else:
        sources = {"W": node_id, "I": preds[0] if preds else node_id}
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        proto.op_type.lower(),
        equation=f"O{outer}[d][k]+=I{outer}[d][c]*W{'' if constant_w else outer}[c][k]",
        loop_sizes={"C": ia[-1], "D": ia[-2], "K": oa[-1]} | batch,
        precision=parser.precision(proto, node_id, preds),
        source=sources,
    )


def _weight_first(parser, proto, node_id, preds, ia, oa) -> StreamLayer:
    """``W[k][c] @ X[b][c][d]`` (a weight on the left, e.g. Mamba's time-step projection)."""
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        "matmul",
        equation="O[b][k][d]+=I[b][c][d]*W[k][c]",
        loop_sizes={"C": ia[-1], "D": oa[-1], "K": ia[-2], "B": oa[0] or 1},
        precision=parser.precision(proto, node_id, preds),
        source={"W": node_id, "I": preds[0]},
    )


def simd_layer(parser, proto, node_id, preds) -> StreamLayer:
    ia = parser.shape(proto, node_id, proto.input[0])
    oa = parser.shape(proto, node_id, proto.output[0])
    if ia != oa or len(oa) not in SIMD_DIMS:
        raise parser.error(
            proto,
            node_id,
            f"input {ia} / output {oa}: element-wise ops need equal shapes of rank 1-4",
        )
    if not preds:  # Stream's parser refuses it as well (docs/models/multi-core.md#onnx-workloads)
        raise parser.error(
            proto,
            node_id,
            "reads only graph inputs and initializers; an element-wise layer needs an input produced "
            "by another node: remove the node or move it after the first layer "
            "(`zigzag run` leaves it uncosted)",
        )
    if len(preds) > 2:
        raise parser.error(
            proto, node_id, f"{len(preds)} produced inputs; element-wise ops take 1 or 2"
        )
    dims = SIMD_DIMS[len(oa)]
    index = "".join(f"[{d.lower()}]" for d in dims)
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        proto.op_type.lower(),
        equation=f"O{index}+=I{index}*W{'[]' if len(preds) == 1 else index}",
        loop_sizes=dict(zip(dims, oa)),
        precision=parser.precision(proto, node_id, preds),
        source=parser.simd_source(node_id, preds),
    )


def asymmetric_simd_layer(parser, proto, node_id, preds, a, b) -> StreamLayer:
    oa = parser.shape(proto, node_id, proto.output[0])
    small = b if a == oa else a if b == oa else None
    if small is None or len(oa) != 3 or len(small) != 2 or len(preds) not in (1, 2):
        raise parser.error(
            proto, node_id, f"inputs {a} and {b} -> {oa}: only (B,D,K) with (D,K) is supported"
        )
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        proto.op_type.lower(),
        equation="O[b][d][k]+=I[b][d][k]*W[d][k]",
        loop_sizes=dict(zip(("B", "D", "K"), oa)),
        precision=parser.precision(proto, node_id, preds),
        source=parser.simd_source(node_id, preds),
    )


def softmax_layers(parser, proto, node_id, preds) -> list[StreamLayer]:
    """Four layers: row max, exp(x - max), row sum, division (ids node_id .. node_id+3)."""
    shape = parser.shape(proto, node_id, proto.input[0])
    if len(shape) not in (2, 3, 4) or len(preds) != 1:
        raise parser.error(
            proto, node_id, f"input {shape}: Softmax needs one produced input of rank 2-4"
        )
    dims = {2: ("K", "C"), 3: ("B", "K", "C"), 4: ("B", "H", "K", "C")}[len(shape)]
    full = "".join(f"[{d.lower()}]" for d in dims)
    row = "".join(f"[{d.lower()}]" for d in dims[:-1])
    sizes = dict(zip(dims, shape))
    precision = parser.precision(proto, node_id, preds)
    first, m, e, s = preds[0], node_id, node_id + 1, node_id + 2
    parts = (
        ("max", f"O{row}+=I{full}*W[]", {"W": m, "I": first}),
        ("exp", f"O{full}+=I{full}+W{row}", {"I": first, "W": m}),
        ("sum", f"O{row}+=I{full}*W[]", {"W": s, "I": e}),
        ("div", f"O{full}+=I{full}+W{row}", {"I": e, "W": s}),
    )
    vector = all(
        any(c in classes for classes in parser.vector_classes.values())
        for c in SOFTMAX_CLASSES.values()
    )
    return [
        parser.make_layer(
            proto,
            node_id + i,
            "Softmax",
            kind,
            equation=eq,
            loop_sizes=dict(sizes),
            precision=precision,
            source=src,
            name=f"{proto.name}-{kind}/",
            vector_op=SOFTMAX_CLASSES[kind] if vector else None,
        )
        for i, (kind, eq, src) in enumerate(parts)
    ]


def _default_reshape(sizes: dict[str, int], pr: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Conv/pool operands as Stream hands them between layers: (B, -1, X, Y), a pure reshape."""
    return {
        "I": (sizes["B"], -1, pr["IX"], pr["IY"]),
        "O": (sizes["B"], -1, sizes["OX"], sizes["OY"]),
    }
