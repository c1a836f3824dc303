"""Small shapes-only ONNX graphs of Llama-style attention, built with onnx.helper, for the operator-model tests.

``gqa_attention(form)`` builds one grouped-query attention block (Q, K, V projections, rotary-free, causal
mask, softmax, output projection) in one of the forms exporters write:

* ``repeat_kv``: K and V heads repeated with Unsqueeze -> Expand -> Reshape to the query heads (as
  transformers' ``repeat_kv``), then rank-4 products;
* ``packed``: queries reshaped to [B, kv heads, group, S, d] and rank-5 products against K and V
  unsqueezed on the group axis (broadcast, no copy);
* ``folded``: decode only (S = 1): the group's query heads folded into the rows, [B, kv heads, group, d]
  times K [B, kv heads, d, C].
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.inputs = [], [], []
        self.count = 0

    def const(self, value, dtype=np.int64) -> str:
        name = f"c{self.count}"
        self.count += 1
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, shape) -> str:
        """A weight initializer stored as shape only (external data, as the shared exports are)."""
        name = f"w{self.count}"
        self.count += 1
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
        tensor.data_location = TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", "weights.bin"
        self.inits.append(tensor)
        return name

    def op(self, op_type: str, inputs, **attrs) -> str:
        out = f"t{self.count}_{op_type}"
        self.count += 1
        self.nodes.append(
            helper.make_node(op_type, list(inputs), [out], name=f"/{op_type}_{self.count}", **attrs)
        )
        return out

    def reshape(self, tensor, shape) -> str:
        return self.op("Reshape", [tensor, self.const(shape)])

    def model(self, outputs):
        graph = helper.make_graph(
            self.nodes,
            "gqa",
            self.inputs,
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            self.inits,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def gqa_attention(
    form: str,
    *,
    seq: int = 12,
    past: int = 0,
    heads: int = 8,
    kv_heads: int = 2,
    head_dim: int = 16,
):
    """One grouped-query attention block as an ONNX model (see the module docstring)."""
    from onnx import shape_inference

    g = _Graph()
    width, group = heads * head_dim, heads // kv_heads
    keys = past + seq
    g.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, width]))
    q = g.op(
        "Transpose",
        [g.reshape(g.op("MatMul", ["x", g.weight([width, width])]), [1, seq, heads, head_dim])],
        perm=[0, 2, 1, 3],
    )
    k = g.op(
        "Transpose",
        [
            g.reshape(
                g.op("MatMul", ["x", g.weight([width, kv_heads * head_dim])]),
                [1, seq, kv_heads, head_dim],
            )
        ],
        perm=[0, 2, 1, 3],
    )
    v = g.op(
        "Transpose",
        [
            g.reshape(
                g.op("MatMul", ["x", g.weight([width, kv_heads * head_dim])]),
                [1, seq, kv_heads, head_dim],
            )
        ],
        perm=[0, 2, 1, 3],
    )
    if past:
        for name in ("past_k", "past_v"):
            g.inputs.append(
                helper.make_tensor_value_info(
                    name, TensorProto.FLOAT, [1, kv_heads, past, head_dim]
                )
            )
        k = g.op("Concat", ["past_k", k], axis=2)
        v = g.op("Concat", ["past_v", v], axis=2)
    mask = np.triu(np.full((seq, keys), -1e9, dtype=np.float32), k=keys - seq + 1)
    if form == "repeat_kv":

        def repeat(t):
            t = g.op("Unsqueeze", [t, g.const([2])])
            t = g.op("Expand", [t, g.const([1, kv_heads, group, keys, head_dim])])
            return g.reshape(t, [1, heads, keys, head_dim])

        kt = g.op("Transpose", [repeat(k)], perm=[0, 1, 3, 2])
        scores = g.op("MatMul", [q, kt])
        mask_shape, v_in, q_rows = [1, 1, seq, keys], repeat(v), None
    elif form == "packed":
        q = g.reshape(q, [1, kv_heads, group, seq, head_dim])
        kt = g.op("Transpose", [g.op("Unsqueeze", [k, g.const([2])])], perm=[0, 1, 2, 4, 3])
        scores = g.op("MatMul", [q, kt])
        mask_shape, v_in, q_rows = [1, 1, 1, seq, keys], g.op("Unsqueeze", [v, g.const([2])]), None
    elif form == "folded":
        assert seq == 1, "the folded form is a decode step"
        q = g.reshape(q, [1, kv_heads, group, head_dim])
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        mask_shape, v_in, q_rows = None, v, group
    else:
        raise ValueError(form)
    scores = g.op("Mul", [scores, g.const(head_dim**-0.5, np.float32)])
    if mask_shape is not None:
        mask_value = numpy_helper.from_array(mask.reshape(mask_shape), "mask")
        g.nodes.append(helper.make_node("Constant", [], ["mask_c"], name="/mask", value=mask_value))
        scores = g.op("Add", [scores, "mask_c"])
    probs = g.op("Softmax", [scores], axis=-1)
    ctx = g.op("MatMul", [probs, v_in])
    if q_rows:
        ctx = g.reshape(ctx, [1, heads, seq, head_dim])
    ctx = g.reshape(ctx, [1, heads, seq, head_dim]) if form == "packed" else ctx
    ctx = g.reshape(g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), [1, seq, width])
    out = g.op("MatMul", [ctx, g.weight([width, width])])
    return shape_inference.infer_shapes(g.model([out]))
