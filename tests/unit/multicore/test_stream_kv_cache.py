"""The KV cache of a decode step on the multi-core floor: one model with or without a vector unit.

The layers that read a decode step's ``Concat(past, new)`` fetch the past keys and values from
where the cache lives (DRAM), once, counted as ``dram_read_bits_kv_cache``; the new token comes
from the layer that computed it (a dependency); with a vector unit running ``copy`` the append is
a copy of the new token only. Hand counts on the exports of tests/data/stream_llm/.
"""

from __future__ import annotations

import json
import logging

import pytest

from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.inputs import HardwareFacts
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.traffic import dram_traffic_by_layer
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO

DATA = REPO / "tests/data/stream_llm"
HARDWARE = {
    "vector": (
        "inputs/stream/hardware/tpu_like_quad_core_vector.yaml",
        "inputs/stream/mapping/llm_vector_quad_core.yaml",
    ),
    "plain": (
        "inputs/stream/hardware/tpu_like_quad_core.yaml",
        "inputs/stream/mapping/llm_quad_core.yaml",
    ),
}
#: export -> blocks x (K, V) x KV heads x past tokens x head size x 8 bits
HAND_COUNTS = {
    "gpt2_decode": 2 * 2 * 12 * 127 * 64 * 8,
    "mistral_sw16_decode": 2 * 2 * 2 * 15 * 32 * 8,  # the kept window: Concat(Slice(past, 15), new)
    "llama_tiny_decode": 2
    * 2
    * 4
    * 127
    * 64
    * 8,  # 32 query heads share 4 KV heads: each read once
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("kv-cost-cache")


def _workload(export: str, kind: str):
    hardware, mapping = (REPO / f for f in HARDWARE[kind])
    facts = HardwareFacts.of(load_multicore_accelerator(hardware))
    return read_stream_workload(
        DATA / f"{export}.onnx",
        load_stream_mapping(mapping),
        check_entries=False,
        vector_classes=facts.vector_classes,
        vector_memory_bits=facts.vector_memory_bits,
    )


@pytest.mark.parametrize("kind", ["vector", "plain"])
@pytest.mark.parametrize("mode", ["lbl", "fused"])
@pytest.mark.parametrize("export", sorted(HAND_COUNTS))
def test_the_past_cache_crosses_the_dram_link_once(export, mode, kind, cache, tmp_path):
    """The step reads exactly the past cache from DRAM (the hand count), with or without a vector
    unit, layer by layer and fused; the parts of the DRAM reads add up to the total."""
    logging.disable(logging.WARNING)
    try:
        hardware, mapping = (REPO / f for f in HARDWARE[kind])
        result = run_stream(
            hardware, DATA / f"{export}.onnx", mapping, mode, cache=cache, output=tmp_path
        )
    finally:
        logging.disable(logging.NOTSET)
    summary = json.loads((tmp_path / "summary.json").read_text())
    tokens = summary["per_token"]
    assert tokens["dram_read_bits_kv_cache"] == HAND_COUNTS[export]
    parts = sum(tokens[f"dram_read_bits_{role}"] for role in ("weights", "kv_cache", "activations"))
    assert parts == pytest.approx(summary["dram_read_bits"])
    traffic = dram_traffic_by_layer(result)
    workload = _workload(export, kind)
    fetched = sum(
        traffic.get(layer.id, {}).get("constants", 0)
        for layer in workload.layers
        if layer.cache_operands
    )
    assert fetched >= HAND_COUNTS[export]


@pytest.mark.parametrize("kind", ["vector", "plain"])
def test_the_new_token_is_a_dependency_and_the_append_copies_only_it(kind):
    """Each of the four K/V Concats of GPT-2 decode has one reader whose cache operand also has the
    new token's producer as its source (the products cannot run before it); with a vector unit the
    append is a `copy` of the one new token (12 heads x 64), a sink written to DRAM."""
    workload = _workload("gpt2_decode", kind)
    readers = [layer for layer in workload.layers if layer.cache_operands]
    assert len(readers) == 4
    for layer in readers:
        ((op, share, dim, past, total),) = layer.cache_operands
        assert op in layer.input_operand_source and (past, total) == (127, 128) and dim
        assert share == pytest.approx(127 / 128)
    appends = [layer for layer in workload.layers if layer.type == "cache_append"]
    if kind == "plain":
        assert not appends
    else:
        assert len(appends) == 4 and all(
            layer.sizes == {"B": 1, "H": 12, "D": 1, "K": 64} for layer in appends
        )
        assert not any(src in {layer.id for layer in appends} for src, _ in workload.edges)  # sinks


@pytest.mark.parametrize("export", ["llama_tiny_decode", "gpt2_decode"])
def test_the_keys_are_read_by_the_product_not_scaled_in_the_cache(export):
    """sdpa scales the queries and the keys; on a vector core the key scale is folded into the query's
    (scaling the keys would read and rewrite the whole cache every step): the layers reading the cache are
    the attention products, and the key scale is a folded node (no core, no cost, not a bypass)."""
    workload = _workload(export, "vector")
    readers = [layer for layer in workload.layers if layer.cache_operands]
    assert len(readers) == 4 and all(layer.op_type == "MatMul" for layer in readers)
    folded = [node for node in workload.nodes.values() if getattr(node, "attrs", {}).get("folded")]
    assert len(folded) == 2 and all(node.op_type == "Mul" for node in folded)
