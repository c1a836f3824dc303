"""Workloads from a model's configuration (zigzag.workload.llm): parsing, layers equal to the exports',
MAC counts by hand, mixtures of experts, the workload file. Data: tests/data/llm (EXPORTS.md says where
each file comes from)."""

from __future__ import annotations

import json
import math

import pytest

from zigzag.errors import InputError
from zigzag.io.loaders import build_workload, load_workload
from zigzag.io.onnx_import import read_onnx
from zigzag.io.llm_workloads import (
    catalogue_sources,
    compare_with_export,
    layer_key,
    llm_layer_specs,
    load_catalogue,
    load_model_config,
)
from zigzag.mapping.entry import MappingEntry
from zigzag.workload.footprint import footprint
from zigzag.workload.llm import Precision, Step, build_layer_specs, expert_loads
from support import REPO, TESTS

DATA = TESTS / "data" / "llm"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
GPT2 = DATA / "gpt2_2layers.config.json"
BERT = DATA / "bert_base_2layers.config.json"


def macs(specs: list[dict], where=lambda spec: True) -> int:
    return sum(math.prod(s["loop_sizes"]) for s in specs if s["kind"] == "layer" and where(s))


# ----- configurations -------------------------------------------------------------------------------
def test_hf_config_json_gives_the_published_widths():
    gpt2 = load_model_config(GPT2)
    assert (
        gpt2.hidden,
        gpt2.heads,
        gpt2.kv_heads,
        gpt2.head_dim,
        gpt2.intermediate,
        gpt2.vocab,
        gpt2.layers,
    ) == (768, 12, 12, 64, 3072, 50257, 2)
    assert (gpt2.norm, gpt2.activation, gpt2.head, gpt2.causal) == (
        "layernorm",
        "gelu_new",
        "lm",
        True,
    )
    bert = load_model_config(BERT)
    assert (bert.family, bert.head, bert.causal, bert.type_vocab, bert.activation) == (
        "bert",
        "pooler",
        False,
        2,
        "gelu",
    )
    llama = load_model_config(DATA / "llama_tiny.config.json")
    assert (llama.heads, llama.kv_heads, llama.head_dim, llama.intermediate, llama.norm) == (
        32,
        4,
        64,
        5632,
        "rmsnorm",
    )
    qwen = load_model_config(DATA / "qwen2_05b.config.json")
    assert (qwen.qkv_bias, qwen.out_bias, qwen.tie_embeddings, qwen.sliding_window) == (
        True,
        False,
        True,
        0,
    )


def test_catalogue_names_sources_and_values():
    catalogue = load_catalogue()
    for name in (
        "gpt2",
        "bert-base",
        "llama-3-8b",
        "llama-3-70b",
        "mistral-7b",
        "mixtral-8x7b",
        "qwen2.5-7b",
    ):
        assert name in catalogue and "config.json" in catalogue_sources()[name]
    llama = load_model_config("Llama-3-8B")  # names are case-insensitive
    assert (
        llama.hidden,
        llama.heads,
        llama.kv_heads,
        llama.intermediate,
        llama.vocab,
        llama.layers,
    ) == (4096, 32, 8, 14336, 128256, 32)
    mixtral = catalogue["mixtral-8x7b"]
    assert (mixtral.experts, mixtral.experts_per_token) == (8, 2)


def test_the_builder_takes_a_configuration_or_its_keys():
    """``zigzag.workload.llm`` builds from a ModelConfig or a mapping of keys (no file read); the io module
    resolves names and paths to the same layers."""
    keys = json.loads((DATA / "llama_tiny.config.json").read_text())
    by_keys, _ = build_layer_specs(keys, phase="decode", context=7)
    by_config, _ = build_layer_specs(
        load_model_config(DATA / "llama_tiny.config.json"), phase="decode", context=7
    )
    by_path, _ = llm_layer_specs(DATA / "llama_tiny.config.json", phase="decode", context=7)
    assert (
        [layer_key(s) for s in by_keys]
        == [layer_key(s) for s in by_config]
        == [layer_key(s) for s in by_path]
    )


