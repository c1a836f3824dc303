"""What the top memories hold over time: the stored bits of every memory split into weights, KV
cache and activations (``schedule_trace.json``'s ``role_bits``), adding up to the usage timeline,
and drawn stacked in the memory-usage picture."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from zigzag.multicore.plots.charts import memory_usage_png
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.trace import load_trace, trace_from_result
from support import REPO

HARDWARE = REPO / "inputs/stream/hardware"
MAPPING = REPO / "inputs/stream/mapping"
LLM = REPO / "tests/data/stream_llm"
SMALL = REPO / "tests/data/reference/stream/small"


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _gpt2_decode(mode: str, tmp_path, vector: bool = True):
    hardware, mapping = (
        ("tpu_like_quad_core_vector", "llm_vector_quad_core")
        if vector
        else ("tpu_like_quad_core", "llm_quad_core")
    )
    return run_stream(
        HARDWARE / f"{hardware}.yaml",
        LLM / "gpt2_decode.onnx",
        MAPPING / f"{mapping}.yaml",
        mode,
        cache=tmp_path / "cache",
        output=tmp_path / "run",
    )


def _usage_at(memory, times):
    index = np.searchsorted(memory.time, times, side="right") - 1
    return np.where(index >= 0, memory.bits[np.maximum(index, 0)], 0)


@pytest.mark.parametrize("mode", ["lbl", "fused"])
@pytest.mark.parametrize("vector", [True, False], ids=["vector-unit", "no-vector-unit"])
def test_the_roles_add_up_to_the_usage_and_the_cache_is_its_own_data(mode, vector, tmp_path):
    trace = trace_from_result(_gpt2_decode(mode, tmp_path, vector))
    for memory in trace.memories:
        total = sum(memory.role_bits.values())
        assert np.array_equal(total, _usage_at(memory, memory.role_time)), memory.label
    dram = next(m for m in trace.memories if m.offchip)
    # the GPT-2 decode export: 2 blocks x (K, V) x 12 heads x 127 past tokens x 64 x 8 bits in DRAM
    assert dram.role_bits["kv_cache"].max() == 2 * 2 * 12 * 127 * 64 * 8
    onchip = [m for m in trace.memories if not m.offchip]
    assert (
        max(m.role_bits["kv_cache"].max(initial=0) for m in onchip) > 0
    )  # cache tiles brought to cores
    assert max(m.role_bits["weights"].max(initial=0) for m in onchip) > 0


def test_a_cnn_holds_no_kv_cache_and_the_trace_file_keeps_the_roles(tmp_path):
    result = run_stream(
        SMALL / "dual_testing_core_offchip_v2.yaml",
        SMALL / "small_3conv.onnx",
        SMALL / "mapping_plain.yaml",
        "lbl",
        cache=tmp_path / "cache",
        output=tmp_path / "run",
    )
    loaded = load_trace(tmp_path / "run")
    for memory, direct in zip(loaded.memories, trace_from_result(result).memories):
        assert not memory.role_bits["kv_cache"].any()
        assert memory.role_bits.keys() == direct.role_bits.keys()
        assert all(
            np.array_equal(memory.role_bits[r], direct.role_bits[r]) for r in direct.role_bits
        )
    assert any(m.role_bits["weights"].any() for m in loaded.memories)


def test_the_memory_picture_stacks_the_roles(tmp_path):
    trace = trace_from_result(_gpt2_decode("lbl", tmp_path))
    picture = memory_usage_png(trace, tmp_path / "memory.png")
    assert picture.stat().st_size > 10_000
