"""The newer decoder families from their published config.json (tests/data/llm/families, README there):
figures equal to hand counts, experts at batch B, latent attention's two forms, warnings for what is not
modelled, and one-line errors for bad keys."""

from __future__ import annotations

import json
import logging
import math

import pytest

from zigzag.errors import InputError
from zigzag.io.llm_workloads import load_model_config
from zigzag.workload.llm import (
    build_layer_specs,
    distinct_experts,
    parameters,
    step_figures,
)
from zigzag.workload.llm.config import config_from_hf
from support import TESTS

FAMILIES = TESTS / "data" / "llm" / "families"
CONTEXT = 4096
#: the models that attend fewer than 4,097 positions are counted at their last context
CONTEXTS = {"falcon_7b": 2047, "pythia_1.4b": 2047, "phi3_mini_4k": 4095, "olmo2_7b": 4095}

# By hand (docs/models/operators.md#hand-counts, the arithmetic written out there): parameters, matrix MACs of
# one decoded token after 4096 cached tokens (CONTEXTS: fewer) at batch 1, weight bytes read and
# KV-cache bytes (8-bit).
HAND = {
    "qwen3_8b": (8_190_735_360, 8_776_351_744, 7_568_409_856, 302_063_616),
    "gemma2_9b": (9_241_705_984, 10_650_558_464, 9_241_710_080, 704_729_088),
    "gemma3_1b": (999_885_952, 1_056_382_976, 999_887_616, 14_157_824),
    "phi3_mini_4k": (3_821_079_552, 4_124_835_840, 3_722_582_208, 402_456_576),
    "phi4": (14_659_507_200, 15_823_421_440, 14_145_710_336, 419_532_800),
    "olmo2_7b": (7_298_617_344, 7_960_788_992, 6_887_579_904, 1_073_741_824),
    "falcon_7b": (6_921_720_704, 7_517_011_968, 6_921_725_376, 8_388_608),
    "pythia_1.4b": (1_414_647_808, 1_512_308_736, 1_311_627_328, 201_326_592),
    "qwen3_30b_a3b": (30_532_122_624, 4_652_662_784, 3_041_870_080, 201_375_744),
    "deepseek_v3": (671_026_404_352, 71_429_038_080, 36_625_610_880, 143_952_192),
    "llama4_scout": (107_769_861_120, 18_151_669_760, 16_138_414_336, 402_751_488),
}
# the totals their model cards publish (billions; Gemma-3-27B's and Llama-4's text models only)
PUBLISHED = {
    "qwen3_8b": 8.19,
    "gemma2_9b": 9.24,
    "gemma3_1b": 1.0,
    "phi3_mini_4k": 3.82,
    "phi4": 14.7,
    "olmo2_7b": 7.30,
    "falcon_7b": 6.92,
    "pythia_1.4b": 1.41,
    "qwen3_30b_a3b": 30.5,
    "deepseek_v3": 671,
}


def decode(cfg, context=CONTEXT, **step):
    specs, _ = build_layer_specs(cfg, phase="decode", context=context, **step)
    return specs


@pytest.mark.parametrize("name", sorted(HAND))
def test_figures_equal_the_hand_counts(name):
    cfg = load_model_config(FAMILIES / f"{name}.config.json")
    figures = step_figures(decode(cfg, CONTEXTS.get(name, CONTEXT)))
    tool = (parameters(cfg), figures.macs, figures.weight_bytes, figures.kv_cache_bytes)
    for got, hand in zip(tool, HAND[name]):
        assert got == pytest.approx(hand, rel=0.01)
    if name in PUBLISHED:
        assert parameters(cfg) / 1e9 == pytest.approx(PUBLISHED[name], rel=0.01)