def test_yaml_configuration_with_hugging_face_keys(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(
        "model_type: llama\nhidden_size: 256\nintermediate_size: 512\nnum_attention_heads: 8\n"
        "num_key_value_heads: 2\nnum_hidden_layers: 3\nvocab_size: 1000\n"
    )
    cfg = load_model_config(str(path))
    assert (cfg.name, cfg.hidden, cfg.head_dim, cfg.kv_heads, cfg.layers) == (
        "small",
        256,
        32,
        2,
        3,
    )


@pytest.mark.parametrize(
    "content, where, what",
    [
        ({"model_type": "rwkv"}, "model_type", "supported model types"),
        (
            {"model_type": "llama", "hidden_size": 64},
            "num_hidden_layers",
            "required key is missing",
        ),
        (
            {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 1,
                "num_attention_heads": 6,
                "num_key_value_heads": 4,
                "intermediate_size": 8,
                "vocab_size": 10,
            },
            "num_key_value_heads",
            "multiple",
        ),
        (
            {
                "model_type": "gpt2",
                "n_embd": 64,
                "n_layer": 1,
                "n_head": 4,
                "vocab_size": 10,
                "n_emdb": 3,
            },
            "n_emdb",
            "unknown key",
        ),
        (
            {"model_type": "gpt2", "n_embd": "64", "n_layer": 1, "n_head": 4, "vocab_size": 10},
            "n_embd",
            "whole number",
        ),
    ],
)
def test_bad_configuration_is_one_line_naming_the_field(content, where, what):
    with pytest.raises(InputError) as info:
        load_model_config(content, file="w.llm.yaml", where="llm.model")
    message = str(info.value)
    assert "\n" not in message and f"llm.model.{where}" in message and what in message


def test_unknown_name_and_bad_json(tmp_path):
    with pytest.raises(InputError, match="catalogue names: .*llama-3-8b"):
        load_model_config("llama-4")
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="config.json: is not valid JSON"):
        load_model_config(bad)


# ----- generated layers == the exports' ---------------------------------------------------------------
EXPORTS = [
    ("gpt2_prefill_mask.onnx", GPT2, {"phase": "prefill", "tokens": 128}),
    ("gpt2_prefill_mask_op17.onnx", GPT2, {"phase": "prefill", "tokens": 128}),
    ("gpt2_decode.onnx", GPT2, {"phase": "decode", "context": 127}),
    ("bert_base.onnx", BERT, {"phase": "prefill", "tokens": 128}),
    (
        "llama_tiny_prefill.onnx",
        DATA / "llama_tiny.config.json",
        {"phase": "prefill", "tokens": 128},
    ),
    (
        "llama_tiny_decode.onnx",
        DATA / "llama_tiny.config.json",
        {"phase": "decode", "context": 127},
    ),
    ("qwen2_05b_prefill.onnx", DATA / "qwen2_05b.config.json", {"phase": "prefill", "tokens": 128}),
    ("qwen2_05b_decode.onnx", DATA / "qwen2_05b.config.json", {"phase": "decode", "context": 127}),
    (
        "mistral_small_prefill.onnx",
        DATA / "mistral_small.config.json",
        {"phase": "prefill", "tokens": 128},
    ),
    (
        "llama_mha_bias_prefill.onnx",
        DATA / "llama_mha_bias.config.json",
        {"phase": "prefill", "tokens": 128},
    ),
    (
        "llama_mha_bias_decode.onnx",
        DATA / "llama_mha_bias.config.json",
        {"phase": "decode", "context": 127},
    ),
    (
        "llama_headdim_tied_prefill.onnx",
        DATA / "llama_headdim_tied.config.json",
        {"phase": "prefill", "tokens": 128},
    ),
    (
        "llama_headdim_tied_decode.onnx",
        DATA / "llama_headdim_tied.config.json",
        {"phase": "decode", "context": 127},
    ),
    (
        "llama_b2_prefill.onnx",
        DATA / "llama_headdim_tied.config.json",
        {"phase": "prefill", "tokens": 32, "batch": 2},
    ),
    (
        "llama_b2_decode.onnx",
        DATA / "llama_headdim_tied.config.json",
        {"phase": "decode", "context": 31, "batch": 2},
    ),
    ("gpt2_b2_decode.onnx", GPT2, {"phase": "decode", "context": 31, "batch": 2}),
    ("bert_b2.onnx", BERT, {"phase": "prefill", "tokens": 32, "batch": 2}),
    (
        "mistral_small_decode.onnx",
        DATA / "mistral_small.config.json",
        {"phase": "decode", "context": 127},
    ),
    (
        "gpt2_inner_prefill.onnx",
        DATA / "gpt2_inner.config.json",
        {"phase": "prefill", "tokens": 128},
    ),
    (
        "bert_small_prefill.onnx",
        DATA / "bert_small.config.json",
        {"phase": "prefill", "tokens": 64},
    ),
    ("llama_mqa_prefill.onnx", DATA / "llama_mqa.config.json", {"phase": "prefill", "tokens": 16}),
    ("llama_mqa_decode.onnx", DATA / "llama_mqa.config.json", {"phase": "decode", "context": 15}),
    (
        "mistral_sw16_prefill.onnx",
        DATA / "mistral_sw16.config.json",
        {"phase": "prefill", "tokens": 32},
    ),
    (
        "mistral_sw16_decode.onnx",
        DATA / "mistral_sw16.config.json",
        {"phase": "decode", "context": 31},
    ),
    ("bert_mlm_prefill.onnx", DATA / "bert_mlm.config.json", {"phase": "prefill", "tokens": 16}),
    ("gpt2_gelu_prefill.onnx", DATA / "gpt2_gelu.config.json", {"phase": "prefill", "tokens": 16}),
]


