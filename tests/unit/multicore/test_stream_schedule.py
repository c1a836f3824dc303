"""The multi-core scheduler against Stream's reference dumps, fed with Stream's per-CN costs."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace

import numpy as np
import pytest
import yaml

from zigzag.errors import InputError
from zigzag.multicore.schedule import MEMORY_OPERANDS, schedule, scheduling_order
from zigzag.multicore.schedule.links import LinkState, intersect
from zigzag.multicore.schedule.memory import Timeline
from zigzag.multicore.schedule.problem import Link
from support.stream_reference_dump import problem_from_dump
from support import TESTS

REF = TESTS / "data" / "reference" / "stream"
CASES = ["small_lbl", "small_fused", "lbl"]
EXPECTED = {c["case"]: c for c in yaml.safe_load((REF / "expected.yaml").read_text())}
LAYER_OPERAND = {"I1": "I", "I2": "W", "O": "O"}


@pytest.fixture(scope="module", params=CASES)
def case(request):
    dump = json.loads((REF / f"{request.param}.json").read_text())
    problem = problem_from_dump(REF / f"{request.param}.json")
    return request.param, dump, problem, schedule(problem)


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def test_totals_equal_the_reference(case):
    name, _, problem, result = case
    expected = EXPECTED[name]
    assert result.latency == expected["latency_cycles"]
    assert rel(result.energy, expected["energy_pJ"]) < 1e-9
    for term, value in expected["energy_terms_pJ"].items():
        assert rel(getattr(result.totals, term), value) < 1e-9, term
    assert result.peak_memory() == expected["peak_memory_bits"]
    assert problem.nb_cns == expected["nb_cns"] and problem.nb_edges == expected["nb_edges"]
    assert len(result.transfers) == expected["nb_transfers"]


def test_every_cn_core_start_end_equal_the_dump(case):
    _, dump, problem, result = case
    for i, cn in enumerate(dump["cns"]):
        assert (int(problem.core[i]), result.start[i], result.end[i]) == (
            cn["core"],
            cn["start"],
            cn["end"],
        ), cn["id"]


def test_transfers_equal_the_dump(case):
    _, dump, problem, result = case
    for ours, ref in zip(result.transfers, dump["transfers"], strict=True):
        origin = int(problem.tensor_origin[ours.tensor])
        tensor = (
            [int(problem.layer[origin]), int(problem.sub[origin])],
            LAYER_OPERAND[MEMORY_OPERANDS[int(problem.tensor_operand[ours.tensor])]],
        )
        assert ours.kind == ref["kind"]
        assert tensor == (ref["tensor"]["origin"], ref["tensor"]["layer_operand"])
        assert (ours.sender, ours.receiver, MEMORY_OPERANDS[ours.memory_operand]) == (
            ref["sender"],
            ref["receiver"],
            ref["receiver_memory_operand"],
        )
        assert (ours.start, ours.end) == (ref["start"], ref["end"])
        assert rel(ours.memory_energy, ref["memory_energy"]) < 1e-9
        assert ours.link_energy == ref["link_energy"]


def test_link_events_and_memory_timelines_equal_the_dump(case):
    _, dump, problem, result = case
    refs = {(r["sender"], r["receiver"]): r for r in dump["links"]}
    assert len(refs) == len(problem.hardware.links)
    for link, events in zip(problem.hardware.links, result.link_events, strict=True):
        ref = refs[(link.sender, link.receiver)]
        assert (link.bandwidth, link.bidirectional) == (ref["bandwidth"], ref["bidirectional"])
        assert [(e.kind, e.start, e.end, e.activity) for e in events] == [
            (e["type"], e["start"], e["end"], e["activity"]) for e in ref["events"]
        ]
    for mem, timeline, ref in zip(
        problem.hardware.memories, result.timelines, dump["memories"], strict=True
    ):
        assert mem.name == ref["name"]
        if isinstance(ref["timeline"], list):
            assert timeline == [tuple(p) for p in ref["timeline"]]


def test_scheduling_order_from_layer_stacks(case):
    _, dump, problem, _ = case
    stacks = dump["options_seen_by_allocation_stage"]["layer_stacks"]
    order = scheduling_order(problem.layer, problem.sub, stacks)
    assert order.tolist() == problem.order.tolist()


def test_scheduling_order_rules():
    layer = np.array([0, 0, 1, 1, 2])
    sub = np.array([0, 1, 0, 1, 0])
    assert scheduling_order(layer, sub, None).tolist() == [4, 3, 2, 1, 0]
    # a layer in two stacks keeps its first place; a layer in no stack is left out
    assert scheduling_order(layer, sub, [(0, 1), (1,), ()]).tolist() == [3, 2, 1, 0]


def test_result_files(case, tmp_path):
    name, _, problem, result = case
    result.write(tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["latency"] == EXPECTED[name]["latency_cycles"]
    assert summary["nb_cns"] == problem.nb_cns and summary["nb_edges"] == problem.nb_edges
    assert summary["peak_memory_bits"] == EXPECTED[name]["peak_memory_bits"]
    rows = list(csv.DictReader((tmp_path / "schedule.csv").open()))
    assert len(rows) == problem.nb_cns
    assert list(rows[0]) == [
        "layer_id",
        "sub_id",
        "core",
        "start",
        "end",
        "runtime",
        "onchip_energy",
        "offchip_energy",
    ]
    assert math.isclose(
        sum(float(r["onchip_energy"]) for r in rows),
        summary["total_cn_onchip_energy"],
        rel_tol=1e-12,
    )


def test_timeline_earliest_fit():
    tl = Timeline()
    tl.shift_from(10, 60)  # 60 bits from t=10
    tl.shift_from(20, -60)
    tl.shift_from(30, 90)
    assert tl.points() == [(0, 0), (10, 60), (20, 0), (30, 90)]
    assert tl.earliest_fit(10, 100, 0) == 0
    assert tl.earliest_fit(50, 100, 0) == 30  # never room after the last peak: its time
    tl.shift_from(40, -90)
    assert tl.earliest_fit(50, 100, 5) == 40
    assert tl.usage(35) == 90 and tl.peak() == 90


def test_link_windows_and_intersection():
    links = LinkState((Link("0", "1", 64, 0.0),))
    links.record(0, "transfer", 10, 20, 64, (1,))
    links.record(0, "block", 30, 50, 7, (2,))
    # a transfer needs zero activity, so even a light block excludes it
    assert links.idle_windows(0, 64, 5, 0, []) == [(0, 10), (20, 30), (50, math.inf)]
    # a light block leaves room for another light activity
    assert links.idle_windows(0, 7, 15, 0, []) == [(20, math.inf)]
    # broadcast: an earlier event of the same tensor is offered first
    assert links.idle_windows(0, 64, 10, 0, [1])[0] == (10, 20)
    links.record(0, "transfer", 10, 20, 64, (1,))  # duplicate: ignored
    assert len(links.events[0]) == 2
    assert intersect([(0, 10), (20, 40)], [(5, 25), (30, 50)]) == [(5, 10), (20, 25), (30, 40)]
    assert intersect([(0, 10)], [(10, 20)]) == [(10, 10)]


def test_bad_problems_fail_with_one_line():
    problem = problem_from_dump(REF / "small_lbl.json")
    with pytest.raises(InputError, match="not in the scheduling order"):
        schedule(replace(problem, order=problem.order[1:]))
    small = replace(
        problem.hardware, memories=tuple(replace(m, capacity=1) for m in problem.hardware.memories)
    )
    with pytest.raises(InputError):
        schedule(replace(problem, hardware=small))
    with pytest.raises(InputError, match="one per CN"):
        replace(problem, runtime=problem.runtime[1:]).validated()


@pytest.mark.parametrize("name", CASES)
def test_problem_from_cn_graph_and_accelerator(name):
    """Our CN graph + hardware loader + Stream's per-CN costs schedule exactly as the reference."""
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files
    from zigzag.multicore.schedule.adapter import CNCost, problem_from_cn_graph

    expected = EXPECTED[name]
    inputs, options = expected["inputs"], expected["options"]
    stacks = [tuple(s) for s in options["layer_stacks"]] if options.get("layer_stacks") else None
    accelerator = load_multicore_accelerator(REF / inputs["hardware"], str(REF))
    graph = cn_graph_from_files(
        accelerator,
        REF / inputs["workload"],
        REF / inputs["mapping"],
        options["mode"],
        stacks,
        cwd=str(REF),
    )
    cns = {tuple(c["id"]): c for c in json.loads((REF / expected["dump"]).read_text())["cns"]}
    keys = list(zip(graph.layer.tolist(), graph.sub_id.tolist()))
    costs = [
        CNCost(
            c["runtime"],
            c["onchip_energy"],
            c["offchip_energy"],
            tuple(c["too_large_operands"]),
            c["offchip_bw"]["wr_in_by_low"],
            c["offchip_bw"]["rd_out_to_low"],
        )
        for c in (cns[k] for k in keys)
    ]
    result = schedule(problem_from_cn_graph(graph, accelerator, costs))
    assert result.latency == expected["latency_cycles"]
    assert rel(result.energy, expected["energy_pJ"]) < 1e-9
    assert result.peak_memory() == expected["peak_memory_bits"]
    assert [(result.start[i], result.end[i]) for i in range(len(keys))] == [
        (cns[k]["start"], cns[k]["end"]) for k in keys
    ]


