"""Multi-core accelerators (Stream's YAML format): the reference examples, routes, memories, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zigzag.stream.hardware import ANY, load_multicore_accelerator

DATA = Path(__file__).resolve().parent / "data"
STREAM = DATA / "reference" / "stream"
QUAD = STREAM / "stream" / "inputs" / "examples" / "hardware" / "tpu_like_quad_core.yaml"
DUAL = STREAM / "small" / "dual_testing_core_offchip_v2.yaml"
CASES = {"lbl": QUAD, "small_lbl": DUAL, "small_fused": DUAL}

_DUMPS: dict[str, dict] = {}


def dump(case: str) -> dict:
    if case not in _DUMPS:
        _DUMPS[case] = json.loads((STREAM / f"{case}.json").read_text())
    return _DUMPS[case]


def _node(value) -> str:
    return str(value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_links_equal_the_reference_dump(case):
    accelerator = load_multicore_accelerator(CASES[case])
    ours = sorted(
        (_node(l.sender), _node(l.receiver), l.bandwidth, l.unit_energy_cost, l.bidirectional,
         tuple(sorted(l.edges)))
        for l in accelerator.links
    )
    theirs = sorted(
        (l["sender"], l["receiver"], l["bandwidth"], l["unit_energy_cost"], l["bidirectional"],
         tuple(sorted(tuple(e) for e in l["graph_edges"])))
        for l in dump(case)["links"]
    )
    assert ours == theirs


@pytest.mark.parametrize("case", sorted(CASES))
def test_top_memories_equal_the_reference_dump(case):
    accelerator = load_multicore_accelerator(CASES[case])
    ours = sorted((m.name, ids, m.operands, m.capacity) for m, ids in accelerator.memory_instances)
    theirs = sorted(
        (m["name"], tuple(m["cores"]), tuple(m["memory_operands"][0]), m["capacity_bits"])
        for m in dump(case)["memories"]
    )
    assert ours == theirs


def test_quad_core_shape_and_routes():
    accelerator = load_multicore_accelerator(QUAD)
    assert [c.name for c in accelerator.cores] == ["tpu_like"] * 4 + ["pooling", "pooling", "offchip"]
    assert accelerator.offchip_core_id == 6 and accelerator.offchip_core.is_offchip
    assert len(accelerator.compute_cores) == 6
    assert list(accelerator.graph.nodes) == [0, 1, 2, 3, 4, 5, 6]
    hops = {(s, t): [l.receiver for l in links] for (s, t), links in accelerator.routes.items()}
    # networkx's bidirectional BFS with insertion-ordered adjacency (spec §1.4, quirk Q5)
    assert hops[(0, 2)] == [1, 2] and hops[(1, 3)] == [2, 3] and hops[(2, 0)] == [1, 0]
    assert hops[(3, 1)] == [0, 1] and hops[(4, 5)] == [0, 5] and hops[(5, 4)] == [0, 4]
    dram = accelerator.link(0, 6)
    assert dram is accelerator.link(6, 3) and dram.sender == 6 and dram.receiver == ANY and dram.bidirectional
    assert accelerator.route(2, 2) == ()
    assert accelerator.core(0).dataflows == {"D1": (("K", 32),), "D2": (("C", 32),)}
    assert accelerator.core(6).dataflows is None
    assert accelerator.core(4).top_memory("O").r_bw == 576 and accelerator.core(4).top_memory("O").w_bw == 512


def test_plain_data_is_json():
    data = json.loads(json.dumps(load_multicore_accelerator(QUAD).to_dict()))
    assert len(data["links"]) == 25 and data["offchip_core_id"] == 6
    assert data["routes"] and data["memory_instances"][0]["cores"] == [0]