@pytest.mark.parametrize("export, config, step", EXPORTS, ids=[e[0] for e in EXPORTS])
def test_generated_layers_equal_the_export_layer_for_layer(export, config, step):
    imported = [s for s in read_onnx(DATA / export, operators="all") if s["kind"] == "layer"]
    generated, inference = llm_layer_specs(config, **step)
    assert [layer_key(s) for s in generated] == [layer_key(s) for s in imported]
    assert macs(generated) == macs(imported)
    assert (inference.phase, inference.batch, inference.layers) == (
        step["phase"],
        step.get("batch", 1),
        2,
    )


def test_compare_with_export_reads_the_step_from_the_export():
    assert (
        compare_with_export(DATA / "llama_b2_decode.onnx", DATA / "llama_headdim_tied.config.json")
        == []
    )
    assert compare_with_export(DATA / "bert_base.onnx", BERT) == []
    problems = compare_with_export(
        DATA / "gpt2_decode.onnx", GPT2, context=100
    )  # not the export's step
    assert problems and all(p.startswith("layer ") for p in problems)


@pytest.mark.parametrize("export, config, step", EXPORTS, ids=[e[0] for e in EXPORTS])
def test_matrix_products_equal_the_default_import(export, config, step):
    """With ``operators: zigzag`` the layers are the matrix products of the ZigZag-compatible import, layer for
    layer: the same operator, precisions and MACs, and the same loops except that attention over grouped-query
    heads is written with H = kv heads and G = query heads per kv head (the default import keeps the export's
    form)."""
    imported = [s for s in read_onnx(DATA / export) if s["kind"] == "layer"]
    generated = [
        s
        for s in llm_layer_specs(config, operators="zigzag", causal_blocks=0, **step)[0]
        if s["kind"] == "layer"
    ]
    assert len(generated) == len(imported)
    for gen, imp in zip(generated, imported):
        assert (gen["operator_type"], gen["operand_precision"], math.prod(gen["loop_sizes"])) == (
            imp["operator_type"],
            imp["operand_precision"],
            math.prod(imp["loop_sizes"]),
        )
        if "G" not in gen["loop_dims"]:
            assert dict(zip(gen["loop_dims"], gen["loop_sizes"])) == dict(
                zip(imp["loop_dims"], imp["loop_sizes"])
            )