def test_energy_terms_are_the_sums_of_their_transfers(case):
    """Each transfer is booked under exactly one term; CN energies under the on-/off-chip terms."""
    _, _, problem, result = case
    by_kind: dict[str, list[float]] = {}
    for t in result.transfers:
        by_kind.setdefault(t.kind, []).append(t.memory_energy)
    totals = result.totals
    assert math.isclose(
        totals.total_cn_offchip_memory_energy,
        sum(by_kind.get("offchip_to_core", [])) + float(problem.offchip_energy.sum()),
        rel_tol=1e-12,
    )
    assert math.isclose(
        totals.total_core_to_core_memory_energy, sum(by_kind.get("core_to_core", [])), rel_tol=1e-12
    )
    assert math.isclose(
        totals.total_eviction_to_offchip_memory_energy,
        sum(by_kind.get("eviction_writeback", [])),
        rel_tol=1e-12,
    )
    assert math.isclose(
        totals.total_sink_layer_output_offchip_memory_energy,
        sum(by_kind.get("sink_writeback", [])),
        rel_tol=1e-12,
    )
    assert math.isclose(
        totals.total_cn_onchip_energy, float(problem.onchip_energy.sum()), rel_tol=1e-12
    )
    for mem, timeline in zip(problem.hardware.memories, result.timelines):
        assert max(b for _, b in timeline) <= mem.capacity


