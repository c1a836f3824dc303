"""Siblings scored together (zigzag/mapping_search/batched/together.py): the candidate tables of
told variants of one structure, made while its first variant builds its own, hold the figures
each variant's own build finds, bit for bit, and a told document that differs from the variant
evaluated costs time, never a figure."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import yaml

from support import DATA, REPO
from support.sharing import assert_shared_as_alone, tpu32_mapping_entries
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops
from zigzag.mapping_search.batched.candidates import ordering_chunks
from zigzag.mapping_search.batched.latency import LatencyMemo
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.mapping_search.batched.siblings import (
    Siblings,
    hierarchy_memo,
    kept_sibling_sets,
    sibling_sets,
)
from zigzag.mapping_search.batched.together import (
    ReadyTables,
    accelerator_key,
    kept_order,
    order_of,
    plans,
    sibling_chunk,
    taken_latencies,
    told_key,
)
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
KIB = 8 * 1024


def document(rng: random.Random, name: str, ub_kib: int = 1024) -> dict:
    """The 32x32 example with random bandwidths on the buffer's and accumulators' ports (the
    buffer's ``bandwidth_min`` too) and a random buffer energy."""
    found = yaml.safe_load(BASE.read_text())
    found["name"] = name
    memories = found["memories"]
    memories["unified_buffer"]["size"] = ub_kib * KIB
    for memory in ("unified_buffer", "accumulators"):
        for port in memories[memory]["ports"]:
            port["bandwidth_max"] = rng.choice([64, 128, 256, 512, 1024])
            port["bandwidth_min"] = min(port["bandwidth_min"], port["bandwidth_max"])
    port = memories["unified_buffer"]["ports"][0]
    port["bandwidth_min"] = rng.choice([8, port["bandwidth_max"]])
    cost = rng.choice([200.0, 1567.67])
    memories["unified_buffer"]["r_cost"] = memories["unified_buffer"]["w_cost"] = cost
    return found


def accelerator_of(found: dict):
    return accelerator_from_dict(validate_accelerator(found, found["name"]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_siblings_chunk_is_its_own_builds(seed):
    """The word accesses, latency and exactness flags made for a told sibling from the first
    variant's rows are those the sibling's own model finds for the same candidates."""
    rng = random.Random(seed)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = [document(rng, f"v{k}") for k in range(5)]
    accelerators = [accelerator_of(d) for d in documents]
    layer = layers[seed % len(layers)]
    own = accelerators[0]
    array_mapping = generate_spatial_mappings(layer, own, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, own)
    _, loops, assigner = candidate_loops(layer, own, fractional, lpf_limit=4, even=False)
    ids = next(ordering_chunks(loops, 8192))
    alive, cuts = assigner.assign(ids)
    ids, cuts = ids[alive], {op: c[alive] for op, c in cuts.items()}
    model = BatchCostModel(layer, own, fractional, integer, loops)
    siblings = Siblings()
    siblings.expect(documents)
    told = siblings.told(own)
    sets = sibling_sets(model, told)
    found = plans(model, told, sets)
    assert found, "no sibling differs from the first"
    memo = LatencyMemo()
    moved = model.movements(ids, cuts, True)
    accesses, _, _ = model.evaluate_accesses(ids, cuts, moved, memo, sets)
    order = order_of(model)
    latencies = taken_latencies(model, memo, [plan[0] for plan in found])
    assert taken_latencies(model, memo, list(latencies)) == {}  # taken once
    for plan in found:
        other = next(a for a in accelerators if accelerator_key(order, a) == plan[1])
        alone = BatchCostModel(layer, other, fractional, integer, loops)
        expected = alone.evaluate_accesses(ids, cuts)
        made = sibling_chunk(accesses, latencies[plan[0]], plan)
        assert made[0].value.tobytes() == expected[0].value.tobytes()
        assert np.array_equal(made[0].slots, expected[0].slots)
        assert made[1].tobytes() == expected[1].tobytes()
        assert made[2].tobytes() == expected[2].tobytes()


def _search_all(shared, documents, evaluated, layers, options):
    """Every layer of ``evaluated`` through ``shared`` (told ``documents``), each result checked
    against the unshared search."""
    shared.expect(documents)
    for found in evaluated:
        accelerator = accelerator_of(found)
        for layer in layers:
            assert_shared_as_alone(shared, layer, accelerator, options)


@pytest.mark.parametrize("opt", ["latency", "energy"])
def test_ready_tables_give_the_unshared_results(caplog, opt):
    rng = random.Random(7)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = [document(rng, f"v{k}") for k in range(4)] + [document(rng, "small", 8)]
    shared = SharedCandidates()
    _search_all(shared, documents, documents, layers, SearchOptions(lpf_limit=4, opt=opt))
    assert shared.ready.made > 0 and shared.ready.taken > 0
    assert "differ" not in caplog.text  # no figure went back to the unshared path


def test_a_told_document_that_differs_costs_no_figure(caplog):
    """The variants evaluated have other bandwidths than those told: the tables made for the
    told ones are never taken, and every result is the unshared one."""
    rng = random.Random(3)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    told = [document(rng, f"v{k}") for k in range(3)]
    evaluated = [told[0]]
    for found in told[1:]:
        other = copy.deepcopy(found)
        for port in other["memories"]["unified_buffer"]["ports"]:
            port["bandwidth_min"] = port["bandwidth_max"] = 2048
        evaluated.append(other)
    shared = SharedCandidates()
    _search_all(shared, told, evaluated, layers, SearchOptions(lpf_limit=4))
    assert shared.ready.made > 0 and shared.ready.taken == 0
    assert "differ" not in caplog.text


def test_keys_of_a_document_and_of_its_accelerator_agree():
    rng = random.Random(5)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    found = document(rng, "v")
    accelerator = accelerator_of(found)
    layer = layers[0]
    array_mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, accelerator)
    _, loops, _ = candidate_loops(layer, accelerator, fractional, lpf_limit=4, even=False)
    order = order_of(BatchCostModel(layer, accelerator, fractional, integer, loops))
    siblings = Siblings()
    siblings.expect([found])
    ((sizes, ports, minimums),) = siblings.told(accelerator)
    assert told_key(order, sizes, ports, minimums) == accelerator_key(order, accelerator)
    assert told_key(order, sizes, ports, {}) is None  # without the ports' bandwidth_min


def test_ready_tables_are_read_once_and_kept_within_their_budget():
    ready = ReadyTables(budget=100)
    ready.put("a", "table a", 60)
    assert ready.room()
    ready.put("b", "table b", 60)  # over the budget: the oldest dropped
    assert ready.take("a") is None and ready.take("b") == "table b"
    assert ready.take("b") is None and ready.nbytes == 0
    assert (ready.made, ready.taken) == (2, 1)


def _model(layer, accelerator):
    """The batched model of ``layer``'s first spatial mapping on ``accelerator`` (lpf 3)."""
    array_mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, accelerator)
    _, loops, _ = candidate_loops(layer, accelerator, fractional, lpf_limit=3, even=False)
    return BatchCostModel(layer, accelerator, fractional, integer, loops)


def test_the_bookkeeping_kept_per_hierarchy_is_each_models_own():
    """The sibling sets, ready order and ready keys kept for the layers linked alike on one
    accelerator are the ones each layer's model finds alone; another accelerator object keeps
    its own."""
    rng = random.Random(11)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    documents = [document(rng, f"v{k}") for k in range(4)]
    accelerators = [accelerator_of(d) for d in documents]
    siblings = Siblings()
    siblings.expect(documents)
    for accelerator in accelerators[:2]:
        told = siblings.told(accelerator)
        assert told is siblings.told(accelerator)  # one list per layout until more are told
        models = [_model(layer, accelerator) for layer in layers]
        memos = [hierarchy_memo(model) for model in models]
        assert len({id(memo) for memo in memos}) < len(models)  # layers linked alike share one
        for model, memo in zip(models, memos):
            sets = kept_sibling_sets(model, told)
            assert sets == sibling_sets(model, told)
            assert kept_order(model, memo) == order_of(model)
            order = kept_order(model, memo)
            assert accelerator_key(order, accelerator) == accelerator_key(
                order_of(model), accelerator
            )
            assert plans(model, told, sets) == plans(model, told, sibling_sets(model, told))
        shared = [m for m, memo in zip(models, memos) if memo is memos[0]]
        assert all(kept_sibling_sets(m, told) is kept_sibling_sets(shared[0], told) for m in shared)
    first, second = (_model(layers[0], a) for a in accelerators[:2])
    assert hierarchy_memo(first) is not hierarchy_memo(second)
    # a told list of other sizes, even at a reused id, is not answered from the kept one
    other = [(dict(t[0], unified_buffer=8 * KIB), *t[1:]) for t in siblings.told(accelerators[0])]
    assert kept_sibling_sets(first, other) == sibling_sets(first, other)
