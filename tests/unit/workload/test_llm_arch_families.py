"""Families beyond attention decoders from their configuration (Mamba, T5, ViT): hand counts of the
catalogue's published configurations (parameters, matrix MACs per token, weight and state / KV bytes), the
exports of tests/data/llm (EXPORTS.md: transformers, random weights, 2 blocks, real widths) equal to the
generated layers in MACs per layer kind, and bad input in one line."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import pytest

from zigzag.errors import InputError
from zigzag.io.llm_workloads import catalogue_sources, llm_layer_specs, load_catalogue
from zigzag.io.onnx_import import read_onnx
from zigzag.workload.llm import build_layer_specs
from zigzag.workload.llm.arch_layers import parameters
from support import TESTS

DATA = TESTS / "data" / "llm"


def kinds(specs: list[dict]) -> Counter:
    """MACs per kind of MAC layer (Gemm counted with MatMul)."""
    out: Counter = Counter()
    for s in specs:
        if s["kind"] == "layer" and s.get("vector_op") is None:
            kind = "MatMul" if s["operator_type"] == "Gemm" else s["operator_type"]
            out[kind] += math.prod(s["loop_sizes"])
    return out


def role_bytes(specs: list[dict], role: str, *, written: bool = False) -> float:
    """Bytes of the operands of ``role`` read (inputs) or written (outputs), as the footprint counts them."""
    total = 0.0
    for s in specs:
        if s["kind"] != "layer":
            continue
        roles = s.get("operand_roles") or {}
        sizes = dict(zip(s["loop_dims"], s["loop_sizes"]))
        for op, r in roles.items():
            if r != role or (op == "O") != written:
                continue
            index = s["equation"].split("=")[0] if op == "O" else _operand_index(s["equation"], op)
            dims = {d.upper() for d in re.findall(r"\[(\w+)\]", index)}
            bits = s["operand_precision"]["O_final" if op == "O" else op]
            total += math.prod(sizes.get(d, 1) for d in dims) * bits / 8
    return total


def _operand_index(equation: str, op: str) -> str:
    rhs = equation.split("=", 1)[1]
    start = rhs.index(op)
    end = start + 1
    while end < len(rhs) and rhs[end] == "[":
        end = rhs.index("]", end) + 1
    return rhs[start + 1 : end]


def close(tool: float, hand: float) -> bool:
    return abs(tool - hand) <= 0.01 * hand


# ----- the catalogue: published configurations, parameters by hand ------------------------------------
@pytest.mark.parametrize(
    "name, params",
    [
        # embedding 50280 x 768 (tied) + 24 x (norm, in_proj 768 x 3072, conv 1536 x 4 + bias, x_proj
        # 1536 x 80, dt_proj 48 x 1536 + bias, A 1536 x 16, D 1536, out_proj 1536 x 768) + final norm
        ("mamba-130m", 129_135_360),
        ("mamba-2.8b", 2_768_345_600),
        # AI21's 52B: 28 Mamba and 4 attention layers, 16 of 16-expert MoE and 16 dense MLPs, untied head
        ("jamba-v0.1", 51_570_323_328),
        # the published counts of transformers' models
        ("t5-small", 60_506_624),
        ("t5-base", 222_903_552),
        ("flan-t5-base", 247_577_856),
        ("vit-base-patch16-224", 86_567_656),
        ("vit-large-patch16-224", 304_326_632),
    ],
)
def test_catalogue_parameters_equal_the_hand_counts(name, params):
    assert "config.json" in catalogue_sources()[name]
    assert parameters(load_catalogue()[name]) == params


def test_mamba_decode_hand_count():
    """Mamba-130m, one token after 1,000: matrix MACs, weights read, state read and written (8-bit)."""
    cfg = load_catalogue()["mamba-130m"]
    d, di, n, r, k, v, layers = 768, 1536, 16, 48, 4, 50280, 24
    specs, _ = llm_layer_specs("mamba-130m", phase="decode", context=1000)
    per_layer = d * 2 * di + di * (r + 2 * n) + r * di + di * n + di * d  # the last term: out_proj
    assert sum(kinds(specs).values()) == layers * per_layer + d * v
    # every weight once, the embedding table as the head (tied) plus the one row the token looks up
    assert close(role_bytes(specs, "weight"), parameters(cfg) + d)
    # no KV cache: per layer the recurrent state (inner x state) and the convolution window are read ...
    assert role_bytes(specs, "kv_cache") == 0
    assert role_bytes(specs, "state") == layers * di * (n + k)
    # ... and the state and the new convolution input written in place, whatever the context
    assert role_bytes(specs, "state", written=True) == layers * di * (n + 1)
    longer, _ = llm_layer_specs("mamba-130m", phase="decode", context=100_000)
    assert role_bytes(longer, "state") == role_bytes(specs, "state")


def test_jamba_decode_hand_count():
    """Jamba-v0.1, one token after 1,000: layers 4, 12, 20, 28 attend (8 KV heads of 128, no positions),
    the other 28 are Mamba mixers (inner 8192, state 16, dt rank 256); the odd layers' feed-forward is
    16 experts (top 2) of 14336, the even layers' a dense SwiGLU of 14336."""
    d, f, e, v, ctx = 4096, 14336, 16, 65536, 1000
    kv, hd, di, n, r, k = 8, 128, 8192, 16, 256, 4
    specs, _ = llm_layer_specs("jamba-v0.1", phase="decode", context=ctx)
    attention = 2 * d * d + 2 * d * kv * hd + 2 * 32 * hd * (ctx + 1)
    mamba = d * 2 * di + di * (r + 2 * n) + r * di + di * n + di * d
    macs = 4 * attention + 28 * mamba + 16 * (d * e + 2 * 3 * d * f) + 16 * 3 * d * f + d * v
    assert sum(kinds(specs).values()) == macs
    # the KV cache of 4 layers (K and V, each read once) and the state of 28
    assert role_bytes(specs, "kv_cache") == 4 * 2 * kv * hd * (ctx + 1)
    assert role_bytes(specs, "state") == 28 * di * (n + k)
    # weights: all but the 14 experts per MoE layer no token is routed to, the embedding table but one row
    cfg = load_catalogue()["jamba-v0.1"]
    idle = 16 * 14 * 3 * d * f
    assert close(role_bytes(specs, "weight"), parameters(cfg) - idle - v * d + d)