@pytest.mark.parametrize(
    "phase, step",
    [
        ("prefill", {"phase": "prefill", "tokens": 128}),
        ("decode", {"phase": "decode", "context": 127}),
    ],
)
def test_mixture_of_experts_against_its_export(phase, step):
    """The Mixtral-style export gathers every (token, expert) pair's weights (transformers' batched_mm
    experts): its attention and router equal the generated ones layer for layer, its expert MACs in total."""
    imported = [
        s
        for s in read_onnx(DATA / f"mixtral_small_{phase}.onnx", operators="all")
        if s["kind"] == "layer"
    ]
    generated, _ = llm_layer_specs(DATA / "mixtral_small.config.json", **step)
    first = lambda specs: next(i for i, s in enumerate(specs) if "/mlp/" in s["name"])  # noqa: E731
    assert [layer_key(s) for s in generated[: first(generated)]] == [
        layer_key(s) for s in imported[: first(imported)]
    ]
    router = lambda specs: [layer_key(s) for s in specs if "/mlp/gate" in s["name"]]  # noqa: E731
    # per block: logits, 5 Softmax layers, TopK, ReduceSum, Div
    assert router(generated) == router(imported) and len(router(generated)) == 2 * 9
    experts = lambda s: "/experts" in s["name"] and s["operator_type"] == "MatMul"  # noqa: E731
    tokens = 128 if phase == "prefill" else 1
    # 2 blocks x tokens x top-2 experts x (gate, up, down) x width 512 x MLP 1024
    assert macs(generated, experts) == macs(imported, experts) == 2 * tokens * 2 * 3 * 512 * 1024


# ----- hand counts (shared/reference/llm README) ------------------------------------------------------
@pytest.mark.parametrize(
    "config, step, total, attention",
    [
        (GPT2, {"phase": "prefill", "tokens": 128}, 6_802_735_104, 50_331_648),
        (GPT2, {"phase": "decode", "context": 127}, 53_146_368, 393_216),
        (BERT, {"phase": "prefill", "tokens": 128}, 1_862_860_800, 50_331_648),
        # 2 x (S*d*3d + S*d*d + 2*S*d*inner + 2*heads*S*S*hd) + S*d*vocab, d 256, 4 heads of 64, inner 512, S 128
        (
            DATA / "gpt2_inner.config.json",
            {"phase": "prefill", "tokens": 128},
            183_762_944,
            16_777_216,
        ),
        # one kv head: 2 x (S*d*d + 2*S*d*hd + S*d*d + 2*heads*S*S*hd + 3*S*d*inter) + S*d*vocab, S 16, hd 32
        (DATA / "llama_mqa.config.json", {"phase": "prefill", "tokens": 16}, 21_659_648, 262_144),
        # decode after 31 tokens with a window of 16: the new token attends 16 keys (2 x 2 x 8 heads x 16 x 32)
        (DATA / "mistral_sw16.config.json", {"phase": "decode", "context": 31}, 1_386_496, 16_384),
    ],
)
def test_macs_equal_the_hand_counts(config, step, total, attention):
    specs, _ = llm_layer_specs(config, operators="zigzag", **step)
    assert macs(specs, lambda s: s["vector_op"] is None if "vector_op" in s else True) == total
    assert macs(specs, lambda s: "H" in s["loop_dims"]) == attention


def test_causal_prefill_counts_the_blocks_only():
    full = macs(
        llm_layer_specs(GPT2, phase="prefill", tokens=128, causal_blocks=0)[0],
        lambda s: "H" in s["loop_dims"] and s["operator_type"] == "MatMul",
    )
    blocked = macs(
        llm_layer_specs(GPT2, phase="prefill", tokens=128)[0],
        lambda s: "H" in s["loop_dims"] and s["operator_type"] == "MatMul",
    )
    # 8 blocks of 16 rows: keys 16, 32, ..., 128 -> (1+...+8)/8/8 of the full square
    assert blocked * 64 == full * 36


def test_last_logits_only():
    every, _ = llm_layer_specs(GPT2, phase="prefill", tokens=128)
    last, _ = llm_layer_specs(GPT2, phase="prefill", tokens=128, logits="last")

    def head(specs):
        return [
            dict(zip(s["loop_dims"], s["loop_sizes"]))
            for s in specs
            if s["name"] == "lm_head/MatMul"
        ]

    assert head(every) == [{"C": 768, "D": 128, "K": 50257, "B": 1}]
    assert head(last) == [{"C": 768, "D": 1, "K": 50257, "B": 1}]
    assert last[-2]["vector_op"] == "gather" and len(last) == len(every) + 1


def test_llama_3_8b_decode_hand_count():
    cfg = load_model_config("llama-3-8b")
    specs, inference = llm_layer_specs("llama-3-8b", phase="decode", context=4095, batch=1)
    d, kv, i, v, c = cfg.hidden, cfg.kv_heads * cfg.head_dim, cfg.intermediate, cfg.vocab, 4096
    per_layer = d * d * 2 + d * kv * 2 + 3 * d * i + 2 * cfg.heads * cfg.head_dim * c
    assert macs(specs, lambda s: "vector_op" not in s) == 32 * per_layer + d * v
    assert (inference.tokens, inference.context, inference.layers) == (1, 4095, 32)


