"""The operator model (docs/models/operators.md): canonical layers, the ONNX import of real LLM exports with
``operators="all"``, grouped-query forms, causal prefill, and the default import left as it was.

The exports are tests/data/llm/ (see its README); the grouped-query graphs are built by tests/llm_graphs.py.
"""

from __future__ import annotations

import logging
import math

import pytest

from support.llm_graphs import gqa_attention
from zigzag.errors import InputError
from zigzag.io.onnx_attention import causal_split
from zigzag.io.onnx_import import read_onnx
from zigzag.io.onnx_operators import export_inference
from zigzag.mapping.entry import MappingEntry
from zigzag.workload import operators as ops
from zigzag.workload.workload import build_layer
from support import REPO, TESTS

DATA = TESTS / "data" / "llm"
#: MACs of every Gemm/MatMul by hand from the configurations (tests/data/llm/README.md).
HAND_MACS = {
    "gpt2_prefill_mask": 6_802_735_104,
    "gpt2_prefill_mask_op17": 6_802_735_104,
    "gpt2_decode": 53_146_368,
    "bert_base": 1_862_860_800,
}
ATTENTION_MACS = {"gpt2_prefill_mask": 50_331_648, "gpt2_decode": 393_216, "bert_base": 50_331_648}
MAC_LAYERS = {
    "gpt2_prefill_mask": 13,
    "gpt2_prefill_mask_op17": 13,
    "gpt2_decode": 13,
    "bert_base": 17,
}


def load(name: str, **options) -> list[dict]:
    return read_onnx(DATA / f"{name}.onnx", **options)


def loops(layer: dict) -> dict[str, int]:
    return dict(zip(layer["loop_dims"], layer["loop_sizes"]))


def macs(layers) -> int:
    return sum(
        math.prod(layer["loop_sizes"])
        for layer in layers
        if layer.get("kind") == "layer" and not layer.get("vector_op")
    )


def anonymous(layers: list[dict]) -> list[dict]:
    """Layers without their names (the ids and sources, numbered in order, stay)."""
    return [{k: v for k, v in layer.items() if k != "name"} for layer in layers]


def named(layers: list[dict], part: str) -> list[dict]:
    return [layer for layer in layers if part in layer["name"]]


# ----- the default import does not move -----------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HAND_MACS))
def test_default_import_keeps_zigzag_layers(name):
    layers = [n for n in load(name) if n["kind"] == "layer"]
    assert len(layers) == MAC_LAYERS[name]
    assert macs(layers) == HAND_MACS[name]
    assert all("vector_op" not in n and "operand_roles" not in n for n in layers)


@pytest.mark.parametrize("name", sorted(HAND_MACS))
def test_all_operators_keep_every_matrix_product(name):
    """Without causal blocks, the Gemm/MatMul layers of operators='all' are the default import's ones."""
    default = [n for n in load(name) if n["kind"] == "layer"]
    products = [n for n in load(name, operators="all", causal_blocks=0) if not n.get("vector_op")]
    keys = ("operator_type", "equation", "loop_dims", "loop_sizes", "operand_precision")
    assert [{k: n[k] for k in keys} for n in products] == [{k: n[k] for k in keys} for n in default]


def test_decode_attention_loops_and_cache():
    layers = load("gpt2_decode", operators="all")
    qk, pv = (
        n
        for n in layers
        if n["operator_type"] == "MatMul" and "attn" in n["name"] and "h.0" in n["name"]
    )
    assert loops(qk) == {"C": 64, "D": 1, "K": 128, "B": 1, "H": 12}
    assert loops(pv) == {"C": 128, "D": 1, "K": 64, "B": 1, "H": 12}
    assert qk["operand_roles"]["W"] == pv["operand_roles"]["W"] == "kv_cache"
    appends = [n for n in layers if n.get("vector_op") == "copy"]
    assert len(appends) == 4  # K and V of both layers: only the new token is written
    assert all(
        loops(n) == {"B": 1, "H": 12, "D": 1, "K": 64} and n["operand_roles"]["O"] == "kv_cache"
        for n in appends
    )
    assert macs([n for n in layers if "attn/MatMul" in n["name"]]) == ATTENTION_MACS["gpt2_decode"]