def test_jamba_layer_kinds_follow_the_periods():
    specs, _ = llm_layer_specs("jamba-v0.1", phase="prefill", tokens=8, layers=8)
    names = {
        s["name"].split("/")[0] + "/" + s["name"].split("/")[1] for s in specs if "/" in s["name"]
    }
    assert {b for b in names if b.endswith("self_attn")} == {"layers.4/self_attn"}
    assert len({b for b in names if b.endswith("mamba")}) == 7
    routed = {s["name"].split("/")[0] for s in specs if "/experts." in s["name"]}
    assert routed == {"layers.1", "layers.3", "layers.5", "layers.7"}


def test_t5_decode_hand_count():
    """T5-base, one decoder token after 100 decoded ones over 512 source tokens (8-bit)."""
    d, inner, f, h, hd, v, layers, ctx, src = 768, 768, 3072, 12, 64, 32128, 12, 100, 512
    specs, inference = llm_layer_specs("t5-base", phase="decode", context=ctx)
    per_layer = 6 * d * inner + 2 * d * f + 2 * h * hd * (ctx + 1) + 2 * h * hd * src
    assert sum(kinds(specs).values()) == layers * per_layer + d * v
    assert inference.layers == 12
    # self-attention cache (context and the new token) and the cross cache, K and V
    assert role_bytes(specs, "kv_cache") == layers * 2 * h * hd * (ctx + 1 + src)
    assert role_bytes(specs, "kv_cache", written=True) == layers * 2 * inner
    decoder_weights = layers * (6 * d * inner + 2 * d * f + 3 * d) + d + v * d + d
    assert close(role_bytes(specs, "weight"), decoder_weights)


def test_t5_prefill_is_the_encoder_and_the_cross_cache():
    specs, _ = llm_layer_specs("t5-small", phase="prefill", tokens=64)
    d, f, layers, s = 512, 2048, 6, 64
    encoder = layers * (4 * s * d * d + 2 * 8 * s * s * 64 + 2 * s * d * f)
    assert sum(kinds(specs).values()) == encoder + layers * 2 * s * d * d
    assert role_bytes(specs, "kv_cache", written=True) == layers * 2 * s * d


def test_vit_hand_count():
    """ViT-B/16 over one 224 x 224 image: 197 tokens, matrix MACs and weights by hand."""
    d, f, t, layers = 768, 3072, 197, 12
    specs, inference = llm_layer_specs("vit-base-patch16-224", phase="prefill")
    conv = d * 3 * 16 * 16 * 196
    block = 4 * t * d * d + 2 * 12 * t * t * 64 + 2 * t * d * f
    assert kinds(specs) == {"Conv": conv, "MatMul": layers * block + d * 1000}
    assert inference.tokens == 197
    # every parameter once but the class token (joined as data) and the patch embedding's and the classifier's
    # biases (inside their Conv and Gemm): 768 + 768 + 1000
    cfg = load_catalogue()["vit-base-patch16-224"]
    assert role_bytes(specs, "weight") == parameters(cfg) - 2_536


