"""Siblings (zigzag/mapping_search/batched/siblings.py): variants of one structure, apart in their
memories' sizes, ports' bandwidths and costs. Their latencies computed in one pass and their
winners re-derived from another sibling's scalar intermediates give the unshared path's figures,
bit for bit."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import yaml

from support import DATA, REPO
from support.sharing import assert_shared_as_alone, tpu32_mapping_entries
from zigzag.cost.model import analyse, evaluate
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops
from zigzag.mapping_search.batched import shared as shared_module
from zigzag.mapping_search.batched.candidates import ordering_chunks, temporal_mapping_of
from zigzag.mapping_search.batched.latency import LatencyMemo, batch_latency
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.mapping_search.batched.siblings import (
    TOLD,
    Siblings,
    document_memories,
    memory_set,
    sibling_sets,
    with_memories,
)
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings
from zigzag.sweep.config import read_sweep
from zigzag.sweep import runner
from zigzag.sweep.runner import evaluate_points, variants_of

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
KIB = 8 * 1024


def sibling_document(rng: random.Random, ub_kib: int = 1024, name: str = "sibling") -> dict:
    """The 32x32 example with ``ub_kib`` of unified buffer and random port bandwidths (each port of
    the buffer and the accumulators on its own, DRAM's word) and buffer energies."""
    document = yaml.safe_load(BASE.read_text())
    document["name"] = name
    memories = document["memories"]
    memories["unified_buffer"]["size"] = ub_kib * KIB
    for memory in ("unified_buffer", "accumulators"):
        for port in memories[memory]["ports"]:
            port["bandwidth_max"] = rng.choice([64, 128, 256, 512, 1024])
    word = rng.choice([64, 128])
    for port in memories["dram"]["ports"]:
        port["bandwidth_min"] = port["bandwidth_max"] = word
    cost = rng.choice([200.0, 1567.67])
    memories["unified_buffer"]["r_cost"] = memories["unified_buffer"]["w_cost"] = cost
    return document


def accelerator_of(document: dict):
    return accelerator_from_dict(validate_accelerator(document, document["name"]))


def candidates(layer, accelerator, lpf_limit=4):
    """The first chunk of allocated candidates of ``layer``'s first spatial mapping."""
    array_mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, accelerator)
    _, loops, assigner = candidate_loops(
        layer, accelerator, fractional, lpf_limit=lpf_limit, even=False
    )
    ids = next(ordering_chunks(loops, 8192))
    alive, cuts = assigner.assign(ids)
    return (
        array_mapping,
        fractional,
        integer,
        loops,
        ids[alive],
        {op: c[alive] for op, c in cuts.items()},
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("latency_model", ["zigzag", "bandwidth_bound"])
def test_sibling_latencies_in_one_pass_are_each_alone(seed, latency_model):
    """The first sibling computes every told sibling's latencies (other bandwidths, other sizes);
    each then takes its own, the latencies and exactness flags of its own model without the
    memo, bit for bit."""
    rng = random.Random(seed)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = [sibling_document(rng, name=f"v{k}") for k in range(4)]
    documents += [sibling_document(rng, 8, name=f"small{k}") for k in range(2)]
    accelerators = [accelerator_of(d) for d in documents]
    layer = layers[seed % len(layers)]
    _, fractional, integer, loops, ids, cuts = candidates(layer, accelerators[0])
    models = [
        BatchCostModel(layer, a, fractional, integer, loops, latency_model=latency_model)
        for a in accelerators
    ]
    moved = models[0].movements(ids, cuts, True)
    movement, movement_int, _ = moved
    memo = LatencyMemo()
    told = [document_memories(d) for d in documents]
    sets = sibling_sets(models[0], told)
    assert 2 < len(sets) <= 6 and memory_set(models[0]) in sets  # the distinct ones
    n = len(ids)
    for k, model in enumerate(models):
        alone = batch_latency(model, movement, movement_int, n)
        together = batch_latency(model, movement, movement_int, n, memo, sibling_sets(model, told))
        assert np.array_equal(alone[0], together[0]) and np.array_equal(alone[1], together[1])
        if k == 0:
            assert memo.taken == 0 and len(memo.values) == len(sets) - 1  # kept for the others
    assert memo.taken == len(sets) - 1
    assert not any(key[0] == "latency" for key in memo.values if isinstance(key, tuple))


def test_siblings_with_other_duties_or_missing_ports_are_left_out():
    rng = random.Random(5)
    document = sibling_document(rng)
    model_layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    accelerator = accelerator_of(document)
    _, fractional, integer, loops, _, _ = candidates(model_layer, accelerator)
    model = BatchCostModel(model_layer, accelerator, fractional, integer, loops)
    sizes, ports = document_memories(document)
    assert sibling_sets(model, [(sizes, ports)]) == [memory_set(model)]  # its own
    missing = {k: v for k, v in ports.items() if k[0] != "dram"}
    assert sibling_sets(model, [(sizes, missing)]) == []
    unsized = {k: v for k, v in sizes.items() if k != "dram"}
    assert sibling_sets(model, [(unsized, ports)]) == []
    silent = {**ports, ("unified_buffer", "r_port_1"): 0}
    assert sibling_sets(model, [(sizes, silent)]) == []
    faster = {**ports, ("unified_buffer", "r_port_1"): 4096}
    assert len(sibling_sets(model, [(sizes, faster), (sizes, faster)])) == 1
    smaller = {**sizes, "unified_buffer": 8 * KIB}
    assert len(sibling_sets(model, [(smaller, ports), (smaller, faster)])) == 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_winner_on_another_variant_equals_evaluate(seed):
    """A candidate's scalar detail on one variant, re-derived for another of the same structure
    (other bandwidths, costs, sizes), is the scalar model's result on that other, field by field."""
    rng = random.Random(seed)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    layer = layers[seed % len(layers)]
    first = accelerator_of(sibling_document(rng, name="first"))
    array_mapping, fractional, integer, loops, ids, cuts = candidates(layer, first)
    rows = random.Random(seed).sample(range(len(ids)), min(5, len(ids)))
    others = [accelerator_of(sibling_document(rng, name=f"other{k}")) for k in range(3)]
    others.append(accelerator_of(sibling_document(rng, 8, name="smaller")))  # other sizes too
    differ = buffered = 0
    for i in rows:
        temporal = temporal_mapping_of(loops, ids[i], {op: c[i].tolist() for op, c in cuts.items()})
        detail = analyse(
            layer, first, fractional, integer, temporal, spatial_mapping_array=array_mapping
        )
        memo = {}  # kept with the detail: the others of equal sizes or bandwidths take parts of it
        for other in others:
            expected = evaluate(
                layer, other, fractional, integer, temporal, spatial_mapping_array=array_mapping
            )
            derived = with_memories(detail, layer, other, array_mapping)
            assert derived == expected
            assert vars(derived) == vars(expected)  # a copy without __init__: every field, only
            for _ in range(2):  # computed into the memo, then taken from it
                assert vars(with_memories(detail, layer, other, array_mapping, memo)) == vars(
                    expected
                )
            differ += expected.latency_total2 != detail.result.latency_total2
            buffered += expected.double_buffer != detail.result.double_buffer
    assert differ > 0  # the bandwidths did change some latency
    assert buffered > 0, "the sizes changed no double buffering"


def _variants(seed: int) -> list[dict]:
    """Three buffer sizes (the smallest leaves some allocations) x random bandwidth sets (some
    repeated: cost siblings too)."""
    rng = random.Random(seed)
    documents = []
    for ub in (1024, 3072, 8):
        for k in range(3):
            documents.append(sibling_document(rng, ub, name=f"ub{ub}-{k}"))
    documents.append({**documents[0], "name": "again"})
    return documents


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_told_siblings_give_the_unshared_results(monkeypatch, caplog, seed):
    rederived = []
    original = shared_module.with_memories

    def counted(*args):
        rederived.append(args[2].name)
        return original(*args)

    monkeypatch.setattr(shared_module, "with_memories", counted)
    options = SearchOptions(lpf_limit=4)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = _variants(seed)
    shared = SharedCandidates()
    shared.expect(documents)
    for document in documents:
        accelerator = accelerator_of(document)
        for layer in layers:
            assert_shared_as_alone(shared, layer, accelerator, options)
    kept = [entry for tables in shared.allocations.tables.values() for t in tables for entry in t]
    assert sum(entry.latency.taken for entry in kept) > 0
    assert rederived  # some winner came from a sibling's scalar detail
    assert "differ" not in caplog.text  # no figure went back to the unshared path


def test_siblings_told_a_window_at_a_time_give_the_unshared_results(caplog):
    """A batch job tells its variants a window at a time (expect_only): each window's siblings
    replace the last ones, with what the structures derived from them, and every layer's
    result is still the unshared one."""
    options = SearchOptions(lpf_limit=4)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = _variants(1)
    shared = SharedCandidates()
    taken = 0
    for start in range(0, len(documents), 4):
        window = documents[start : start + 4]
        shared.expect_only(window)
        told = [t[:2] for group in shared.siblings.by_layout.values() for t in group]
        assert told and all(pair in [document_memories(d) for d in window] for pair in told)
        memos = shared.allocations._memos.values()
        assert not any(TOLD in memo for memo in memos)  # the last window's siblings forgotten
        for document in window:
            accelerator = accelerator_of(document)
            for layer in layers:
                assert_shared_as_alone(shared, layer, accelerator, options)
        assert any(TOLD in memo for memo in memos)  # derived from this window's siblings
        taken += shared.ready.taken
    assert taken > 0  # siblings of a window took the tables made for them
    assert "differ" not in caplog.text


def test_siblings_are_grouped_by_memories_and_documents_in_other_forms_left_out():
    rng = random.Random(0)
    siblings = Siblings()
    small, big = sibling_document(rng, 8), sibling_document(rng, 1024)
    legacy = json.loads(json.dumps(small))
    legacy["memories"]["dram"]["ports"] = [{"fh": "rw_port_1"}]
    renamed = json.loads(json.dumps(small))
    renamed["memories"]["unified_buffer"]["ports"][0]["name"] = "r_port_9"
    siblings.expect([small, big, small, legacy, None, {"memories": []}, renamed])
    assert len(siblings.by_layout) == 2
    pairs = [told[:2] for told in siblings.told(accelerator_of(small))]
    assert pairs == [document_memories(small), document_memories(big)]
    pairs = [told[:2] for told in siblings.told(accelerator_of(renamed))]
    assert pairs == [document_memories(renamed)]


@pytest.mark.parametrize("window", [1, 4, 32])
def test_sweep_with_a_bandwidth_axis_gives_the_unshared_rows(tmp_path, monkeypatch, window):
    monkeypatch.setattr(runner, "SIBLING_WINDOW", window)  # variants told a window at a time
    sweep = read_sweep(
        {
            "name": "bandwidths",
            "base": str(BASE),
            "params": {
                "ub": "memories.unified_buffer.size",
                "bw": "memories.unified_buffer.ports[0].bandwidth_max",
            },
            "vary": {"ub": ["8KiB", "1MiB"], "bw": [128, 256, 1024]},
            "derive": {"memories.unified_buffer.ports[2].bandwidth_max": "bw * 2"},
            "workloads": [str(WORKLOAD)],
            "mapping": str(REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"),
            "lpf_limit": 4,
        },
        "test",
    )
    variants = variants_of(sweep)
    assert len(variants) == 6
    unshared = evaluate_points(sweep, variants, tmp_path / "unshared", share=False)
    shared = evaluate_points(sweep, variants, tmp_path / "with_sharing")
    assert json.dumps(shared, sort_keys=True) == json.dumps(unshared, sort_keys=True)
