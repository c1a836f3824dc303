"""The multi-core floor imports the exports of the families beyond attention decoders (ViT, Mamba with its 1-D
depthwise convolution and weight-first time-step product, T5's encoder and decoder step) with the MACs of the
single-core import (``operators="all"``; tests/data/llm/EXPORTS.md)."""

from __future__ import annotations

import math

import pytest

from zigzag.io.onnx_import import read_onnx
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.workload import read_stream_workload
from conftest import REPO, TESTS

DATA = TESTS / "data" / "llm"
MAPPING = REPO / "inputs" / "stream" / "mapping" / "llm_quad_core.yaml"


@pytest.mark.parametrize(
    "name", ["vit_base", "mamba_130m_prefill", "t5_small_encoder", "t5_small_decode"]
)
def test_import_keeps_the_single_core_macs(name):
    path = DATA / f"{name}.onnx"
    workload = read_stream_workload(path, load_stream_mapping(MAPPING))
    single = sum(
        math.prod(s["loop_sizes"])
        for s in read_onnx(path, operators="all")
        if s["kind"] == "layer" and s.get("vector_op") is None
    )
    assert workload.mac_count() == single