def test_each_family_reads_the_keys_that_shape_its_blocks():
    qwen3 = load_model_config(FAMILIES / "qwen3_8b.config.json")
    assert (qwen3.qk_norm, qwen3.head_dim, qwen3.sliding_window, qwen3.spans) == (
        "head",
        128,
        0,
        (),
    )
    gemma2 = load_model_config(FAMILIES / "gemma2_9b.config.json")
    assert gemma2.span(0) == ("sliding", 4096) and gemma2.span(1) == ("full", 0)
    assert (gemma2.attn_softcap, gemma2.final_softcap, gemma2.embed_scale) == (50.0, 30.0, True)
    assert (gemma2.norm_placement, gemma2.activation, gemma2.tie_embeddings) == (
        "sandwich",
        "gelu_pytorch_tanh",
        True,
    )
    gemma3 = load_model_config(FAMILIES / "gemma3_1b.config.json")
    assert [gemma3.span(i)[0] for i in range(6)] == ["sliding"] * 5 + ["full"]
    nested = load_model_config(FAMILIES / "gemma3_27b.config.json")
    assert (nested.model_type, nested.hidden, nested.layers, nested.head_dim, nested.vocab) == (
        "gemma3_text",
        5376,
        62,
        128,
        262208,
    )
    assert nested.span(0) == ("sliding", 1024)
    phi3 = load_model_config(FAMILIES / "phi3_mini_4k.config.json")
    assert (phi3.fused_qkv, phi3.fused_gate_up, phi3.sliding_window) == (True, True, 2047)
    olmo = load_model_config(FAMILIES / "olmo2_7b.config.json")
    assert (olmo.norm_placement, olmo.qk_norm) == ("post", "full")
    falcon = load_model_config(FAMILIES / "falcon_7b.config.json")
    assert (falcon.kv_heads, falcon.parallel, falcon.intermediate, falcon.norm) == (
        1,
        1,
        4 * 4544,
        "layernorm",
    )
    pythia = load_model_config(FAMILIES / "pythia_1.4b.config.json")
    assert (pythia.parallel, pythia.rotary_fraction, pythia.qkv_bias, pythia.mlp_bias) == (
        2,
        0.25,
        True,
        True,
    )
    deepseek = load_model_config(FAMILIES / "deepseek_v3.config.json")
    assert deepseek.moe_layers[:4] == (False, False, False, True) and sum(deepseek.moe_layers) == 58
    assert (deepseek.shared_intermediate, deepseek.router, deepseek.kv_lora_rank) == (
        2048,
        "sigmoid",
        512,
    )
    scout = load_model_config(FAMILIES / "llama4_scout.config.json")
    assert scout.rope_layers[:4] == (True, True, True, False)
    assert scout.span(0) == ("chunked", 8192) and scout.span(3) == ("full", 0)
    assert (scout.intermediate, scout.expert_intermediate, scout.shared_intermediate) == (
        16384,
        8192,
        8192,
    )


def test_layer_kinds_follow_the_structure():
    gemma2 = load_model_config(FAMILIES / "gemma2_9b.config.json").with_layers(2)
    names = [s["name"] for s in decode(gemma2)]
    assert any(n.endswith("softcap_tanh") for n in names)
    assert "final_softcap_tanh" in names and "embed_scale" in names
    assert sum("post_feedforward_layernorm" in n for n in names) > 0
    pythia = load_model_config(FAMILIES / "pythia_1.4b.config.json").with_layers(1)
    rotary = [s for s in decode(pythia, 2047) if s["name"].endswith("rotary_q/Mul")]
    assert dict(zip(rotary[0]["loop_dims"], rotary[0]["loop_sizes"]))["K"] == 32  # 25 % of 128


def test_chunked_attention_attends_the_keys_of_its_chunk():
    scout = load_model_config(FAMILIES / "llama4_scout.config.json").with_layers(4)

    def keys(context):
        specs, _ = build_layer_specs(scout, phase="decode", context=context)
        scores = [s for s in specs if s["name"].endswith("self_attn/MatMul")]
        return [dict(zip(s["loop_dims"], s["loop_sizes"]))["K"] for s in scores]

    # blocks 0-2 chunked (8192), block 3 global (no rotary)
    assert keys(10_000) == [10_000 % 8192 + 1] * 3 + [10_001]