FUSED = TESTS / "data" / "stream" / "fused_resnet18_schedule.json.gz"
SMALL = TESTS / "data" / "stream" / "small_schedule_reference.json"


def schedule_with_reference_costs(ref: dict):
    """Our CN graph and hardware for ``ref["inputs"]``, Stream's per-CN costs from ``ref["cns"]``:
    (result, CN keys in our index order, reference CN rows by key)."""
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files
    from zigzag.multicore.schedule.adapter import CNCost, problem_from_cn_graph

    inputs = ref["inputs"]
    accelerator = load_multicore_accelerator(REF / inputs["hardware"], str(REF))
    graph = cn_graph_from_files(
        accelerator,
        REF / inputs["workload"],
        REF / inputs["mapping"],
        inputs["mode"],
        [tuple(s) for s in inputs["layer_stacks"]],
        cwd=str(REF),
    )
    cns = {(c[0], c[1]): c for c in ref["cns"]}
    keys = list(zip(graph.layer.tolist(), graph.sub_id.tolist()))
    assert sorted(keys) == sorted(cns)
    assert [cns[k][2] for k in keys] == graph.core.tolist()
    costs = [CNCost(c[3], c[4], c[5], tuple(c[6]), c[7], c[8]) for c in (cns[k] for k in keys)]
    problem = problem_from_cn_graph(
        graph, accelerator, costs, prefetch=inputs.get("operands_to_prefetch", ())
    )
    return schedule(problem), keys, cns


def assert_equals_reference(result, keys, cns, ref: dict) -> None:
    totals = ref["totals"]
    assert result.latency == totals["latency"]
    assert rel(result.energy, totals["energy"]) < 1e-9
    for term, value in result.totals.as_dict().items():
        assert rel(value, totals[term]) < 1e-9, term
    assert len(result.transfers) == totals["nb_transfers"]
    assert result.peak_memory() == ref["peak_memory_bits"]
    assert [(result.start[i], result.end[i]) for i in range(len(keys))] == [
        (cns[k][9], cns[k][10]) for k in keys
    ]


def test_fused_resnet18_equals_the_reference():
    """ResNet-18 fused on the quad core (1,118 CNs, 53,261 edges; evictions, broadcasts, multi-link
    routes, streamed weights): our CN graph and hardware with Stream's per-CN costs (recorded from
    a reference run) give Stream's schedule, CN by CN."""
    import gzip

    ref = json.loads(gzip.open(FUSED, "rt").read())
    assert_equals_reference(*schedule_with_reference_costs(ref), ref)


@pytest.mark.parametrize("ref", json.loads(SMALL.read_text())["cases"], ids=lambda c: c["case"])
def test_small_cases_with_k_split_and_prefetch_equal_the_reference(ref):
    """Further reference runs: conv1 split in two K groups over cores [1, 0]; weights prefetched."""
    assert_equals_reference(*schedule_with_reference_costs(ref), ref)


