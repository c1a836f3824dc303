"""Shapes-only Llama-style graphs as ONNX (for benchmarks): RMSNorm, rotary embeddings, grouped-query
attention, SiLU MLP. The decode step folds the queries onto the KV heads (the packed form transformers
exports for one new token) and reads a KV cache of ``context`` past tokens from graph inputs; the
prefill gathers its token ids' embeddings, repeats the KV heads (Unsqueeze, Expand, Reshape, as
transformers' ``repeat_kv``), scales the scores and adds a causal mask. Weights (and the mask) are
initializers that name a missing external file (only shapes are read).

Default widths: Llama-3-8B (4096, 32 heads / 8 KV heads, head size 128, MLP 14336, vocab 128256).
"""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper


def _weight(name: str, dims: list[int]) -> onnx.TensorProto:
    tensor = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights.bin"  # never written: shapes only
    return tensor


def llama_decode(path: str | Path, *, layers: int = 32, context: int = 4096, **widths) -> Path:
    """Write the decode step's graph (one new token after ``context`` cached ones) to ``path``."""
    return _llama(path, layers=layers, tokens=1, context=context, **widths)


def llama_prefill(path: str | Path, *, layers: int = 32, tokens: int = 512, **widths) -> Path:
    """Write the prefill's graph (``tokens`` prompt tokens, causal attention, no cache) to ``path``."""
    return _llama(path, layers=layers, tokens=tokens, context=0, **widths)