def test_experts_at_batch_b():
    # uniform routing: E (1 - (1 - k/E)^B); Mixtral at batch 8 touches 7.2 of its 8 experts
    assert distinct_experts(8, 2, 8, "uniform") == pytest.approx(8 * (1 - 0.75**8))
    assert distinct_experts(8, 2, 8, "balanced") == 8
    assert distinct_experts(4, 1, 1, (1, 1, 0, 0)) == pytest.approx(1.0)
    mixtral = load_model_config("mixtral-8x7b").with_layers(1)
    expert_bytes = 3 * 4096 * 14336

    def expert_weights(batch, routing="uniform"):
        specs = decode(mixtral, batch=batch, routing=routing)
        experts = [s for s in specs if "/experts." in s["name"]]
        return step_figures(experts).weight_bytes, step_figures(experts).macs

    weights, macs = expert_weights(8)
    assert weights / expert_bytes == pytest.approx(8 * (1 - 0.75**8), rel=1e-3)  # 7.2 experts
    assert macs == pytest.approx(8 * 2 * expert_bytes, rel=1e-3)  # 16 token-expert pairs
    assert expert_weights(8, "balanced")[0] == 8 * expert_bytes
    assert expert_weights(1)[0] == 2 * expert_bytes
    # a skewed load: experts 0 and 1 take everything, so at most 2 are ever touched
    assert expert_weights(8, [1, 1, 0, 0, 0, 0, 0, 0])[0] == pytest.approx(2 * expert_bytes)


def test_a_128_expert_model_reads_more_experts_at_batch_64():
    cfg = load_model_config(FAMILIES / "qwen3_30b_a3b.config.json").with_layers(1)
    expert = 3 * 2048 * 768
    one = step_figures([s for s in decode(cfg) if "/experts." in s["name"]]).weight_bytes
    many = step_figures([s for s in decode(cfg, batch=64) if "/experts." in s["name"]]).weight_bytes
    assert one == 8 * expert
    assert many / expert == pytest.approx(128 * (1 - (1 - 8 / 128) ** 64), rel=1e-3)  # 123.7


def test_latent_attention_in_both_forms():
    cfg = load_model_config(FAMILIES / "deepseek_v3.config.json").with_layers(1)
    absorbed, naive = decode(cfg), decode(cfg, mla="naive")
    n = CONTEXT + 1
    attention = lambda specs: step_figures([s for s in specs if "/self_attn/" in s["name"]])  # noqa: E731
    a, b = attention(absorbed), attention(naive)
    assert a.kv_cache_bytes == b.kv_cache_bytes == (512 + 64) * n  # the latent, either way
    assert a.weight_bytes == b.weight_bytes  # the same up-projections, folded or not
    shared = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 128 * 128 * 7168
    assert a.macs == shared + 2 * 128 * 128 * 512 + 128 * 576 * n + 128 * n * 512
    # naive: the whole latent cache up-projected (512 -> 128 x 256), then 128 heads of 192 / 128
    assert b.macs == shared + n * 512 * 128 * 256 + 128 * 192 * n + 128 * n * 128


def test_unmodelled_and_foreign_keys_are_named(caplog):
    deepseek = json.loads((FAMILIES / "deepseek_v3.config.json").read_text())
    with caplog.at_level(logging.WARNING):
        config_from_hf(deepseek, "v3.json")
    assert "num_nextn_predict_layers" in caplog.text and "v3.json" in caplog.text
    caplog.clear()
    relabelled = json.loads((FAMILIES / "qwen3_30b_a3b.config.json").read_text())
    relabelled["model_type"] = "mixtral"
    with caplog.at_level(logging.WARNING):
        config_from_hf(relabelled, "moe.json")
    assert "num_experts" in caplog.text and "qwen3_moe" in caplog.text
    assert "not to model_type mixtral" in caplog.text


