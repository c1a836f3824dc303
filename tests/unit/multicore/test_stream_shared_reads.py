"""A shared operand (the past part of a KV cache, the distinct experts of gathered expert weights) is read from
DRAM in its share: the bits and the energy of those reads, in one place (``offchip.cache_read_share``); the
writes and the other operands' reads are unchanged (docs/models/multi-core.md#cost-table)."""

from __future__ import annotations

import numpy as np
import pytest

from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS
from zigzag.multicore.offchip import cache_read_share
from zigzag.multicore.schedule.adapter import CNCost
from zigzag.multicore.schedule.costs import node_key
from zigzag.multicore.topology import load_multicore_accelerator
from support import REPO, TESTS

HARDWARE = REPO / "inputs" / "stream" / "hardware" / "tpu_like_quad_core.yaml"
QUAD = REPO / "inputs" / "stream" / "mapping" / "llm_quad_core.yaml"
ONE_CORE = """- name: default
  core_allocation: [0]
  core_allocation_is_fixed: true
  intra_core_tiling: [D, 1]
  inter_core_tiling: [K, 1]
"""


@pytest.mark.parametrize("share", [0.0, 0.25, 82 / 128, 1.0])
def test_a_share_scales_the_reads_of_its_operand_only(share):
    cost = CNCost(
        10.0,
        5.0,
        offchip_energy=100.0 + 40.0 + 7.0 + 3.0,  # O writes, I1 reads, I2 reads, O's reads of psums
        too_large=("O", "I1", "I2"),
        dram_bits=((2.0, 9.0), (64.0, 0.0), (8.0, 0.0)),
        dram_read_energy=(3.0, 40.0, 7.0),
    )
    shared = cache_read_share(cost, {"I": share})
    assert shared.dram_read_energy == (3.0, share * 40.0, 7.0)
    assert shared.dram_bits == ((2.0, 9.0), (share * 64.0, 0.0), (8.0, 0.0))
    assert shared.offchip_energy == pytest.approx(cost.offchip_energy - (1 - share) * 40.0)
    assert (shared.runtime, shared.onchip_energy) == (cost.runtime, cost.onchip_energy)


def test_no_share_or_an_operand_kept_on_chip_leaves_the_cost():
    cost = CNCost(1.0, 2.0, 3.0, ("I2",), dram_bits=((8.0, 0.0),), dram_read_energy=(3.0,))
    assert cache_read_share(cost, {}) is cost
    assert cache_read_share(cost, {"I": 0.5}) is cost  # I (I1) is not streamed


def _shared_products(tmp_path, workload, mapping):
    """(share per memory operand, the unshared CNCost, the shared one) of each CN reading a shared operand that
    its core streams from DRAM, and the DRAM's read energy per bit."""
    hardware = load_multicore_accelerator(HARDWARE)
    graph = cn_graph_from_files(hardware, workload, mapping, "lbl", None)
    table = CostTable.for_accelerator(hardware, options=SearchOptions(lpf_limit=6), cache=tmp_path)
    rep = graph.cost_node()
    found = []
    for cn in range(len(graph)):
        shares = graph.layers[int(graph.layer[cn])].cache_operands
        if not shares:
            continue
        entry = table.entry(node_key(graph, int(rep[cn])), int(graph.core[cn]))
        plain = CNCost.of_entry(entry, dram=table.dram)
        by_memory = {STREAM_MEMORY_OPERAND_LINKS[op]: s for op, s in shares.items()}
        if by_memory.keys() & set(plain.too_large):
            found.append((by_memory, plain, cache_read_share(plain, shares)))
    per_bit = {m: table.dram.r_cost / table.dram.bandwidth_max(m, "tl") for m in ("I1", "I2")}
    return found, per_bit