@pytest.mark.parametrize("name", CASES)
def test_run_stream_from_files_equals_the_reference(name, tmp_path):
    """The whole chain from the three input files: CN graph, cost table (our ZigZag), schedule."""
    from zigzag.multicore.pipeline import run_stream

    expected = EXPECTED[name]
    inputs, options = expected["inputs"], expected["options"]
    result = run_stream(
        REF / inputs["hardware"],
        REF / inputs["workload"],
        REF / inputs["mapping"],
        options["mode"],
        options.get("layer_stacks"),
        cache=tmp_path / "cache",
        cost_lut_path=tmp_path / "cost_lut.json",
        output=tmp_path / "out",
        cwd=str(REF),
    )
    assert result.latency == expected["latency_cycles"]
    assert rel(result.energy, expected["energy_pJ"]) < 1e-9
    for term, value in expected["energy_terms_pJ"].items():
        assert rel(getattr(result.totals, term), value) < 1e-9, term
    assert result.peak_memory() == expected["peak_memory_bits"]
    assert (tmp_path / "cost_lut.json").exists()
    cns = {tuple(c["id"]): c for c in json.loads((REF / expected["dump"]).read_text())["cns"]}
    rows = list(csv.DictReader((tmp_path / "out" / "schedule.csv").open()))
    assert [(int(r["start"]), int(r["end"])) for r in rows] == [
        (
            cns[(int(r["layer_id"]), int(r["sub_id"]))]["start"],
            cns[(int(r["layer_id"]), int(r["sub_id"]))]["end"],
        )
        for r in rows
    ]


@pytest.mark.parametrize("ref", json.loads(SMALL.read_text())["cases"], ids=lambda c: c["case"])
def test_run_stream_k_split_and_prefetch(ref, tmp_path):
    """The whole chain on the further reference runs (K split over two cores, prefetched weights)."""
    from zigzag.multicore.pipeline import run_stream

    inputs = ref["inputs"]
    result = run_stream(
        REF / inputs["hardware"],
        REF / inputs["workload"],
        REF / inputs["mapping"],
        inputs["mode"],
        inputs["layer_stacks"],
        cache=tmp_path,
        operands_to_prefetch=inputs["operands_to_prefetch"],
        cwd=str(REF),
    )
    assert result.latency == ref["totals"]["latency"]
    assert rel(result.energy, ref["totals"]["energy"]) < 1e-9
    assert result.peak_memory() == ref["peak_memory_bits"]


def test_command_line_run(tmp_path):
    """``zigzag stream run``: conv1 split in two K groups over two cores, weights prefetched."""
    import subprocess
    import sys

    ref = next(
        c for c in json.loads(SMALL.read_text())["cases"] if c["case"] == "ksplit_fused_prefetch_W"
    )
    inputs = ref["inputs"]
    command = [
        sys.executable,
        "-m",
        "zigzag",
        "stream",
        "run",
        "--accelerator",
        inputs["hardware"],
        "--workload",
        inputs["workload"],
        "--mapping",
        inputs["mapping"],
        "--mode",
        "fused",
        "--layer-stacks",
        "0-2",
        "--prefetch",
        "W",
        "--cache",
        str(tmp_path / "cache"),
        "--output",
        str(tmp_path / "out"),
    ]
    subprocess.run(command, cwd=REF, check=True, capture_output=True, text=True)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["latency"] == ref["totals"]["latency"]
    assert rel(summary["energy"], ref["totals"]["energy"]) < 1e-9
    assert summary["peak_memory_bits"] == ref["peak_memory_bits"]
    assert len((tmp_path / "out" / "schedule.csv").read_text().splitlines()) == 1 + len(ref["cns"])


def test_run_stream_needs_fixed_cores(tmp_path):
    from zigzag.multicore.pipeline import run_stream

    mapping = REF / "stream" / "inputs" / "examples" / "mapping" / "tpu_like_quad_core.yaml"
    with pytest.raises(InputError, match="one fixed core per layer"):
        run_stream(
            REF / EXPECTED["lbl"]["inputs"]["hardware"],
            REF / EXPECTED["lbl"]["inputs"]["workload"],
            mapping,
            "lbl",
            cache=tmp_path,
            cwd=str(REF),
        )


@pytest.mark.slow
def test_run_stream_fused_resnet18_from_files(tmp_path):
    """Fused ResNet-18 from the three files (CN graph, 61 cost entries from scratch, schedule)."""
    import gzip

    from zigzag.multicore.pipeline import run_stream

    ref = json.loads(gzip.open(FUSED, "rt").read())
    inputs = ref["inputs"]
    result = run_stream(
        REF / inputs["hardware"],
        REF / inputs["workload"],
        REF / inputs["mapping"],
        "fused",
        inputs["layer_stacks"],
        cache=tmp_path,
        cwd=str(REF),
    )
    assert result.latency == ref["totals"]["latency"]
    assert rel(result.energy, ref["totals"]["energy"]) < 1e-9
    for term, value in result.totals.as_dict().items():
        assert rel(value, ref["totals"][term]) < 1e-9, term
    assert result.peak_memory() == ref["peak_memory_bits"]
