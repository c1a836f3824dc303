"""The multi-core floor imports what the single-core floor imports (tests/data/llm/EXPORTS.md): the exports of the
families beyond attention decoders (ViT, Mamba with its 1-D depthwise convolution and weight-first time-step
product, T5's encoder and decoder step, Jamba), Phi-3 (whose rotary joins an empty pass-through half) and the
Qwen3-MoE prefill (expert weights gathered per token), with the
MACs of the single-core import (``operators="all"``, whole attention squares)."""

from __future__ import annotations

import math

import pytest

from zigzag.io.onnx_import import read_onnx
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO, TESTS

DATA = TESTS / "data" / "llm"
HARDWARE = REPO / "inputs" / "stream" / "hardware" / "tpu_like_quad_core.yaml"
MAPPING = REPO / "inputs" / "stream" / "mapping" / "llm_quad_core.yaml"
EXPORTS = [
    "vit_base",
    "mamba_130m_prefill",
    "t5_small_encoder",
    "t5_small_decode",
    "jamba_small_prefill",
    "phi3_mini_prefill",
    "phi3_mini_decode",
    "qwen3_moe_prefill",
    "qwen3_moe_decode",
]


@pytest.mark.parametrize("name", EXPORTS)
def test_import_keeps_the_single_core_macs(name):
    path = DATA / f"{name}.onnx"
    workload = read_stream_workload(path, load_stream_mapping(MAPPING))
    single = sum(
        math.prod(s["loop_sizes"])
        for s in read_onnx(path, operators="all", causal_blocks=0)
        if s["kind"] == "layer" and s.get("vector_op") is None
    )
    assert workload.mac_count() == single


@pytest.mark.slow
def test_phi3_prefill_schedules_on_the_floor(tmp_path):
    """Phi-3's rotary Concat with an empty second input used to stop the data propagation
    ('the data of layer 130 does not fit the other inputs of Concat node 131')."""
    result = run_stream(HARDWARE, DATA / "phi3_mini_prefill.onnx", MAPPING, "lbl")
    assert result.latency > 0 and result.energy > 0


@pytest.mark.slow
def test_moe_prefill_with_gathered_experts_schedules_on_the_floor():
    """The Qwen3-MoE prefill export, whose expert products take weights gathered per (token, expert) pair."""
    result = run_stream(HARDWARE, DATA / "qwen3_moe_prefill.onnx", MAPPING, "lbl")
    assert result.latency > 0 and result.energy > 0


def test_gathered_experts_are_fetched_once_each():
    """The Qwen3-MoE prefill gathers the weights of its 16 x 8 = 128 (token, expert) pairs; as on the
    single-core floor, 128 (1 - (1 - 8/128)^16) = 82.4 -> 82 distinct experts are read, once each: the
    gathered operand of each expert product is fetched where the weights live, share 82 / 128."""
    workload = read_stream_workload(DATA / "qwen3_moe_prefill.onnx", load_stream_mapping(MAPPING))
    products = [layer for layer in workload.layers if "/mlp/experts/MatMul" in layer.name]
    assert len(products) == 4
    assert {layer.cache_operands for layer in products} == {(("I", 82 / 128, "", 0, 0),)}


@pytest.mark.slow
def test_gathered_experts_dram_bits_are_the_distinct_experts():
    """Hand count: the up/gate product of a block reads 82 experts x 1,536 x 2,048 weights of 8 bits from
    DRAM (all 128 pairs' 3,221,225,472 bits before)."""
    from zigzag.multicore.schedule.problem import memory_operand_index
    from zigzag.multicore.schedule.traffic import streamed_dram_bits

    result = run_stream(HARDWARE, DATA / "qwen3_moe_prefill.onnx", MAPPING, "lbl")
    p = result.problem
    layer = next(
        layer.id
        for layer in read_stream_workload(
            DATA / "qwen3_moe_prefill.onnx", load_stream_mapping(MAPPING)
        ).layers
        if layer.name == "/m/model/layers.0/mlp/experts/MatMul"
    )
    i1 = memory_operand_index("I1")
    read = sum(
        bits
        for n in range(p.nb_cns)
        if int(p.layer[n]) == layer
        for m, bits, _ in streamed_dram_bits(p, n)
        if m == i1
    )
    assert read == pytest.approx(82 * 1536 * 2048 * 8, rel=1e-6)
    # expert weights, not a KV cache (a prefill has none): the DRAM-read split counts them as weights,
    # each block's up/gate and down products' distinct experts
    from zigzag.multicore.schedule.tokens import dram_reads_by_role

    reads = dram_reads_by_role(result)
    assert reads["kv_cache"] == 0 and reads["weights"] > 2 * (read + read / 2)  # up/gate, down