@pytest.mark.parametrize(
    "workload, one_core",
    [
        (
            TESTS / "data" / "llm" / "qwen3_moe_prefill.onnx",
            False,
        ),  # gathered experts, 82 of 128 pairs
        (
            TESTS / "data" / "stream_llm" / "llama3_8b_decode_2layers.onnx",
            True,
        ),  # 4,096 past of 4,097
    ],
)
def test_shared_reads_cost_their_share_of_the_energy(tmp_path, workload, one_core):
    """On the cost-table entries of real exports: the shared operand's DRAM read energy is its share of the
    unshared one, the same factor as its bits, so its energy per bit read is the DRAM's; the rest of the
    off-chip energy (writes, other operands) is unchanged."""
    mapping = QUAD
    if one_core:  # the whole product on one core: its 4,097-token cache is streamed from DRAM
        mapping = tmp_path / "one_core.yaml"
        mapping.write_text(ONE_CORE)
    found, per_bit = _shared_products(tmp_path / "cache", workload, mapping)
    assert found
    for by_memory, plain, shared in found:
        factors = np.array([by_memory.get(m, 1.0) for m in plain.too_large])
        assert factors.min() < 1
        np.testing.assert_allclose(shared.dram_read_energy, factors * plain.dram_read_energy)
        rest = plain.offchip_energy - sum(plain.dram_read_energy)
        assert shared.offchip_energy == pytest.approx(rest + sum(shared.dram_read_energy))
        for m, energy, (read, _) in zip(plain.too_large, shared.dram_read_energy, shared.dram_bits):
            if m in by_memory:
                assert energy == pytest.approx(read * per_bit[m], rel=1e-3)


FLEXIBLE = """- name: default
  core_allocation: [0, 1, 2, 3]
  intra_core_tiling: [D, 4]
  inter_core_tiling: [K, "*"]
- name: Add
  core_allocation: [5]
  intra_core_tiling: [D, 4]
  inter_core_tiling: [K, 1]
- name: Mul
  core_allocation: [5]
  intra_core_tiling: [D, 4]
  inter_core_tiling: [K, 1]
- name: Softmax
  core_allocation: [5]
  intra_core_tiling: [K, 4]
  inter_core_tiling: [K, 1]
"""


def test_the_constraint_optimisation_streams_the_shared_bits_only(tmp_path):
    """The slot model's bandwidth bound of a CN takes the DRAM bits the scheduler moves (shares applied):
    on the Qwen3-MoE prefill, an expert product's 82 of 128 gathered experts stream in fewer cycles than its
    cost-table latency, so the bound leaves the latency; all 128 would have lengthened it."""
    from zigzag.multicore.allocation.constraint import (
        _dram_links,
        _streamed_cycles,
        slot_problem,
        steady_states,
    )

    mapping = tmp_path / "flexible.yaml"
    mapping.write_text(FLEXIBLE)
    hardware = load_multicore_accelerator(HARDWARE)
    graph = cn_graph_from_files(
        hardware, TESTS / "data" / "llm" / "qwen3_moe_prefill.onnx", mapping, "lbl", None
    )
    table = CostTable.for_accelerator(
        hardware, options=SearchOptions(lpf_limit=6), cache=tmp_path / "cache"
    )
    links, rep = _dram_links(hardware), graph.cost_node()
    checked = 0
    for state in steady_states(graph):
        problem, ids = slot_problem(graph, hardware, table, state, "bandwidth_bound")
        for (nid, core, k), runtime in problem.runtime.items():
            cn = ids[nid]
            shares = graph.layers[int(graph.layer[cn])].cache_operands
            if not shares or k != 1:
                continue
            entry = table.entry(node_key(graph, int(rep[cn])), core)
            plain = CNCost.of_entry(entry, dram=table.dram)
            shared = _streamed_cycles(cache_read_share(plain, shares), links[core])
            assert shared < entry.result.latency_total1 < _streamed_cycles(plain, links[core])
            assert runtime == int(entry.result.latency_total1)
            checked += 1
    assert checked