# ----- per operator ---------------------------------------------------------------------------------
def test_opset17_layernorm_equals_opset14_pieces():
    assert anonymous(load("gpt2_prefill_mask_op17", operators="all")) == anonymous(
        load("gpt2_prefill_mask", operators="all")
    )


def test_layernorm_is_the_constructors():
    layers = load("gpt2_prefill_mask", operators="all")
    pieces = named(layers, "h.0/ln_1/")
    first = pieces[0]["id"]
    built = ops.layernorm(first, "ln", {"B": 1, "D": 128, "K": 768}, first - 1)
    assert anonymous(pieces) == anonymous(built)
    assert [n["vector_op"] for n in pieces] == [
        "reduce_mean",
        "sub",
        "pow",
        "reduce_mean",
        "add",
        "sqrt",
        "div",
        "mul",
        "add",
    ]
    assert loops(pieces[0]) == {
        "B": 1,
        "D": 128,
        "C": 768,
    }  # the mean: one reduction step per element
    assert [n["operand_roles"].get("W") for n in pieces[-2:]] == ["weight", "weight"]  # gamma, beta


def test_gelu_forms_are_the_constructors():
    gpt2 = named(load("gpt2_prefill_mask", operators="all"), "h.0/mlp/act/")
    assert anonymous(gpt2) == anonymous(
        ops.gelu(
            gpt2[0]["id"],
            "g",
            {"B": 1, "D": 128, "K": 3072},
            gpt2[0]["operand_source"]["I"],
            form="tanh",
        )
    )
    bert = named(load("bert_base", operators="all"), "layer.0/intermediate/intermediate_act_fn/")
    assert anonymous(bert) == anonymous(
        ops.gelu(
            bert[0]["id"],
            "g",
            {"B": 1, "D": 128, "K": 3072},
            bert[0]["operand_source"]["I"],
            form="erf",
        )
    )
    assert [n["vector_op"] for n in bert] == ["div", "erf", "add", "mul", "mul"]


def test_softmax_is_the_constructors_and_counts_its_operations():
    pieces = named(load("bert_base", operators="all"), "layer.0/attention/self/Softmax")
    dims = {"B": 1, "H": 12, "D": 128, "K": 128}
    assert anonymous(pieces) == anonymous(
        ops.softmax(pieces[0]["id"], "s", dims, pieces[0]["operand_source"]["I"])
    )
    assert [math.prod(n["loop_sizes"]) for n in pieces] == [12 * 128 * 128] * 5


def test_gathers_and_what_is_left_out(caplog):
    with caplog.at_level(logging.INFO):
        layers = load("bert_base", operators="all")
    gathers = [n for n in layers if n.get("vector_op") == "gather"]
    assert [n["operand_roles"]["I"] for n in gathers] == ["weight"] * 3 + [
        "activation"
    ]  # 3 tables, pooler token
    assert loops(gathers[0]) == {"B": 1, "D": 128, "K": 768}
    assert loops(gathers[-1]) == {"D": 1, "K": 768}
    text = caplog.text
    assert "left out: input preprocessing" in text and "left out: NaN guard" in text
    assert not [
        n
        for n in layers
        if n["name"].startswith("/m/")
        and "/embeddings/" not in n["name"]
        and "/encoder/" not in n["name"]
        and "/pooler/" not in n["name"]
    ]  # mask arithmetic: no layer
    adds = [n for n in layers if n["name"].endswith("attention/self/Add")]
    assert [n["equation"] for n in adds] == [
        "O[b][h][d][k]=I[b][h][d][k]+W[b][d][k]"
    ] * 2  # the mask's use


