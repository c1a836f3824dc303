"""Attention and the KV cache on the multi-core floor: the scores of a fused attention stay on-chip,
cache appends count one token, sliding-window caches, mixture-of-experts routing.

The exports are shapes-only copies described in tests/data/stream_llm/README.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.inputs import HardwareFacts
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.traffic import dram_traffic_by_layer
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO, TESTS

ROOT = REPO
DATA = TESTS / "data" / "stream_llm"
VECTOR = (
    ROOT / "inputs" / "stream" / "hardware" / "tpu_like_quad_core_vector.yaml",
    ROOT / "inputs" / "stream" / "mapping" / "llm_vector_quad_core.yaml",
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("llm-attention-cache")


def _vector_workload(name: str, mapping=VECTOR[1]):
    facts = HardwareFacts.of(load_multicore_accelerator(VECTOR[0]))
    mapping = mapping if not isinstance(mapping, Path) else load_stream_mapping(mapping)
    return read_stream_workload(
        DATA / f"{name}.onnx",
        mapping,
        vector_classes=facts.vector_classes,
        vector_memory_bits=facts.vector_memory_bits,
        check_entries=False,
    )


def _attention_of_block(name: str, block: str):
    """Layer ids of one block's attention, Q.K^T to P.V, and those holding scores (Q.K^T, the
    mask addition, the Softmax layers, the NaN guard after it)."""
    workload = _vector_workload(name)
    layers = [layer for layer in workload.layers if f"/{block}/" in layer.name]
    products = [
        layer.id for layer in layers if layer.op_type == "MatMul" and "attn/MatMul" in layer.name
    ]
    first, last = products[0], products[1]
    scores = [
        layer.id for layer in layers if first <= layer.id < last and "/Where" != layer.name[-6:]
    ]
    return tuple(range(first, last + 1)), scores


def _score_traffic(result, scores) -> float:
    """DRAM bits of the score tensors: written, read back or streamed (not the constants they use)."""
    traffic = dram_traffic_by_layer(result)
    return sum(
        traffic.get(layer, {}).get(kind, 0.0)
        for layer in scores
        for kind in ("written", "read_back", "streamed")
    )


@pytest.mark.slow
def test_a_fused_attention_stack_keeps_its_scores_on_chip(cache):
    """GPT-2 prefill (12 heads x 128 x 128 scores, 1.5 Mbit a block): layer by layer the scores
    leave the 1 Mbit vector core (evicted, read back); fused as one stack Q.K^T .. P.V they stay."""
    hardware, mapping = VECTOR
    stack, scores = _attention_of_block("gpt2_prefill_mask", "h.0")
    assert len(scores) >= 6  # Q.K^T, the mask Add, 4 Softmax layers (and the NaN guard when costed)
    lbl = run_stream(hardware, DATA / "gpt2_prefill_mask.onnx", mapping, "lbl", cache=cache)
    fused = run_stream(
        hardware, DATA / "gpt2_prefill_mask.onnx", mapping, "fused", [stack], cache=cache
    )
    assert (
        _score_traffic(lbl, scores) >= 12 * 128 * 128 * 8
    )  # at least one score tensor goes off-chip
    assert _score_traffic(fused, scores) == 0
    by_layer = dram_traffic_by_layer(fused)
    assert sum(sum(v.values()) for v in by_layer.values()) == pytest.approx(
        fused.dram_traffic()["traffic_bits"]
    )


@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_decode_scores_never_leave_the_chip(mode, cache):
    """A decode step's scores (one query row against 128 keys) fit every core: no DRAM traffic."""
    hardware, mapping = VECTOR
    result = run_stream(hardware, DATA / "llama_tiny_decode.onnx", mapping, mode, cache=cache)
    for block in ("layers.0", "layers.1"):
        _, scores = _attention_of_block("llama_tiny_decode", block)
        assert scores and _score_traffic(result, scores) == 0