# ----- exports: MACs per layer kind ---------------------------------------------------------------------
def test_vit_export_equals_the_generated_layers():
    imported = read_onnx(DATA / "vit_base.onnx", operators="all")
    generated, _ = llm_layer_specs(DATA / "vit_base.config.json", phase="prefill")
    assert kinds(generated) == kinds(imported)
    assert kinds(generated)["Conv"] == 2 * 3 * 16 * 16 * 196 * 384  # 768 channels


def test_mamba_export_equals_the_generated_layers(caplog):
    """The export's causal convolution pads both sides and keeps the first S outputs: it computes
    S + kernel - 1 positions where the kernel computes S."""
    imported = read_onnx(DATA / "mamba_130m_prefill.onnx", operators="all")
    generated, _ = llm_layer_specs(DATA / "mamba_130m.config.json", phase="prefill", tokens=16)
    exp, gen = kinds(imported), kinds(generated)
    assert exp["MatMul"] == gen["MatMul"] == 738_164_736
    assert exp["Conv"] * 16 == gen["Conv"] * (16 + 4 - 1)
    assert "no operator model (Softplus)" in caplog.text  # named, not dropped silently


def test_jamba_export_equals_the_generated_layers():
    """A small Jamba (width 512, layer 1 attends and routes over 4 experts, layer 0 a Mamba mixer and a dense MLP):
    its batched experts' products equal the generated experts' MACs."""
    imported = read_onnx(DATA / "jamba_small_prefill.onnx", operators="all")
    generated, _ = llm_layer_specs(DATA / "jamba_small.config.json", phase="prefill", tokens=16)
    exp, gen = kinds(imported), kinds(generated)
    assert exp["MatMul"] == gen["MatMul"] == 121_356_288
    assert exp["Conv"] * 16 == gen["Conv"] * (16 + 4 - 1)


def test_t5_exports_equal_the_generated_layers():
    encoder = read_onnx(DATA / "t5_small_encoder.onnx", operators="all")
    prefill, _ = llm_layer_specs(DATA / "t5_small.config.json", phase="prefill", tokens=32)
    cross_kv = (
        2 * 2 * 32 * 512 * 512
    )  # 2 decoder layers x K, V: projected once, not in the encoder's export
    assert kinds(prefill)["MatMul"] == kinds(encoder)["MatMul"] + cross_kv
    decode = read_onnx(DATA / "t5_small_decode.onnx", operators="all")
    config = json.loads((DATA / "t5_small.config.json").read_text()) | {"encoder_tokens": 32}
    step, _ = build_layer_specs(config, phase="decode", context=7)
    assert kinds(step) == kinds(decode)
    # the caches the products read (the export also scales K by sdpa's scale of 1, a Mul that reads it again)
    products = lambda specs: [s for s in specs if s.get("vector_op") is None]  # noqa: E731
    assert role_bytes(products(step), "kv_cache") == role_bytes(products(decode), "kv_cache")


# ----- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, where, what",
    [
        (
            {
                "model_type": "vit",
                "hidden_size": 768,
                "num_hidden_layers": 2,
                "num_attention_heads": 12,
                "intermediate_size": 3072,
                "patch_size": 15,
            },
            "patch_size",
            "not a multiple",
        ),
        (
            {
                "model_type": "t5",
                "d_model": 512,
                "d_kv": 64,
                "d_ff": 2048,
                "num_heads": 8,
                "num_layers": 2,
                "vocab_size": 100,
                "feed_forward_proj": "swish",
            },
            "feed_forward_proj",
            "use one of",
        ),
        (
            {
                "model_type": "mamba",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "vocab_size": 100,
                "time_step_rank": "big",
            },
            "time_step_rank",
            "'auto'",
        ),
        (
            {"model_type": "mamba", "num_hidden_layers": 2, "vocab_size": 100},
            "hidden_size",
            "missing",
        ),
    ],
)
def test_bad_configuration_is_one_line(change, where, what):
    with pytest.raises(InputError) as err:
        build_layer_specs(change, phase="prefill", tokens=4)
    assert (
        err.value.where == f"model.{where}"
        and what in str(err.value)
        and "\n" not in str(err.value)
    )