def test_scalar_constants_are_immediates():
    layers = load("gpt2_prefill_mask", operators="all")
    scale = named(layers, "h.0/attn/Mul")[0]
    assert scale["equation"] == "O[b][h][d][k]=I[b][h][d][k]" and scale["vector_op"] == "mul"


# ----- causal prefill ------------------------------------------------------------------------------
def test_causal_split_rule_and_error():
    assert causal_split(128, 8) == [(16, 16 * (i + 1)) for i in range(8)]
    assert causal_split(10, 4) == [(3, 3), (3, 6), (2, 8), (2, 10)]
    assert causal_split(4, 2, past=6) == [(2, 8), (2, 10)]
    for tokens, blocks in ((128, 8), (2048, 16), (100, 7)):
        counted = sum(rows * keys for rows, keys in causal_split(tokens, blocks))
        exact = tokens * (tokens + 1) // 2
        if tokens % blocks == 0:
            assert (counted - exact) / exact == pytest.approx((tokens // blocks - 1) / (tokens + 1))
        assert exact <= counted < tokens * tokens
    assert sum(r * k for r, k in causal_split(128, 128)) == 128 * 129 // 2


def test_causal_prefill_counts_the_unmasked_blocks():
    full = ATTENTION_MACS["gpt2_prefill_mask"]
    attention = lambda layers: macs(n for n in layers if "attn/MatMul" in n["name"])  # noqa: E731
    assert attention(load("gpt2_prefill_mask", operators="all", causal_blocks=0)) == full
    blocked = load("gpt2_prefill_mask", operators="all")
    assert attention(blocked) == full * sum(r * k for r, k in causal_split(128, 8)) // (128 * 128)
    exact = attention(load("gpt2_prefill_mask", operators="all", causal_blocks=128))
    assert exact == 2 * 2 * 12 * 64 * (
        128 * 129 // 2
    )  # 2 layers x (Q.K^T + P.V) x heads x head dim x triangle
    softmax = [n for n in blocked if "h.0/attn/Softmax/Exp" in n["name"]]
    assert [loops(n)["K"] for n in softmax] == [16 * (i + 1) for i in range(8)]


def test_causality_is_detected_from_the_mask():
    assert any("/causal" in n["name"] for n in load("gpt2_prefill_mask", operators="all"))
    assert not any(
        "/causal" in n["name"] for n in load("bert_base", operators="all")
    )  # bidirectional
    assert not any(
        "/causal" in n["name"] for n in load("gpt2_decode", operators="all")
    )  # one query row
    forced = load("bert_base", operators="all", causal=True)
    assert any("/causal" in n["name"] for n in forced)


# ----- grouped-query attention ---------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"seq": 1, "past": 15}])
def test_grouped_query_forms_give_the_same_layers(kw):
    repeated = read_onnx(gqa_attention("repeat_kv", **kw), operators="all", causal_blocks=4)
    packed = read_onnx(gqa_attention("packed", **kw), operators="all", causal_blocks=4)
    assert anonymous(repeated) == anonymous(packed)
    unnamed = gqa_attention("packed", **kw)
    for node in unnamed.graph.node:
        node.name = ""  # exporters may leave nodes unnamed: nothing is keyed by name
    assert anonymous(read_onnx(unnamed, operators="all", causal_blocks=4)) == anonymous(packed)
    if kw:
        folded = read_onnx(gqa_attention("folded", **kw), operators="all")
        no_mask = [n for n in anonymous(packed) if n["operator_type"] != "Add"]
        assert [loops(n) for n in anonymous(folded)] == [loops(n) for n in no_mask]


@pytest.mark.parametrize(
    "model, heads, tokens", [("gpt2_inner_prefill", 4, 128), ("bert_small_prefill", 4, 64)]
)
def test_multi_head_attention_stays_multi_head_whatever_the_head_count(model, heads, tokens):
    """Grouped-query attention is read from the graph (an Expand of the kv heads, or a Reshape folding query
    heads into rows), never from sizes: 4 heads of 64 rows of 128 tokens divide, yet nothing is grouped."""
    layers = load(model, operators="all", causal_blocks=0)
    assert not any("G" in n["loop_dims"] for n in layers)
    products = [n for n in layers if n["operator_type"] == "MatMul" and "H" in n["loop_dims"]]
    assert len(products) == 4 and all(
        loops(n)["H"] == heads and loops(n)["D"] == tokens for n in products
    )
    scores = [n for n in layers if n.get("vector_op") == "exp"]
    assert all(loops(n) == {"B": 1, "H": heads, "D": tokens, "K": tokens} for n in scores)
    assert (
        "/causal" in " ".join(n["name"] for n in load(model, operators="all"))
    ) == model.startswith("gpt2")


def test_a_sliding_window_cache_append_is_an_append():
    """Mistral's decode slices the past K/V to the window before appending the new token's."""
    for model, kv_heads, past in (("mistral_small_decode", 4, 127), ("mistral_sw16_decode", 2, 15)):
        layers = load(model, operators="all")
        appends = [n for n in layers if n.get("vector_op") == "copy"]
        assert len(appends) == 4 and all(
            loops(n) == {"B": 1, "H": kv_heads, "D": 1, "K": 64 if past == 127 else 32}
            and n["operand_roles"]["O"] == "kv_cache"
            for n in appends
        )
        products = [n for n in layers if "G" in n["loop_dims"]]
        assert all(n["operand_roles"]["W"] == "kv_cache" for n in products)
        assert [loops(n)["K"] for n in products[::2]] == [
            past + 1
        ] * 2  # Q.K^T over the window's keys


def test_sliding_window_prefill_counts_the_band():
    """A prefill longer than the window: the mask hides the future and the keys before each query's window;
    each block attends from its first row's window to its last row (mistral_sw16: 32 tokens, window 16)."""
    assert causal_split(32, 8, window=16) == [(4, 4), (4, 8), (4, 12), (4, 16)] + [(4, 19)] * 4
    assert causal_split(4, 2, past=6, window=5) == [(2, 6), (2, 6)]
    assert causal_split(32, 8, window=64) == causal_split(32, 8)
    layers = load("mistral_sw16_prefill", operators="all")
    qk = [n for n in layers if "layers.0/self_attn/MatMul/causal" in n["name"]]
    assert [loops(n)["K"] for n in qk] == [4, 8, 12, 16, 19, 19, 19, 19]
    exact = (
        2 * 2 * 8 * 32 * sum(min(q + 1, 16) for q in range(32))
    )  # layers x products x heads x head dim x band
    blocked = macs(n for n in layers if "G" in n["loop_dims"])
    assert (
        exact
        <= blocked
        < macs(
            n
            for n in load("mistral_sw16_prefill", operators="all", causal_blocks=0)
            if "G" in n["loop_dims"]
        )
    )


def test_grouped_query_reads_kv_once_per_group():
    layers = read_onnx(gqa_attention("repeat_kv", seq=1, past=15), operators="all")
    qk, pv = [n for n in layers if "G" in n["loop_dims"]]
    assert loops(qk) == {"C": 16, "D": 1, "K": 16, "B": 1, "H": 2, "G": 4}
    assert (
        qk["equation"] == "O[b][h][g][d][k]+=I[b][h][g][d][c]*W[b][h][c][k]"
    )  # W not indexed by g
    assert loops(pv) == {"C": 16, "D": 1, "K": 16, "B": 1, "H": 2, "G": 4}
    default = [
        n for n in read_onnx(gqa_attention("repeat_kv", seq=1, past=15)) if n["kind"] == "layer"
    ]
    assert macs(default) == macs(layers)  # same MACs, K/V no longer counted as 8 heads of data


# ----- constructors, layer fields, options ----------------------------------------------------------
def test_vector_dims_and_broadcasting():
    dims = ops.vector_dims([1, 12, 128, 128])
    assert dims == {"B": 1, "H": 12, "D": 128, "K": 128}
    assert ops.broadcast_dims([1, 1, 128, 128], dims) == ("B", "D", "K")
    assert ops.broadcast_dims([128], {"B": 1, "D": 4, "K": 128}) == ("K",)
    with pytest.raises(ValueError, match="ranks 1 to 5"):
        ops.vector_dims([1] * 6)
    with pytest.raises(ValueError, match="unknown operation class"):
        ops.elementwise(0, "x", "softplus", dims)


def test_layer_fields_written_only_when_set():
    entry = MappingEntry.from_dict(
        {
            "name": "default",
            "spatial_mapping": {"D1": ["K, 4"]},
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
        }
    )
    mac = build_layer(ops.matmul(0, "m", rows=4, reduction=8, cols=16, roles=False), [entry])
    assert "vector_op" not in mac.to_spec() and "operand_roles" not in mac.to_spec()
    vector = build_layer(ops.elementwise(1, "e", "exp", {"D": 4, "K": 16}), [entry])
    spec = vector.to_spec()
    assert spec["vector_op"] == "exp" and spec["operand_roles"] == {
        "O": "activation",
        "I": "activation",
    }
    assert vector.operands == ("O", "I") and vector.total_macs == 64


def test_operators_option_is_checked():
    with pytest.raises(InputError, match="operators"):
        load("bert_base", operators="every")


def test_export_inference_metadata():
    import onnx

    decode = export_inference(onnx.load(str(DATA / "gpt2_decode.onnx"), load_external_data=False))
    assert {k: decode[k] for k in ("phase", "batch", "tokens", "context", "layers")} == {
        "phase": "decode",
        "batch": 1,
        "tokens": 1,
        "context": 127,
        "layers": 2,
    }
    prefill = export_inference(onnx.load(str(DATA / "bert_base.onnx"), load_external_data=False))
    assert (prefill["phase"], prefill["tokens"], prefill["context"]) == ("prefill", 128, 0)


def test_convolutional_networks_read_with_all_operators():
    layers = read_onnx(REPO / "inputs" / "workload" / "resnet18.onnx", operators="all")
    kinds = [n.get("vector_op") or n["operator_type"] for n in layers]
    assert (
        kinds.count("Conv"),
        kinds.count("Pooling"),
        kinds.count("max"),
        kinds.count("add"),
    ) == (20, 2, 17, 8)
    assert [n["id"] for n in layers] == list(range(len(layers)))
    assert all(src <= n["id"] for n in layers for src in n["operand_source"].values())


def test_matrix_products_cost_the_same_with_all_operators():
    """On an accelerator with a vector unit, the decode step's Gemm/MatMul layers cost what the default
    import's cost, except those reading or writing a vector layer's operand on chip (they cost less,
    docs/models/per-token.md#intermediates-kept-on-chip); the vector layers add the vector unit's share."""

    from zigzag.api import run
    from zigzag.mapping_search.options import SearchOptions

    root = REPO
    inputs = (
        DATA / "gpt2_decode.onnx",
        root / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml",
        root / "inputs" / "mapping" / "flow_tpu_32x32.yaml",
    )
    # one latency model for both: auto would give the export read with every operator (an LLM
    # step) the bandwidth-conserving model and the default import (no step metadata) ZigZag's
    options = SearchOptions(lpf_limit=2, opt="energy", latency_model="zigzag")
    default = run(*inputs, options)
    everything = run(*inputs, options, operators="all")
    core = {id(a) for a in default.accelerators.values()}
    assert len(core) == 1  # without vector layers nothing stays on chip
    file_memories = [m.operands for m in next(iter(default.accelerators.values())).memories]
    on_chip = {  # layers reading or writing an operand on chip: searched on a trimmed copy
        i
        for i, a in everything.accelerators.items()
        if [m.operands for m in a.memories] != file_memories
    }
    products = [(layer, cost) for layer, cost in everything.layers if layer.vector_op is None]
    assert [layer.name for layer, _ in products] == [layer.name for layer, _ in default.layers]
    assert any(layer.id in on_chip for layer, _ in products)
    for (layer, cost), (_, alone) in zip(products, default.layers):
        if layer.id in on_chip:
            assert cost.energy_total <= alone.energy_total
        else:
            assert (cost.energy_total, cost.latency_total2) == (
                alone.energy_total,
                alone.latency_total2,
            )
    assert everything.total.vector_unit_energy > 0 and not everything.uncosted


@pytest.mark.parametrize(
    "model, heads, kv_heads",
    [("llama_tiny", 32, 4), ("mistral_small", 16, 4), ("qwen2_05b", 14, 2), ("llama_mqa", 8, 1)],
)
def test_real_grouped_query_exports_prefill_and_decode_agree(model, heads, kv_heads):
    """transformers exports prefill with repeat_kv and decode with the queries folded onto the kv heads: both
    give K/V products over the kv heads with a group loop; sdpa's key scale is folded into the query's (the
    product reads the keys as appended, the query through its scale)."""
    for step in ("prefill", "decode"):
        layers = load(f"{model}_{step}", operators="all", causal_blocks=0)
        products = [n for n in layers if "G" in n["loop_dims"]]
        assert len(products) == 4  # Q.K^T and P.V of 2 layers
        assert all(
            (loops(n)["H"], loops(n)["G"]) == (kv_heads, heads // kv_heads) for n in products
        )
        assert all(
            n["equation"].startswith("O[b][h][g][d][k]+=") and "W[b][h][c][k]" in n["equation"]
            for n in products
        )
        by_id = {n["id"]: n for n in layers}
        for product in products[::2]:  # the Q.K^T products
            query, key = (by_id[product["operand_source"][op]] for op in ("I", "W"))
            assert query["vector_op"] == "mul" and loops(query)["H"] == heads
            assert key.get("vector_op") != "mul"
        default = [n for n in load(f"{model}_{step}") if n["kind"] == "layer"]
        assert macs(layers) == macs(default)


def test_vector_layers_round_trip_through_workload_yaml(tmp_path):
    import yaml

    from zigzag.io.loaders import load_workload
    from zigzag.io.workload_export import workload_to_yaml

    mapping = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
    workload = load_workload(DATA / "gpt2_decode.onnx", mapping, operators="all")
    text = workload_to_yaml(workload)
    (tmp_path / "w.yaml").write_text(text)
    again = load_workload(tmp_path / "w.yaml", mapping)

    def specs(
        w,
    ):  # MatMul is written as Gemm (the YAML format's type), which picks the Gemm mapping entry
        return [
            {k: v for k, v in layer.to_spec().items() if k not in ("operator_type", "mapping")}
            for layer in w.layers
        ]

    assert specs(again) == specs(workload)
    assert [layer.operator_type for layer in again.layers if layer.vector_op] == [
        layer.operator_type for layer in workload.layers if layer.vector_op
    ]
    bad = yaml.safe_load(text)
    bad[1].pop("vector_op")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(InputError, match="vector_op"):
        load_workload(tmp_path / "bad.yaml", mapping)


def test_operator_model_workloads_carry_the_inference_step():
    from zigzag.io.loaders import load_workload
    from zigzag.workload.inference import Inference

    mapping = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
    decode = load_workload(DATA / "gpt2_decode.onnx", mapping, operators="all")
    assert decode.inference == Inference("gpt2_decode", "decode", 1, 1, 127, 2)
    assert (
        load_workload(DATA / "gpt2_decode.onnx", mapping).inference is None
    )  # ZigZag mode: as before
    cnn = REPO / "inputs" / "workload" / "resnet18.onnx"
    assert load_workload(cnn, mapping, operators="all").inference is None
