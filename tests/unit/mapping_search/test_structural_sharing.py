"""Variants of one structure (memories apart from their sizes, bandwidths and costs) share allocated
candidates (zigzag/mapping_search/batched/structural.py): the same layer results as the unshared path."""

from __future__ import annotations

import json

import numpy as np
import yaml

from support import DATA, REPO
from support.sharing import assert_shared_as_alone, tpu32_mapping_entries
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops
from zigzag.mapping_search.batched.candidates import constraint_mask, ordering_chunks
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner
from zigzag.mapping_search.batched.shared import COST_FIELDS, SharedCandidates, cost_free_job
from zigzag.mapping_search.batched.structural import structure_free_job
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
KIB = 8 * 1024


def variant(ub_kib: int, acc_kib: int, bandwidth: int, cost: float = 1567.67):
    """The 32x32 example with another unified buffer size, accumulator size, buffer bandwidth
    and buffer energy per access."""
    document = yaml.safe_load(BASE.read_text())
    memories = document["memories"]
    memories["unified_buffer"]["size"] = ub_kib * KIB
    memories["unified_buffer"]["r_cost"] = memories["unified_buffer"]["w_cost"] = cost
    memories["accumulators"]["size"] = acc_kib * KIB
    for port in memories["unified_buffer"]["ports"]:
        port["bandwidth_max"] = bandwidth
    name = f"ub{ub_kib}-acc{acc_kib}-bw{bandwidth}-e{cost}"
    return accelerator_from_dict(validate_accelerator(document, name))


VARIANTS = [
    (1024, 512, 512),
    (1024, 512, 128),  # bandwidth only: every allocation taken as it is
    (8, 512, 512),  # a small buffer: some candidates leave their bounds, all allocated again
    (8, 512, 256),  # that allocation taken whole
    (1024, 4, 512),  # small accumulators: most allocated again
    (3072, 16, 256),
    (1024, 512, 512, 200.0),  # costs only: the cost-free table re-scored
]


def test_shared_structure_gives_the_unshared_results():
    options = SearchOptions(lpf_limit=4)
    layers = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers
    shared = SharedCandidates()
    for spec in VARIANTS:
        accelerator = variant(*spec)
        for layer in layers:
            assert_shared_as_alone(shared, layer, accelerator, options)
    allocations = shared.allocations
    assert allocations.reused > 0 and allocations.reallocated > 0
    kept = [entry for tables in allocations.tables.values() for t in tables for entry in t]
    assert any(entry.movement is not None for entry in kept)
    # the latency's bandwidth-free parts kept for the variants to come, counted in the budget
    assert any(entry.latency.nbytes > 0 for entry in kept)
    assert all(entry.counted == entry.latency.nbytes for entry in kept)
    assert any(len(tables) > 1 for tables in allocations.tables.values())  # other sizes kept too
    assert 0 < allocations.nbytes == sum(entry.nbytes() for entry in kept) <= allocations.budget
    assert shared.reused > 0  # the costs-only variant


def test_sizes_inside_the_bounds_keep_every_outcome():
    """``assign_bounded``'s bounds: any size inside a candidate's interval gives it the same flag
    and cuts; the bounds are tight enough that a size at a bound's edge changes some outcome."""
    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    base = variant(1024, 512, 512)
    array_mapping = generate_spatial_mappings(layer, base, nb_mappings=1)[0]
    fractional, _ = spatial_mapping.convert(array_mapping, layer, base)
    constraints, loops, assigner = candidate_loops(layer, base, fractional, lpf_limit=5, even=False)
    ids = next(ordering_chunks(loops, 8192))
    if constraints:
        ids = ids[constraint_mask(ids, loops, constraints)]
    alive, cuts, bounds = assigner.assign_bounded(ids)
    low, high = bounds["unified_buffer"]
    assert np.all(low <= 1024 * KIB) and np.all(1024 * KIB < high)
    finite = sorted({float(v) for v in np.concatenate([low, high]) if np.isfinite(v)})
    changed = 0
    for size in finite:
        for probe in (size, np.nextafter(size, -np.inf)):
            other = BatchLevelAssigner(
                layer, variant(1024, 512, 512), fractional, loops, even=False
            )
            other.reference.nodes = [
                (_resized(memory, probe) if memory.name == "unified_buffer" else memory, ops)
                for memory, ops in other.reference.nodes
            ]
            other.reference.top = {
                m: next(mem for mem, _ in other.reference.nodes if mem.name == top.name)
                for m, top in other.reference.top.items()
            }
            again, cuts_again = other.assign(ids)
            inside = (low <= probe) & (probe < high)
            assert np.array_equal(again[inside], alive[inside])
            for op in cuts:
                assert np.array_equal(cuts_again[op][inside & alive], cuts[op][inside & alive])
            changed += int(
                np.any(again[~inside] != alive[~inside])
                or any(np.any(cuts_again[op][~inside] != cuts[op][~inside]) for op in cuts)
            )
    assert changed > 0