def test_vit_steps_are_checked():
    with pytest.raises(InputError, match="197 tokens"):
        llm_layer_specs("vit-base-patch16-224", phase="prefill", tokens=128)
    with pytest.raises(InputError, match="no decode step"):
        llm_layer_specs("vit-base-patch16-224", phase="decode", context=4)


def test_unknown_model_type_lists_the_new_families():
    with pytest.raises(InputError, match="mamba, jamba, t5, vit"):
        build_layer_specs({"model_type": "rwkv"}, phase="prefill", tokens=4)


def test_gathered_experts_are_read_once_each():
    """Qwen3-MoE-style prefill (128 experts of 768, top 8, 16 tokens, 2 blocks): the export gathers the
    weights of each of the 128 (token, expert) pairs; 128 (1 - (1 - 8/128)^16) = 82.4 distinct experts are read
    (rounded to 82), once each."""
    specs = read_onnx(DATA / "qwen3_moe_prefill.onnx", operators="all")
    gathers = [s for s in specs if s["name"].endswith("experts/Gather")]
    assert [dict(zip(s["loop_dims"], s["loop_sizes"]))["B"] for s in gathers] == [82, 82]
    d, f, e, v = 2048, 768, 128, 151936
    attention = 2 * d * 32 * 128 + 2 * d * 4 * 128 + 4 * 128 * 2  # q, o; k, v; q and k norms
    hand = 2 * (82 * 3 * d * f + attention + d * e + 2 * d) + 16 * d + d + v * d
    assert close(role_bytes(specs, "weight"), hand)  # 1,071 MiB; 1,485 MiB when every pair was read


# ----- exports of dense and MoE decoders ----------------------------------------------------------------
@pytest.mark.parametrize(
    "export, config, step",
    [
        ("phi3_mini_prefill.onnx", "phi3_mini.config.json", {"phase": "prefill", "tokens": 32}),
        ("phi3_mini_decode.onnx", "phi3_mini.config.json", {"phase": "decode", "context": 31}),
        ("qwen3_moe_prefill.onnx", "qwen3_moe.config.json", {"phase": "prefill", "tokens": 16}),
        ("qwen3_moe_decode.onnx", "qwen3_moe.config.json", {"phase": "decode", "context": 15}),
    ],
)
def test_decoder_exports_equal_the_generated_layers(export, config, step):
    imported = read_onnx(DATA / export, operators="all")
    generated = llm_layer_specs(DATA / config, **step)[0]
    assert kinds(generated) == kinds(imported)


def test_scatter_into_a_cache_is_the_append():
    """A static cache's update (ScatterND of the new token's K into the past K given as input) is the
    KV-cache append; a ScatterND elsewhere copies its updates (DeepSeek's export assembles K that way)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    past = helper.make_tensor_value_info("past_k0", TensorProto.FLOAT, [1, 2, 4, 8])
    new = helper.make_tensor_value_info("new_k", TensorProto.FLOAT, [1, 2, 1, 8])
    out = helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 2, 4, 8])
    index = numpy_helper.from_array(np.array([[[[0, 0, 3], [0, 1, 3]]]], dtype=np.int64), "index")
    node = helper.make_node("ScatterND", ["past_k0", "index", "new_k"], ["k"], name="update")
    graph = helper.make_graph([node], "g", [past, new], [out], [index])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    (layer,) = [s for s in read_onnx(model, operators="all") if s["kind"] == "layer"]
    assert layer["vector_op"] == "copy" and layer["operand_roles"]["O"] == "kv_cache"
    assert dict(zip(layer["loop_dims"], layer["loop_sizes"])) == {"B": 1, "H": 2, "D": 1, "K": 8}


def test_an_export_that_up_projects_the_whole_cache_says_so(caplog):
    """DeepSeek-V3-style attention as transformers exports it: each decode step multiplies the whole cached
    latent (7 + 1 positions x 512) by kv_b_proj (512 x 8 heads x 256); costed as exported, and one line gives
    the absorbed form's figure (the weight applied to the one new token)."""
    specs = read_onnx(DATA / "deepseek_mla_small_decode.onnx", operators="all")
    up = [s for s in specs if s["name"].endswith("kv_b_proj/MatMul")]
    assert [math.prod(s["loop_sizes"]) for s in up] == [8 * 512 * 2048] * 2
    lines = [r.getMessage() for r in caplog.records if "whole KV cache" in r.getMessage()]
    assert len(lines) == 1
    assert f"{2 * 8 * 512 * 2048:,} MACs" in lines[0] and f"{2 * 512 * 2048:,} MACs" in lines[0]