def _llama(
    path: str | Path,
    *,
    layers: int,
    tokens: int,
    context: int,
    width: int = 4096,
    heads: int = 32,
    kv_heads: int = 8,
    mlp: int = 14336,
    vocab: int = 128256,
) -> Path:
    hd, group, seq = width // heads, heads // kv_heads, tokens
    nodes, inits, inputs = [], [], []

    def const(name, values, dtype=TensorProto.INT64):
        inits.append(helper.make_tensor(name, dtype, [len(values)], values))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    if context:  # the new token's embedding and rotary factors are inputs
        inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, width]))
        for name in ("cos", "sin"):
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 1, hd]))
    else:  # token ids (their count makes the step a prefill), the embedding table, a constant causal mask
        inputs.append(helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq]))
        (
            inits.append(_weight("embed", [vocab, width])),
            inits.append(_weight("mask", [1, 1, seq, seq])),
        )
        const("ax1", [1])
        for name in ("cos", "sin"):
            inputs.append(
                helper.make_tensor_value_info(f"{name}_in", TensorProto.FLOAT, [1, seq, hd])
            )
            node("Unsqueeze", [f"{name}_in", "ax1"], name)
    const("two", [2.0], TensorProto.FLOAT), const("eps", [1e-5], TensorProto.FLOAT)
    (
        const("axes_last", [-1]),
        const("half", [hd // 2]),
        const("zero", [0]),
        const("end", [hd]),
        const("ax3", [3]),
    )
    const("q_shape", [1, seq, heads, hd]), const("kv_shape", [1, seq, kv_heads, hd])
    const("q_packed", [1, kv_heads, group, hd]), const("out_shape", [1, seq, width])
    if not context:
        const("ax2", [2]), const("kv_expanded", [1, kv_heads, group, seq, hd])
        const("kv_repeated", [1, heads, seq, hd]), const("scale", [hd**-0.5], TensorProto.FLOAT)

    def rmsnorm(x, tag, gain):
        p = node("Pow", [x, "two"], f"/{tag}/Pow")
        m = node("ReduceMean", [p], f"/{tag}/ReduceMean", axes=[-1])
        a = node("Add", [m, "eps"], f"/{tag}/Add")
        s = node("Sqrt", [a], f"/{tag}/Sqrt")
        d = node("Div", [x, s], f"/{tag}/Div")
        return node("Mul", [d, gain], f"/{tag}/Mul")

    def rotary(t, tag):
        c = node("Mul", [t, "cos"], f"/{tag}/Mul")
        x1 = node("Slice", [t, "zero", "half", "ax3"], f"/{tag}/Slice")
        x2 = node("Slice", [t, "half", "end", "ax3"], f"/{tag}/Slice_1")
        n = node("Neg", [x2], f"/{tag}/Neg")
        r = node("Concat", [n, x1], f"/{tag}/Concat", axis=-1)
        s = node("Mul", [r, "sin"], f"/{tag}/Mul_1")
        return node("Add", [c, s], f"/{tag}/Add")

    def repeat_kv(t, tag):
        u = node("Unsqueeze", [t, "ax2"], f"/{tag}/Unsqueeze")
        e = node("Expand", [u, "kv_expanded"], f"/{tag}/Expand")
        return node("Reshape", [e, "kv_repeated"], f"/{tag}/Reshape_repeat")

    h = "x" if context else node("Gather", ["embed", "input_ids"], "/embed_tokens/Gather")
    for i in range(layers):
        b = f"layers.{i}"
        for w, dims in (
            ("ln1", [width]),
            ("ln2", [width]),
            ("q", [width, width]),
            ("k", [width, kv_heads * hd]),
            ("v", [width, kv_heads * hd]),
            ("o", [width, width]),
            ("gate", [width, mlp]),
            ("up", [width, mlp]),
            ("down", [mlp, width]),
        ):
            inits.append(_weight(f"{b}.{w}", dims))
        for kv in ("k", "v") if context else ():
            inputs.append(
                helper.make_tensor_value_info(
                    f"past_{kv}{i}", TensorProto.FLOAT, [1, kv_heads, context, hd]
                )
            )
        n = rmsnorm(h, f"{b}/input_layernorm", f"{b}.ln1")
        q = node("MatMul", [n, f"{b}.q"], f"/{b}/q_proj/MatMul")
        k = node("MatMul", [n, f"{b}.k"], f"/{b}/k_proj/MatMul")
        v = node("MatMul", [n, f"{b}.v"], f"/{b}/v_proj/MatMul")
        q = node(
            "Transpose",
            [node("Reshape", [q, "q_shape"], f"/{b}/q/Reshape")],
            f"/{b}/q/Transpose",
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [k, "kv_shape"], f"/{b}/k/Reshape")],
            f"/{b}/k/Transpose",
            perm=[0, 2, 1, 3],
        )
        v = node(
            "Transpose",
            [node("Reshape", [v, "kv_shape"], f"/{b}/v/Reshape")],
            f"/{b}/v/Transpose",
            perm=[0, 2, 1, 3],
        )
        q, k = rotary(q, f"{b}/q_rotary"), rotary(k, f"{b}/k_rotary")
        if context:
            k = node("Concat", [f"past_k{i}", k], f"/{b}/k_cache/Concat", axis=2)
            v = node("Concat", [f"past_v{i}", v], f"/{b}/v_cache/Concat", axis=2)
            q = node("Reshape", [q, "q_packed"], f"/{b}/q/Reshape_packed")
        else:
            k, v = repeat_kv(k, f"{b}/k"), repeat_kv(v, f"{b}/v")
        kt = node("Transpose", [k], f"/{b}/k/Transpose_t", perm=[0, 1, 3, 2])
        scores = node("MatMul", [q, kt], f"/{b}/attn/MatMul")
        if not context:
            scores = node(
                "Add", [node("Mul", [scores, "scale"], f"/{b}/attn/Mul"), "mask"], f"/{b}/attn/Add"
            )
        probs = node("Softmax", [scores], f"/{b}/attn/Softmax", axis=-1)
        a = node("MatMul", [probs, v], f"/{b}/attn/MatMul_1")
        if not context:  # heads back next to each other per token
            a = node("Transpose", [a], f"/{b}/attn/Transpose", perm=[0, 2, 1, 3])
        a = node("Reshape", [a, "out_shape"], f"/{b}/attn/Reshape")
        o = node("MatMul", [a, f"{b}.o"], f"/{b}/o_proj/MatMul")
        h = node("Add", [h, o], f"/{b}/Add")
        n = rmsnorm(h, f"{b}/post_attention_layernorm", f"{b}.ln2")
        g = node("MatMul", [n, f"{b}.gate"], f"/{b}/mlp/gate_proj/MatMul")
        u = node("MatMul", [n, f"{b}.up"], f"/{b}/mlp/up_proj/MatMul")
        s = node(
            "Mul", [g, node("Sigmoid", [g], f"/{b}/mlp/act_fn/Sigmoid")], f"/{b}/mlp/act_fn/Mul"
        )
        d = node(
            "MatMul",
            [node("Mul", [s, u], f"/{b}/mlp/Mul"), f"{b}.down"],
            f"/{b}/mlp/down_proj/MatMul",
        )
        h = node("Add", [h, d], f"/{b}/Add_1")
    inits.append(_weight("norm", [width])), inits.append(_weight("lm_head", [width, vocab]))
    h = rmsnorm(h, "norm", "norm")
    node("MatMul", [h, "lm_head"], "logits")
    graph = helper.make_graph(
        nodes,
        "llama_decode" if context else "llama_prefill",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, seq, vocab])],
        inits,
    )
    model = onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    )
    onnx.save(model, str(path))
    return Path(path)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="Write a shapes-only Llama-style decode step as ONNX."
    )
    parser.add_argument("output", help="the .onnx file to write")
    parser.add_argument("--layers", type=int, default=32, help="decoder blocks (default 32)")
    parser.add_argument("--context", type=int, default=4096, help="cached tokens (default 4096)")
    args = parser.parse_args()
    print(f"written: {llama_decode(args.output, layers=args.layers, context=args.context)}")
