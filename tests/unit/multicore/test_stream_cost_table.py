"""Stream's cost table: parity with the reference cost entries, the too-large test, the cache."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from support.stream_reference import STREAM_DATA, load_dump, node_key, node_keys, onnx_facts
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.io.sealed import write_sealed
from zigzag.mapping_search.jobs import job_key
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.cost_table import CostEntry, CostTable, NodeKey, cost_of, offchip_memory
from zigzag.multicore.cost_table.cache import entry_path, job_path
from zigzag.multicore.cost_table.jobs import cost_job
from zigzag.multicore.cost_table.lut import read_lut
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.offchip import stored_bits, too_large_operands


def _accelerator(case: str):
    """The case's multi-core accelerator, core files resolved from the reference folder (as Stream)."""
    return load_multicore_accelerator(
        STREAM_DATA / load_dump(case)["meta"]["inputs"]["hardware"], cwd=STREAM_DATA
    )


def _cores(case: str) -> dict:
    return {core.id: core.accelerator for core in _accelerator(case).compute_cores}


@pytest.fixture(scope="module")
def dram():
    return offchip_memory(_accelerator("small_lbl"))


def _lists(value):
    return [_lists(v) for v in value] if isinstance(value, (list, tuple)) else value


def _close(a, b) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _check_entry(entry: CostEntry, expected: dict) -> None:
    r = entry.result
    where = f"{expected['name']} on core {expected['core']}"
    for name in (
        "latency_total0",
        "latency_total1",
        "latency_total2",
        "ideal_cycle",
        "ideal_temporal_cycle",
    ):
        assert getattr(r, name) == expected[name], (where, name)
    for name in (
        "energy_total",
        "mac_energy",
        "mem_energy",
        "mac_spatial_utilization",
        "mac_utilization1",
    ):
        assert _close(getattr(r, name), expected[name]), (
            where,
            name,
            getattr(r, name),
            expected[name],
        )
    assert set(r.mem_energy_breakdown) == set(expected["mem_energy_breakdown"])
    for op, levels in expected["mem_energy_breakdown"].items():
        assert len(r.mem_energy_breakdown[op]) == len(levels), (where, op)
        assert all(_close(a, b) for a, b in zip(r.mem_energy_breakdown[op], levels)), (where, op)
    assert {op: list(v) for op, v in r.memory_names.items()} == expected[
        "memory_levels_per_operand"
    ], where
    assert {oa: dict(v) for oa, v in r.spatial_mapping_array.items()} == expected[
        "spatial_mapping_oa_dims"
    ], where
    assert {op: _lists(v) for op, v in r.temporal_mapping.items()} == expected[
        "temporal_mapping_per_level"
    ], where
    assert list(entry.too_large_operands) == expected["too_large_operands_for_core"], where


def _check_cns(case: str, entries: dict) -> int:
    """Every CN's runtime, energy split, streamed operands and DRAM bandwidth from its entry."""
    checked = 0
    for cn in load_dump(case)["cns"]:
        entry = entries[(tuple(cn["lut_node"]), cn["core"])]
        assert entry.latency == cn["runtime"], cn["id"]
        assert _close(entry.onchip_energy, cn["onchip_energy"]), (
            cn["id"],
            entry.onchip_energy,
            cn["onchip_energy"],
        )
        assert _close(entry.offchip_energy, cn["offchip_energy"]), cn["id"]
        assert list(entry.too_large_operands) == cn["too_large_operands"], cn["id"]
        assert all(_close(entry.offchip_bw[d], bw) for d, bw in cn["offchip_bw"].items()), (
            cn["id"],
            entry.offchip_bw,
        )
        checked += 1
    return checked


@pytest.mark.parametrize(
    "case, nb_entries, nb_cns", [("small_lbl", 3, 3), ("small_fused", 4, 24), ("lbl", 60, 48)]
)
def test_entries_equal_the_reference(case, nb_entries, nb_cns):
    accelerator = _accelerator(case)
    dram = offchip_memory(accelerator)
    entries = {}
    for expected, node in node_keys(case):
        entry = cost_of(
            node, accelerator.core(expected["core"]), SearchOptions(lpf_limit=6), dram=dram
        )
        _check_entry(entry, expected)
        entries[(tuple(expected["node"]), expected["core"])] = entry
    assert len(entries) == nb_entries
    assert _check_cns(case, entries) == nb_cns