@pytest.mark.slow
def test_llama_3_8b_decode_reads_the_kv_cache_once():
    """At batch 8 after 4,096 cached tokens the step's weight and KV-cache reads (what bounds it) are the
    hand count: the weights once, the cache once (K by Q.K^T, V by P.V) over the 4,097 positions; no layer
    scales the cached keys (issue 45: a scale_k layer read them a second time, 10.73 GB for 9.65 GB)."""
    cfg = load_model_config("llama-3-8b")
    workload = build_workload(
        "llama-3-8b",
        [
            MappingEntry.from_dict(
                {"name": "default", "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}}
            )
        ],
        phase="decode",
        context=4096,
        batch=8,
    )
    d, kv, i, b = cfg.hidden, cfg.kv_heads * cfg.head_dim, cfg.intermediate, 8
    block = 2 * d * d + 2 * d * kv + 3 * d * i + 2 * d  # projections, MLP, two RMSNorm scales
    # + lm_head, final norm, the 8 embedding rows, the rotary angles' cos and sin (one position, 128 wide)
    weights = 32 * block + d * cfg.vocab + d + b * d + 2 * cfg.head_dim
    cache = 32 * 2 * b * kv * 4097  # K and V of 32 blocks, 8 bits each
    fp = footprint(workload.layers)
    assert (fp.weights, fp.kv_read) == (weights, cache)
    assert fp.weights + fp.kv_read == 9_652_965_632  # 9.65 GB, not 10.73 GB
    assert not any("scale_k" in layer.name for layer in workload.layers)


def test_mixture_of_experts_counts_the_active_experts():
    cfg = load_model_config("mixtral-8x7b")
    decode, _ = llm_layer_specs(cfg, phase="decode", context=100, layers=1)
    expert = lambda s: "/experts." in s["name"] and "vector_op" not in s  # noqa: E731
    assert macs(decode, expert) == 2 * 3 * cfg.hidden * cfg.intermediate  # top-2 experts, 1 token
    assert len({s["name"].split("/experts.")[1].split("/")[0] for s in decode if expert(s)}) == 2
    prefill, _ = llm_layer_specs(cfg, phase="prefill", tokens=100, batch=3, layers=1)
    assert macs(prefill, expert) == 3 * 100 * 2 * 3 * cfg.hidden * cfg.intermediate
    assert expert_loads(cfg, Step(batch=3, tokens=100, past=0, precision=Precision())) == [75] * 8
    balanced = Step(batch=1, tokens=3, past=0, precision=Precision(), routing="balanced")
    assert expert_loads(cfg, balanced) == [1] * 6
    # uniform routing (the default): 3 tokens touch 8 (1 - 0.75^3) = 4.625 experts on average: 4 whole
    # ones and 5/8 of a fifth's width, its 3 rows as near the MACs of the 6 pairs as whole rows allow
    uniform = Step(batch=1, tokens=3, past=0, precision=Precision())
    assert expert_loads(cfg, uniform) == [1, 1, 1, 1, 3]
    router = [s for s in prefill if s["name"].endswith("gate/MatMul")]
    assert [dict(zip(r["loop_dims"], r["loop_sizes"])) for r in router] == [
        {"C": 4096, "D": 300, "K": 8}
    ]


def test_identical_blocks_have_identical_signatures():
    """Four blocks give no layer signature that one block does not: each distinct layer is searched once."""

    def signatures(blocks: int) -> set[str]:
        workload = load_workload(
            {"llm": {"model": "llama-3-8b", "phase": "decode", "context": 4095, "layers": blocks}},
            str(MAPPING),
        )
        return {json.dumps(layer.signature(), sort_keys=True) for layer in workload.layers}

    assert signatures(4) == signatures(1)


# ----- the workload file ------------------------------------------------------------------------------
def test_llm_yaml_workload_file(tmp_path):
    (tmp_path / "cfg.json").write_text(GPT2.read_text())
    path = tmp_path / "gpt2.llm.yaml"
    path.write_text("llm:\n  model: cfg.json\n  phase: decode\n  context: 127\n  precision: 4\n")
    workload = load_workload(str(path), str(MAPPING))
    assert workload.inference.to_dict() == {
        "model": "cfg",
        "phase": "decode",
        "batch": 1,
        "tokens": 1,
        "context": 127,
        "layers": 2,
    }
    gemm = next(layer for layer in workload.layers if layer.operator_type == "Gemm")
    assert gemm.precision == {"W": 4, "I": 4, "O_final": 4, "O": 8}


def test_llm_section_in_any_yaml_and_zigzag_operators(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(
        "llm: {model: gpt2, phase: prefill, tokens: 16, layers: 1, operators: zigzag}\n"
    )
    workload = load_workload(str(path), str(MAPPING))
    assert [layer.operator_type for layer in workload.layers] == [
        "Gemm",
        "MatMul",
        "MatMul",
        "Gemm",
        "Gemm",
        "Gemm",
        "MatMul",
    ]  # full attention, as the default import
    assert workload.inference.tokens == 16


@pytest.mark.parametrize(
    "section, where, what",
    [
        ({"model": "gpt2", "phase": "prefill"}, "llm.tokens", "add tokens"),
        (
            {"model": "gpt2", "phase": "decode", "context": 2000},
            "llm.context",
            "1024 learned positions",
        ),
        ({"model": "bert-base", "phase": "decode", "context": 10}, "llm.phase", "encoder"),
        ({"model": "gpt2", "phase": "prefil", "tokens": 3}, "llm.phase", "prefill, decode"),
        (
            {"model": "gpt2", "phase": "prefill", "tokens": 3, "batchsize": 2},
            "llm.batchsize",
            "unknown",
        ),
        ({"model": "gpt2", "phase": "decode", "context": 3, "tokens": 4}, "llm.tokens", "1 token"),
        (
            {"model": "gpt2", "phase": "prefill", "tokens": 3, "precision": {"weight": 4}},
            "llm.precision.weight",
            "",
        ),
        (
            {"model": {"model_type": "gpt2"}, "phase": "prefill", "tokens": 3},
            "llm.model.n_embd",
            "missing",
        ),
    ],
)
def test_bad_llm_section_is_one_line(tmp_path, section, where, what):
    path = tmp_path / "bad.llm.yaml"
    path.write_text(json.dumps({"llm": section}))
    with pytest.raises(InputError) as info:
        load_workload(str(path), str(MAPPING))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: {where}") and what in message


# ----- everywhere a workload is: the command line, the workflow's parse step ------------------------
TINY = (
    "llm:\n  model: {model_type: llama, hidden_size: 64, intermediate_size: 128, num_attention_heads: 4,\n"
    "          num_key_value_heads: 2, num_hidden_layers: 2, vocab_size: 100}\n"
    "  phase: decode\n  context: 31\n  batch: 2\n"
)
VECTOR_HW = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"


@pytest.mark.slow
def test_zigzag_run_takes_an_llm_workload(tmp_path, capsys):
    from zigzag.cli import main

    path = tmp_path / "tiny.llm.yaml"
    path.write_text(TINY)
    assert (
        main(
            [
                "run",
                "--workload",
                str(path),
                "--accelerator",
                str(VECTOR_HW),
                "--mapping",
                str(MAPPING),
                "--output",
                str(tmp_path / "out"),
                "--lpf-limit",
                "4",
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "layers.1/self_attn/MatMul" in printed and "lm_head/MatMul" in printed
    assert (tmp_path / "out" / "summary.json").exists()


def test_parse_step_keeps_the_inference_metadata(tmp_path):
    from zigzag.io.llm_workloads import model_files
    from zigzag.steps.parse import parse_workload, parsed_workload

    (tmp_path / "m.json").write_text(GPT2.read_text())
    path = tmp_path / "gpt2.llm.yaml"
    path.write_text("llm: {model: m.json, phase: prefill, tokens: 8, layers: 1}\n")
    assert model_files(path) == [str(tmp_path / "m.json")]
    assert (
        model_files(DATA / "gpt2_decode.onnx") == []
        and model_files(tmp_path / "missing.llm.yaml") == []
    )
    document = parse_workload(str(path), str(MAPPING), tmp_path / "w.json")
    assert document["inference"] == {
        "model": "m",
        "phase": "prefill",
        "batch": 1,
        "tokens": 8,
        "context": 0,
        "layers": 1,
    }
    workload = parsed_workload(document)
    assert workload.inference.tokens == 8 and len(workload.layers) == len(
        load_workload(str(path), str(MAPPING)).layers
    )


def test_identical_layers_share_one_search_and_results_equal_a_fresh_evaluation(tmp_path):
    """Blocks with the same shapes are searched once; each layer's result is the one ``LayerCostResult.of``
    gives it; a context sweep keeping the searches (``memo``) searches only what the context changes."""
    import dataclasses

    from zigzag.cost.layer_result import LayerCostResult
    from zigzag.io.loaders import load_accelerator, load_mapping
    from zigzag.mapping_search.jobs import signature_text
    from zigzag.mapping_search.network import evaluate_network
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.io.loaders import build_workload

    accelerator = load_accelerator(VECTOR_HW)
    entries = load_mapping(MAPPING)
    options = SearchOptions(lpf_limit=3)
    model = {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_hidden_layers": 3,
        "vocab_size": 100,
    }
    memo: dict = {}
    result = evaluate_network(
        build_workload(model, entries, phase="decode", context=15), accelerator, options, memo=memo
    )
    per_block = sum(1 for layer, _ in result.layers if layer.name.startswith("layers.0/"))
    assert len(result.layers) > 3 * per_block and len(memo) < per_block + 12
    for layer, cost in result.layers:
        on = result.accelerators[layer.id]  # the core, or a copy keeping an operand on chip
        searched = memo[signature_text(layer), id(on)]
        fresh = LayerCostResult.of(
            dataclasses.replace(searched, layer_id=layer.id, layer_name=layer.name), layer, on
        )
        assert cost == fresh and (cost.layer_id, cost.layer.name) == (layer.id, layer.name)
        assert (
            cost.layer.mapping.to_dict() == fresh.layer.mapping.to_dict()
            and cost.accelerator is fresh.accelerator
        )
    searched = len(memo)
    longer = evaluate_network(
        build_workload(model, entries, phase="decode", context=31), accelerator, options, memo=memo
    )
    changed = {json.dumps(layer.signature(), sort_keys=True) for layer, _ in longer.layers} - {
        json.dumps(layer.signature(), sort_keys=True) for layer, _ in result.layers
    }
    assert len(memo) - searched == len(changed) > 0
    assert all(
        "self_attn" in layer.name
        for layer, _ in longer.layers
        if json.dumps(layer.signature(), sort_keys=True) in changed
    )


@pytest.mark.parametrize(
    "source, options",
    [
        ("decode.llm.yaml", []),
        ("mistral_sw16_decode.onnx", ["--operators", "all"]),
        ("gpt2_inner_prefill.onnx", ["--operators", "all"]),
    ],
)
def test_export_workload_round_trips_vector_layers(tmp_path, source, options):
    """``zigzag export-workload`` keeps every layer's operation class and operand roles (KV-cache appends,
    attention over the cache, weights): loading the written YAML gives the same layers (MatMul written as Gemm,
    the YAML format's type)."""
    from zigzag.cli import main

    if source.endswith(".llm.yaml"):
        (tmp_path / source).write_text(
            f"llm:\n  model: {DATA / 'mistral_sw16.config.json'}\n  phase: decode\n  context: 40\n"
        )
        path, kw = tmp_path / source, {}
    else:
        path, kw = DATA / source, {"operators": "all"}
    out = tmp_path / "out.yaml"
    assert (
        main(
            [
                "export-workload",
                str(path),
                "--mapping",
                str(MAPPING),
                "--output",
                str(out),
                *options,
            ]
        )
        == 0
    )
    original, again = load_workload(path, MAPPING, **kw), load_workload(out, MAPPING)

    def specs(workload):
        return [
            {k: v for k, v in layer.to_spec().items() if k not in ("operator_type", "mapping")}
            for layer in workload.layers
        ]

    assert specs(again) == specs(original)
    assert [(layer.vector_op, layer.operand_roles) for layer in again.layers] == [
        (layer.vector_op, layer.operand_roles) for layer in original.layers
    ]
    assert any(layer.vector_op for layer in again.layers)
    if "decode" in source:
        assert (
            sum(
                layer.vector_op == "copy" and layer.operand_roles["O"] == "kv_cache"
                for layer in again.layers
            )
            == 4
        )
