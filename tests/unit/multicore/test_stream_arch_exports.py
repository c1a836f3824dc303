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
from zigzag.multicore.schedule.run import run_stream
from zigzag.multicore.workload import read_stream_workload
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