def test_fused_resnet18_entries_equal_the_reference():
    """The 61 cost-table entries Stream computes for fused ResNet-18 (row and column CNs), made
    by running the reference (tests/data/stream/fused_cost_table.json, provenance inside)."""
    reference = json.loads(
        (STREAM_DATA.parents[1] / "stream" / "fused_cost_table.json").read_text()
    )
    accelerator = load_multicore_accelerator(
        STREAM_DATA / reference["case"]["hardware"], cwd=STREAM_DATA
    )
    facts = onnx_facts(STREAM_DATA / reference["case"]["workload"])
    table = CostTable.for_accelerator(accelerator)
    for expected in reference["entries"]:
        entry = table.entry(node_key(expected, facts, expected["edge_bits"]), expected["core"])
        r = entry.result
        where = (expected["node"], expected["core"])
        for name in ("latency_total0", "latency_total1", "latency_total2"):
            assert getattr(r, name) == expected[name], where
        assert _close(r.energy_total, expected["energy_total"]), where
        for op, levels in expected["mem_energy_breakdown"].items():
            assert all(_close(a, b) for a, b in zip(r.mem_energy_breakdown[op], levels)), where
        assert list(entry.too_large_operands) == expected["too_large_operands_for_core"], where
        assert all(_close(entry.offchip_bw[d], v) for d, v in expected["offchip_bw"].items()), where
    assert (
        len(reference["entries"]) == 61 and table.computed < 30
    )  # identical cores and shapes share entries


def _lbl_node(layer_id: int):
    return next((e, n) for e, n in node_keys("lbl") if e["node"] == [layer_id, 0])


def test_too_large_operands_follow_the_packing_rule(dram):
    cores = _cores("lbl")
    relu, relu_key = _lbl_node(1)  # I 6.4 Mbit + O 12.8 Mbit (partial sums) + W 8 bit > 16.8 Mbit
    layer = relu_key.layer(cores[1])
    bits = stored_bits(layer, dict(relu_key.edge_bits))
    assert bits == {"O": 12845056, "I": 6422528, "W": 8}
    assert too_large_operands(layer, cores[1], bits) == ("O",)
    pool, pool_key = _lbl_node(2)  # pooling core: 1 Mbit, nothing fits; DRAM order = ascending bits
    layer = pool_key.layer(cores[4])
    assert too_large_operands(layer, cores[4], stored_bits(layer, dict(pool_key.edge_bits))) == (
        "I2",
        "O",
        "I1",
    )
    # in-edges bringing more bits than the CN needs count: with I at the full capacity, W and O
    # fit, but I1's lowest level is the SRAM itself, so no room is left for streaming it: all out
    layer = relu_key.layer(cores[1])
    assert too_large_operands(layer, cores[1], stored_bits(layer, {"I": 16777216})) == (
        "I2",
        "O",
        "I1",
    )