def test_softmax_rows_take_the_default_row_cut():
    """Stream names a Softmax layer's rows K (C the reduced axis): a vector Softmax layer under the
    default entry takes its row cut (D, 4) on K, so that fused mode cuts scores in row blocks."""
    workload = _vector_workload("gpt2_prefill_mask")
    softmax = [layer for layer in workload.layers if layer.op_type == "Softmax"]
    assert softmax and all(layer.mapping.intra_core_tiling == (("K", 4),) for layer in softmax)


def test_mixture_of_experts_routing_is_costed_on_the_vector_core(cache, caplog):
    """Mixtral decode: the router's TopK (2 of 4 experts, as 2 row-maximum passes) and the sums
    over the chosen experts (the last axis, and the experts axis of (token, expert, width)) are
    vector layers on core 5 with a cost; nothing in the data path is bypassed."""
    workload = _vector_workload("mixtral_small_decode")
    assert "bypassed" not in caplog.text
    topk = [layer for layer in workload.layers if layer.op_type == "TopK"]
    assert len(topk) == 2 and all(layer.sizes == {"D": 1, "K": 2, "C": 4} for layer in topk)
    sums = [layer for layer in workload.layers if layer.name.endswith("experts/ReduceSum")]
    assert [layer.layer.equation for layer in sums] == ["O[b][k]+=I[b][c][k]*W[]"] * 2
    assert all(layer.sizes == {"B": 1, "C": 2, "K": 512} for layer in sums)
    hardware, mapping = VECTOR
    result = run_stream(hardware, DATA / "mixtral_small_decode.onnx", mapping, "lbl", cache=cache)
    routed = {layer.id for layer in topk + sums}
    cns = [n for n in range(result.problem.nb_cns) if int(result.problem.layer[n]) in routed]
    assert len(cns) >= 4 and all(
        int(result.problem.core[n]) == 5 and result.problem.runtime[n] > 0 for n in cns
    )


def test_a_top_k_no_core_can_run_is_a_one_line_error():
    from zigzag.errors import InputError

    with pytest.raises(InputError) as caught:
        read_stream_workload(
            DATA / "mixtral_small_decode.onnx",
            load_stream_mapping(VECTOR[1]),
            check_entries=False,
            vector_classes={5: frozenset({"add", "mul", "copy"})},
        )
    text = str(caught.value)
    assert (
        "'/m/model/layers.0/mlp/gate/TopK' (TopK)" in text
        and "reduce_max" in text
        and "\n" not in text
    )


def test_top_k_is_in_the_single_core_operator_model_with_the_same_loops(caplog):
    """The operator model (single-core, ``operators="all"``) has TopK too: the same loops and class
    as the multi-core floor's layer, k x E comparisons a row."""
    import logging
    import math

    from zigzag.io.onnx_import import read_onnx
    from zigzag.mapping.entry import MappingEntry
    from zigzag.workload import operators as ops
    from zigzag.workload.workload import build_layer

    with caplog.at_level(logging.WARNING):
        layers = read_onnx(DATA / "mixtral_small_decode.onnx", operators="all")
    assert "TopK" not in caplog.text
    single = [layer for layer in layers if layer["operator_type"] == "TopK"]
    multi = [
        layer
        for layer in _vector_workload("mixtral_small_decode").layers
        if layer.op_type == "TopK"
    ]
    assert [dict(zip(n["loop_dims"], n["loop_sizes"])) for n in single] == [
        layer.sizes for layer in multi
    ]
    assert (
        {n["vector_op"] for n in single}
        == {layer.layer.vector_op for layer in multi}
        == {"reduce_max"}
    )
    layer = build_layer(ops.top_k(0, "router", {"D": 3, "K": 8}, 2), [MappingEntry(name="default")])
    assert layer.equation == "O[d][k]+=I[d][c]" and layer.total_macs == math.prod((3, 2, 8))
