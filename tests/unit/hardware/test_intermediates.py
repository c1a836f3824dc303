"""An LLM step's intermediates kept on chip between consecutive layers around the vector unit
(zigzag/hardware/intermediates.py, docs/models/per-token.md#intermediates-kept-on-chip)."""

from __future__ import annotations

import copy

import pytest
import yaml

from zigzag.hardware.intermediates import kept_tensors, on_chip_accelerators
from zigzag.hardware.vector import VECTOR_UNIT, compute_unit
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import build_workload, load_accelerator, load_mapping
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.network import evaluate_network, evaluated_layers
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search.options import SearchOptions
from support import REPO, TESTS

CONFIG = TESTS / "data/llm/llama_mqa.config.json"  # hidden 256, 8 heads, 1 kv head, vocab 1000
ACCELERATOR = REPO / "inputs/hardware/flow_tpu_32x32_vector.yaml"
MAPPING = REPO / "inputs/mapping/flow_tpu_32x32.yaml"
OPTIONS = SearchOptions(
    lpf_limit=3, nb_spatial_mappings_generated=1, latency_model="bandwidth_bound"
)


@pytest.fixture(scope="module")
def step():
    workload = build_workload(
        str(CONFIG), load_mapping(MAPPING), phase="decode", context=15, batch=2, layers=1
    )
    accelerator = load_accelerator(ACCELERATOR)
    return evaluated_layers(workload.layers, accelerator), accelerator, workload


def test_what_stays_on_chip(step):
    layers, accelerator, _ = step
    names = {layer.id: layer.name for layer in layers}
    by_id = {layer.id: layer for layer in layers}
    kept = kept_tensors(layers, accelerator)
    pairs = {(names[k.writer], names[k.reader]) for k in kept}
    # a norm feeding the projections, the softmax steps, P.V's input, the last norm into the head
    assert ("layers.0/self_attn/Softmax/Exp", "layers.0/self_attn/Softmax/ReduceSum") in pairs
    assert ("layers.0/self_attn/Softmax/Div", "layers.0/self_attn/MatMul_1") in pairs
    assert ("norm/Mul_1", "lm_head/MatMul") in pairs
    for k in kept:
        writer, reader = by_id[k.writer], by_id[k.reader]
        assert layers.index(reader) == layers.index(writer) + 1  # consecutive layers only
        assert k.memory == "unified_buffer" and k.bits <= 3 * 2**23  # it fits the 3 MiB buffer
        assert reader.operand_roles[k.operand] == "activation"  # never weights or the KV cache
        assert VECTOR_UNIT in {compute_unit(writer, accelerator), compute_unit(reader, accelerator)}


def test_readers_are_searched_without_the_dram_for_what_stays(step):
    layers, accelerator, _ = step
    accelerators, kept = on_chip_accelerators(layers, accelerator)
    by_id = {layer.id: layer for layer in layers}
    for k in kept:
        reader = by_id[k.reader]
        trimmed = accelerators[k.reader]
        assert trimmed.top_memory(reader.memory_operand(k.operand)).name == "unified_buffer"
        assert trimmed.memory["dram"].operands  # the DRAM still holds the rest
    # layers trimmed alike share one accelerator (identical blocks are searched once)
    assert len({id(a) for a in accelerators.values()}) < len(kept)
    untouched = {layer.id for layer in layers} - set().union(*({k.reader, k.writer} for k in kept))
    assert all(accelerators[i] is accelerator for i in untouched)


@pytest.mark.slow
def test_the_step_is_faster_and_reads_less_from_dram(step):
    """Each reader of an on-chip tensor costs no more than from the DRAM, and the step is faster."""
    layers, accelerator, workload = step
    result = evaluate_network(workload, accelerator, OPTIONS, show_progress=False)
    by_id = {layer.id: layer for layer in layers}
    kept = on_chip_accelerators(layers, accelerator)[1]
    results = {layer.id: r for layer, r in result.layers}
    for k in kept:
        assert "dram" not in results[k.reader].memory_names[k.operand]
    before = {
        layer.id: search_layer(layer, accelerator, OPTIONS, show_progress=False)[0]
        for layer in {by_id[k.reader] for k in kept}
    }
    for reader, full in before.items():
        assert results[reader].latency_total2 <= full.latency_total2
    saved = sum(full.latency_total2 - results[i].latency_total2 for i, full in before.items())
    assert saved > 0


def test_a_memory_the_vector_unit_shares_holds_one_instance_of_the_tensor():
    """On the Edge-TPU-like example with a vector unit reading its core SRAM (as the LLM tutorial builds
    it), the vector view sees one 32 KiB instance: a Llama-3-8B decode step's scores (32 heads x 4,097
    keys, 128 KiB) are read from DRAM, the norms' scalars stay."""
    document = yaml.safe_load((REPO / "inputs/hardware/flow_edgetpu_4x4x8x8.yaml").read_text())
    vector = yaml.safe_load(ACCELERATOR.read_text())["vector_unit"]
    document["vector_unit"] = {**copy.deepcopy(vector), "memories": ["core_sram", "dram"]}
    accelerator = accelerator_from_dict(validate_accelerator(document, "edgetpu_vector"))
    entries = load_mapping(REPO / "inputs/mapping/flow_edgetpu_4x4x8x8.yaml")
    workload = build_workload("llama-3-8b", entries, phase="decode", context=4096, layers=1)
    kept = kept_tensors(evaluated_layers(workload.layers, accelerator), accelerator)
    size = accelerator.memory["core_sram"].size
    assert kept and all(k.memory == "core_sram" and k.bits <= size for k in kept)
    names = {layer.id: layer.name for layer in workload.layers}
    assert not any("mask" in names[k.reader] for k in kept)
