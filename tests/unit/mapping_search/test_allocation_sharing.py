"""Allocations shared beyond one structure (zigzag/mapping_search/batched/structural.py): variants
of another array shape whose layer the assigner sees the same take the allocation, and the
layer results stay the unshared path's."""

from __future__ import annotations

import numpy as np
import yaml

from support import DATA, REPO
from support.sharing import assert_shared_as_alone
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops
from zigzag.mapping_search.batched.candidates import constraint_mask, ordering_chunks
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.mapping_search.batched.structural import problem_key
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
KIB = 8 * 1024


def array(edge: int, ub_kib: int = 1024):
    """The 32x32 example with an ``edge`` x ``edge`` array (and another buffer size), and its
    layers mapped with ``edge`` wherever the example maps 32."""
    document = yaml.safe_load(BASE.read_text())
    document["operational_array"]["sizes"] = [edge, edge]
    document["memories"]["unified_buffer"]["size"] = ub_kib * KIB
    accelerator = accelerator_from_dict(validate_accelerator(document, f"a{edge}-ub{ub_kib}"))
    mapping = yaml.safe_load((REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text())
    for entry in mapping:
        for dim, unrollings in entry["spatial_mapping"].items():
            entry["spatial_mapping"][dim] = [u.replace(", 32", f", {edge}") for u in unrollings]
    entries = [MappingEntry.from_dict(entry) for entry in mapping]
    return accelerator, load_workload(str(WORKLOAD), entries).layers


def test_other_array_shapes_take_the_allocation_and_keep_the_results():
    """conv_a (K 32, C 16) is unrolled alike on 32x32 and 64x64 arrays (64 is clipped to the
    layer): the 64x64 variant takes its allocation from the 32x32 one; the 16x16 one, unrolled
    otherwise, allocates its own. Every layer result is the unshared search's."""
    options = SearchOptions(lpf_limit=4)
    shared = SharedCandidates()
    for edge, ub_kib in ((32, 1024), (64, 1024), (16, 1024), (64, 8)):
        accelerator, layers = array(edge, ub_kib)
        for layer in layers:
            assert_shared_as_alone(shared, layer, accelerator, options)
    assert shared.allocations.borrowed > 0
    # a borrowed entry has its own movement (read under its own array), not the lender's
    kept = [e for tables in shared.allocations.tables.values() for t in tables for e in t]
    movements = [id(e.movement) for e in kept if e.movement is not None]
    assert len(movements) == len(set(movements))


def test_problem_key_reads_the_unrolling_not_the_array():
    """Two arrays unrolling conv_a alike give one key; another unrolling another key."""
    keys = {}
    for edge in (16, 32, 64):
        accelerator, layers = array(edge)
        layer = layers[0]
        mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
        fractional, _ = spatial_mapping.convert(mapping, layer, accelerator)
        constraints, loops, assigner = candidate_loops(
            layer, accelerator, fractional, lpf_limit=4, even=False
        )
        keys[edge] = problem_key(loops, assigner, constraints, 8192)
        ids = next(ordering_chunks(loops, 8192))
        if constraints:
            ids = ids[constraint_mask(ids, loops, constraints)]
        keys[edge, "cuts"] = assigner.assign_bounded(ids)[1]
    assert keys[32] == keys[64] and keys[16] != keys[32]
    for op, cuts in keys[32, "cuts"].items():
        assert np.array_equal(cuts, keys[64, "cuts"][op])


def _sized(ub_kib: int, acc_kib: int):
    """The 32x32 example with another buffer and accumulator size."""
    document = yaml.safe_load(BASE.read_text())
    document["memories"]["unified_buffer"]["size"] = ub_kib * KIB
    document["memories"]["accumulators"]["size"] = acc_kib * KIB
    return accelerator_from_dict(validate_accelerator(document, f"ub{ub_kib}-acc{acc_kib}"))


def test_running_sizes_from_prefix_products_match_the_take_by_take_products():
    """With integral spatial factors the assigner reads each running size as spatial part x the
    loops' prefix product; forced to multiply take by take instead, it gives the same flags,
    cuts and bounds, on several size sets, even or not."""
    _, layers = array(32)
    compared = 0
    for ub_kib, acc_kib in ((1024, 512), (8, 512), (1024, 4), (64, 16)):
        accelerator = _sized(ub_kib, acc_kib)
        for layer in layers[:2]:
            mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
            fractional, _ = spatial_mapping.convert(mapping, layer, accelerator)
            for even in (False, True):
                constraints, loops, assigner = candidate_loops(
                    layer, accelerator, fractional, lpf_limit=5, even=even
                )
                assert assigner.integral
                ids = next(ordering_chunks(loops, 8192))
                fast = assigner.assign_bounded(ids)
                assigner.integral = False
                slow = assigner.assign_bounded(ids)
                assert np.array_equal(fast[0], slow[0])
                for op in fast[1]:
                    assert np.array_equal(fast[1][op], slow[1][op])
                assert fast[2].keys() == slow[2].keys()
                for name, (low, high) in fast[2].items():
                    assert np.array_equal(low, slow[2][name][0])
                    assert np.array_equal(high, slow[2][name][1])
                compared += int(fast[0].sum())
    assert compared > 0