def test_cache_files_are_reused_and_keyed_by_content(tmp_path, dram):
    cores = _cores("lbl")
    expected, node = _lbl_node(1)
    first = cost_of(node, cores[1], dram=dram, cache=tmp_path)
    key = first.key
    assert job_path(tmp_path, key).exists() and entry_path(tmp_path, key).exists()
    # a second call reads the entry file (a marker put into it, sealed as the cache writes its
    # entries, shows it was not recomputed)
    data = json.loads(entry_path(tmp_path, key).read_text())
    data.pop("sha256")
    write_sealed(entry_path(tmp_path, key), {**data, "evaluations": -1}, key)
    again = cost_of(node, cores[1], dram=dram, cache=tmp_path)
    assert again.evaluations == -1 and again == first
    # an entry edited by hand fails its checksum: it is computed again, never used
    entry_path(tmp_path, key).write_text(json.dumps({**data, "evaluations": -2}))
    assert cost_of(node, cores[1], dram=dram, cache=tmp_path).evaluations != -2
    # identical cores share one entry; the core's name does not matter
    renamed = dataclasses.replace(cores[1], name="another_tpu")
    assert cost_of(node, renamed, dram=dram, cache=tmp_path).key == key
    # anything that changes the cost changes the key: hardware, options, in-edge bits, DRAM
    sram = cores[1].memories[-1]
    smaller = dataclasses.replace(
        cores[1],
        memories=cores[1].memories[:-1] + (dataclasses.replace(sram, size=sram.size // 2),),
    )
    changed = [
        cost_job(node, smaller, SearchOptions(), dram),
        cost_job(node, cores[1], SearchOptions(lpf_limit=5), dram),
        cost_job(
            dataclasses.replace(node, edge_bits=(("I", 16777216),)), cores[1], SearchOptions(), dram
        ),
        cost_job(node, cores[1], SearchOptions(), dataclasses.replace(dram, r_cost=999.0)),
    ]
    from zigzag.steps.pipeline import job_key

    assert len({job_key(job) for job in changed} | {key}) == 5


def test_table_file_round_trip(tmp_path, dram):
    cores = _cores("small_lbl")
    pairs = [(node, e["core"]) for e, node in node_keys("small_fused")]
    lut = tmp_path / "cost_lut.json"
    table = CostTable.for_accelerator(_accelerator("small_fused"), lut_path=lut)
    entries = table.fill(pairs)
    assert table.computed == 3  # rows (1,0) and (1,1) differ only in their predecessor count
    table.save()
    assert set(read_lut(lut)) == {e.key for e in entries}
    reloaded = CostTable(cores, dram=dram, lut_path=lut)
    assert reloaded.fill(pairs) == entries and reloaded.computed == 0
    # a table file written for other inputs is harmless: nothing in it matches
    other = CostTable(cores, dram=dram, options=SearchOptions(lpf_limit=4), lut_path=lut)
    other.entry(*pairs[0])
    assert other.computed == 1


def _cost_plan(tmp_path, jobs: dict) -> str:
    """A cost plan as the workflow's stream-plan step writes it, of ``jobs`` (key -> job)."""
    from zigzag.steps.chunks import planned_chunks

    plan = tmp_path / "cost_plan.json"
    chunks = planned_chunks(len(jobs), {"ZIGZAG_FLOW_CORES": "2"})
    plan.write_text(
        json.dumps({"experiment": "x", "to_compute": list(jobs), "chunks": chunks, "jobs": jobs})
    )
    return str(plan)


def _costs_step(plan: str, chunk: str, cache, output) -> int:
    return main(
        [
            "step",
            "multicore-costs",
            plan,
            "--chunk",
            chunk,
            "--cache",
            str(cache),
            "--output",
            str(output),
        ]
    )


def test_a_chunk_step_computes_its_entries_into_the_cache(tmp_path, dram):
    cores = _cores("small_lbl")
    expected, node = node_keys("small_lbl")[1]
    job = cost_job(node, cores[expected["core"]], SearchOptions(), dram)
    key = job_key(job)
    plan = _cost_plan(
        tmp_path, {key: {**job, "label": "conv1 on core 1", "layer_name": node.layer_name}}
    )
    assert _costs_step(plan, "1of1", tmp_path, tmp_path / "chunk.json") == 0
    entry = CostEntry.from_dict(json.loads(entry_path(tmp_path, key).read_text()))
    assert entry == cost_of(node, cores[expected["core"]], dram=dram) and entry.key == key
    _check_entry(entry, expected)
    assert json.loads((tmp_path / "chunk.json").read_text()) == {"keys": [key], "computed": [key]}
    # run again: read from the cache, nothing computed
    assert _costs_step(plan, "1of1", tmp_path, tmp_path / "chunk.json") == 0
    assert json.loads((tmp_path / "chunk.json").read_text())["computed"] == []


def test_planned_jobs_run_in_chunks_fill_the_table(tmp_path):
    accelerator = _accelerator("small_fused")
    pairs = [(node, e["core"]) for e, node in node_keys("small_fused")]
    jobs = CostTable.for_accelerator(accelerator, cache=tmp_path).planned_jobs(pairs)
    assert len(jobs) == 3
    plan = _cost_plan(tmp_path, jobs)
    computed = []
    for chunk in ("1of2", "2of2"):  # two chunks share the keys
        assert _costs_step(plan, chunk, tmp_path, tmp_path / f"{chunk}.json") == 0
        computed.append(json.loads((tmp_path / f"{chunk}.json").read_text())["computed"])
    assert [len(keys) for keys in computed] == [2, 1] and sorted(sum(computed, [])) == sorted(jobs)
    table = CostTable.for_accelerator(accelerator, cache=tmp_path)
    assert [e.key for e in table.fill(pairs)] == [
        table.key(n, c) for n, c in pairs
    ] and table.computed == 0
    assert CostTable.for_accelerator(accelerator, cache=tmp_path).planned_jobs(pairs) == {}


def test_bad_uses_are_one_line_errors(tmp_path, dram, capsys):
    cores = _cores("lbl")
    _, relu = _lbl_node(1)
    offchip = _accelerator("lbl").offchip_core
    with pytest.raises(InputError, match="no operational units"):
        cost_of(relu, offchip)
    with pytest.raises(InputError, match="no off-chip core"):
        cost_of(relu, cores[1])  # O must be streamed, but no DRAM is given
    with pytest.raises(InputError, match="core 7 does not exist"):
        CostTable(cores).entry(relu, 7)
    bad = tmp_path / "lut.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="not a cost table"):
        CostTable(cores, lut_path=bad)
    assert _costs_step(str(tmp_path / "missing.json"), "1of1", tmp_path, tmp_path / "x.json") == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_node_key_round_trip():
    for _, node in node_keys("lbl"):
        assert NodeKey.from_dict(json.loads(json.dumps(node.to_dict()))) == node