@pytest.mark.parametrize(
    ("name", "key", "value", "message"),
    [
        ("gemma2_9b", "layer_types", ["sliding_attention"], "one per block"),
        ("deepseek_v3", "scoring_func", "relu", "use sigmoid or softmax"),
        ("deepseek_v3", "first_k_dense_replace", -1, "at least 0"),
        ("qwen3_30b_a3b", "mlp_only_layers", [48], "from 0 to 47"),
        ("pythia_1.4b", "rotary_pct", 1.5, "at most 1"),
        ("falcon_7b", "multi_query", "yes", "true or false"),
        ("gemma2_9b", "attn_logit_softcapping", "big", "positive number"),
        ("qwen3_30b_a3b", "moe_intermediate_size", 0, "at least 1"),
    ],
)
def test_bad_keys_give_one_line(name, key, value, message):
    data = json.loads((FAMILIES / f"{name}.config.json").read_text()) | {key: value}
    with pytest.raises(InputError) as raised:
        config_from_hf(data, "c.json")
    assert str(raised.value).startswith(f"c.json: {key}:") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_nested_text_config_is_required():
    with pytest.raises(InputError, match="text_config: model_type llama4 keeps"):
        config_from_hf({"model_type": "llama4"}, "c.json")


def test_bad_routing_and_form_give_one_line():
    cfg = load_model_config("mixtral-8x7b")
    with pytest.raises(
        InputError, match="routing: must be one of uniform, balanced or a list of 8"
    ):
        build_layer_specs(cfg, phase="decode", context=8, routing=[1, 2])
    with pytest.raises(InputError, match="mla: unallowed value 'fast'"):
        build_layer_specs(cfg, phase="decode", context=8, mla="fast")


def test_macs_scale_with_blocks():
    cfg = load_model_config(FAMILIES / "qwen3_8b.config.json")
    one, two = (step_figures(decode(cfg.with_layers(n))).macs for n in (1, 2))
    block = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288  # q, o; k, v (8 x 128); the MLP
    assert two - one == block + 2 * 32 * 128 * (CONTEXT + 1)
    assert math.isclose(one, block + 2 * 32 * 128 * (CONTEXT + 1) + 4096 * 151936)


def test_an_llm_workload_takes_routing_and_the_latent_form():
    from zigzag.io.llm_workloads import llm_workload_specs

    document = {
        "llm": {"model": "mixtral-8x7b", "phase": "decode", "context": 8, "batch": 8, "layers": 1}
    }
    uniform, _ = llm_workload_specs(document)
    balanced, _ = llm_workload_specs({"llm": document["llm"] | {"routing": "balanced"}})

    def experts(specs):
        return len({s["name"].split("/")[2] for s in specs if "/experts." in s["name"]})

    assert (experts(uniform), experts(balanced)) == (8, 8)  # 7 whole experts and a slice; 8 whole
    assert step_figures(uniform).weight_bytes < step_figures(balanced).weight_bytes
    naive, _ = llm_workload_specs(
        {
            "llm": {
                "model": "deepseek-v3",
                "phase": "decode",
                "context": 8,
                "layers": 1,
                "mla": "naive",
            }
        }
    )
    assert any("kv_b_proj" in s["name"] for s in naive)
    with pytest.raises(
        InputError, match="llm.routing: unallowed value 'skewed'; use one of: uniform, balanced"
    ):
        llm_workload_specs({"llm": document["llm"] | {"routing": "skewed"}})
    with pytest.raises(
        InputError, match="routing: must be one of uniform, balanced or a list of 8 load shares"
    ):
        llm_workload_specs({"llm": document["llm"] | {"routing": [1, 2]}})