def _resized(memory, size):
    import dataclasses

    return dataclasses.replace(memory, size=size)


def test_structure_key_leaves_out_sizes_bandwidths_costs_and_name_only():
    options = SearchOptions(lpf_limit=4)
    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    key = job_key(
        structure_free_job(layer_job(layer, variant(1024, 512, 512), options), COST_FIELDS)
    )
    for other in (variant(64, 16, 128), variant(3072, 512, 512, 1.0)):
        job = layer_job(layer, other, options)
        assert job_key(structure_free_job(job, COST_FIELDS)) == key
    job = json.loads(json.dumps(layer_job(layer, variant(1024, 512, 512), options)))
    job["accelerator"]["memories"]["unified_buffer"]["served_dimensions"] = ["D1"]
    assert job_key(structure_free_job(job, COST_FIELDS)) != key
    job = json.loads(json.dumps(layer_job(layer, variant(1024, 512, 512), options)))
    job["accelerator"]["operational_array"]["sizes"] = [16, 64]
    assert job_key(structure_free_job(job, COST_FIELDS)) != key


def test_no_fit_is_diagnosed_once_per_structure_and_sizes():
    """Variants of one structure and the same sizes (bandwidths apart) where nothing fits take one
    diagnosis (it reads sizes only): the error the unshared path gives, word for word."""
    from zigzag.errors import MappingError

    options = SearchOptions(lpf_limit=4)
    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    shared = SharedCandidates()
    for bandwidth in (512, 256):
        accelerator = variant(1, 512, bandwidth)
        job = layer_job(layer, accelerator, options)
        keys = (job_key(cost_free_job(job)), job_key(structure_free_job(job, COST_FIELDS)))
        errors = []
        for share in (None, (shared, *keys)):
            try:
                search_layer(layer, accelerator, options, show_progress=False, shared=share)
            except MappingError as exc:
                errors.append(str(exc))
        assert len(errors) == 2 and errors[0] == errors[1]
    diagnoses = [
        key
        for memo in shared.allocations._memos.values()
        for key in memo
        if isinstance(key, tuple) and key[0] == "no_fit"
    ]
    assert len(diagnoses) == 1


def test_latency_memo_gives_the_same_bits():
    """The latency through a memo filled by a variant of other bandwidths (or other sizes) is the
    latency computed without it, bit for bit."""
    from zigzag.mapping_search.batched.latency import LatencyMemo
    from zigzag.mapping_search.batched.model import BatchCostModel

    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    base = variant(1024, 512, 512)
    array_mapping = generate_spatial_mappings(layer, base, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, base)
    _, loops, assigner = candidate_loops(layer, base, fractional, lpf_limit=4, even=False)
    ids = next(ordering_chunks(loops, 8192))
    alive, cuts = assigner.assign(ids)
    ids, cuts = ids[alive], {op: c[alive] for op, c in cuts.items()}
    memo = LatencyMemo()
    for spec in ((1024, 512, 512), (1024, 512, 128), (3072, 16, 256), (1024, 512, 128)):
        model = BatchCostModel(layer, variant(*spec), fractional, integer, loops)
        moved = model.movements(ids, cuts, True)
        alone = model.evaluate_accesses(ids, cuts, moved)
        together = model.evaluate_accesses(ids, cuts, moved, memo)
        assert np.array_equal(alone[1], together[1]) and np.array_equal(alone[2], together[2])
        assert np.array_equal(alone[0].slots, together[0].slots)
        assert alone[0].value.tobytes() == together[0].value.tobytes()
    kinds = sorted(key if isinstance(key, str) else key[0] for key in memo.values)
    # the word accesses of each of the three bandwidth sets (the fourth variant's are the
    # second's); the compiled latency reads the movement where it lies
    assert memo.nbytes > 0 and kinds == ["word accesses"] * 3
