"""The single-layer cost model against the reference's numbers.

Sources of truth:

* ``spec/worked-example.yaml``: two worked examples (every intermediate figure), the chosen
  mapping and results of all 31 resnet18 layers on tpu_like (``network_oracle``) and six layers
  on ascend_like (``cross_check_ascend_like``);
* ``tests/data/oracle/*.json`` (generated from the reference): the chosen evaluation per
  layer for whole networks, and every evaluated candidate for single-layer cases.

Numbers are compared with a relative tolerance of 1e-9 (they are in fact bit-identical).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
import yaml

from support import DATA, ORACLE, REFERENCE, REFERENCE_DATA
from zigzag.cost.model import analyse, evaluate, reduce_balanced
from zigzag.cost.model.latency import PortActivity, updating_window_union
from zigzag.cost.model.quantities import merge_down
from zigzag.cost.result import CostResult, CumulativeResult, sum_results
from zigzag.io.loaders import load_accelerator, load_workload

SPEC = REFERENCE_DATA / "spec" / "worked-example.yaml"
REL = 1e-9


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def assert_close(expected, got, where: str = ""):
    """Recursive comparison: numbers with relative tolerance REL, bools/str exactly,
    lists/tuples element-wise, dicts key-wise (same key sets)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        assert expected == got, f"{where}: expected {expected!r}, got {got!r}"
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert isinstance(got, (int, float)), (
            f"{where}: expected a number {expected!r}, got {got!r}"
        )
        assert math.isclose(expected, got, rel_tol=REL, abs_tol=0.0) or expected == got, (
            f"{where}: expected {expected!r}, got {got!r}"
        )
    elif isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: expected a dict, got {got!r}"
        assert set(expected) == set(got), f"{where}: keys {sorted(expected)} != {sorted(got)}"
        for key in expected:
            assert_close(expected[key], got[key], f"{where}.{key}")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{where}: expected a sequence, got {got!r}"
        assert len(expected) == len(got), f"{where}: length {len(expected)} != {len(got)} ({got!r})"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_close(e, g, f"{where}[{i}]")
    else:
        assert expected == got, f"{where}: expected {expected!r}, got {got!r}"


def per_op(mapping):
    """{op: tuple} -> {op: list} for comparison with YAML."""
    return {op: list(v) for op, v in mapping.items()}


@pytest.fixture(scope="module")
def spec():
    return yaml.safe_load(SPEC.read_text())


_CACHE: dict = {}


def hardware(name: str):
    key = ("hw", name)
    if key not in _CACHE:
        _CACHE[key] = load_accelerator(REFERENCE / "hardware" / f"{name}.yaml")
    return _CACHE[key]


def workload_layers(workload: Path, mapping: Path):
    key = ("wl", str(workload), str(mapping))
    if key not in _CACHE:
        _CACHE[key] = {layer.id: layer for layer in load_workload(workload, mapping).layers}
    return _CACHE[key]


def resnet18(mapping_name: str):
    return workload_layers(
        REFERENCE / "workload" / "resnet18.yaml", REFERENCE / "mapping" / f"{mapping_name}.yaml"
    )


def _spec_data():
    return yaml.safe_load(SPEC.read_text())


_SPEC_DATA = _spec_data()


# ---------------------------------------------------------------------------------------------
# worked examples, field by field
# ---------------------------------------------------------------------------------------------

WORKED = _SPEC_DATA.get("worked_examples", [])


@pytest.fixture(
    scope="module", params=range(len(WORKED)), ids=[f"layer{w['layer']['id']}" for w in WORKED]
)
def worked(request):
    example = WORKED[request.param]
    layer = resnet18("tpu_like")[example["layer"]["id"]]
    sm = example["spatial_mapping_per_level"]
    detail = analyse(
        layer,
        hardware("tpu_like"),
        sm["fractional"],
        sm["integer"],
        example["temporal_mapping"]["as_given"],
    )
    return example, layer, detail


def test_worked_layer_derived(worked):
    example, layer, _ = worked
    expected = example["layer_derived"]
    assert list(layer.operands) == expected["layer_operands"]
    assert list(layer.inputs) == expected["input_operands"]
    assert layer.total_macs == expected["total_mac_count"]
    assert {op: layer.operand_size_elem(op) for op in layer.operands} == expected[
        "operand_size_elem"
    ]
    assert {op: list(v) for op, v in layer.relevant.items()} == expected["relevant"]
    assert {op: sorted(v) for op, v in layer.irrelevant.items()} == {
        op: sorted(v) for op, v in expected["irrelevant"].items()
    }
    assert layer.pr_sizes == expected["pr_full_sizes"]


def test_worked_mappings(worked):
    example, _, detail = worked
    r = detail.result
    sm = example["spatial_mapping_per_level"]
    assert_close(sm["fractional"], per_op(r.spatial_mapping), "spatial fractional")
    assert_close(sm["integer"], per_op(r.spatial_mapping_int), "spatial integer")
    assert_close(example["temporal_mapping"]["as_given"], per_op(r.temporal_mapping), "temporal")
    assert_close(
        example["temporal_mapping"]["after_merge_down"],
        per_op(r.temporal_mapping_stationary),
        "temporal after merge-down",
    )


def test_worked_derived(worked):
    example, _, d = worked
    exp = example["derived"]
    ops = list(d.temporal)
    assert d.total_cycle == exp["total_cycle"]
    got = {
        "mac_level_data_stationary_cycle": {op: d.temporal[op].mac_st for op in ops},
        "cycle_cabl_level": {op: list(d.temporal[op].cabl) for op in ops},
        "top_r_loop_size": {op: list(d.temporal[op].top_r) for op in ops},
        "top_ir_loop_size": {op: list(d.temporal[op].top_ir) for op in ops},
        "unit_count": {op: list(d.spatial[op].unit_count) for op in ops},
        "unit_unique": {op: list(d.spatial[op].unit_unique) for op in ops},
        # the YAML lists the reference's mem_bw_boost, i.e. without the final 1
        "mem_bw_boost": {op: list(d.spatial[op].boost[:-1]) for op in ops},
        "psum_flag": d.movement["O"].psum,
        "precision_per_arch_index": {op: d.movement[op].precision for op in ops},
        "data_elem_per_instance_D": {op: d.movement[op].D for op in ops},
        "data_bit_per_instance": {op: d.movement[op].bits for op in ops},
        "effective_data_bit": {op: d.movement[op].eff_bits for op in ops},
    }
    for key, value in got.items():
        assert_close(exp[key], value, key)
    assert set(exp) == set(got) | {"total_cycle"}


def test_worked_per_operand_per_level(worked):
    example, _, d = worked
    r = d.result
    counts = d.element_move_counts()
    for op, levels in example["per_operand_per_level"].items():
        for entry in levels:
            k = entry["level"]
            where = f"{op}[{k}]"
            flows = d.movement[op].flows[k]
            flows_int = d.movement_int[op].flows[k]
            got = {
                "level": k,
                "memory": r.memory_names[op][k],
                "instances": d.spatial[op].unit_count[k + 1],
                "period": {dr: f.period for dr, f in flows.items()},
                "period_count": {dr: f.count for dr, f in flows.items()},
                "amount_per_period_elems": {dr: f.amount for dr, f in flows.items()},
                "precision_bits": {dr: f.precision for dr, f in flows.items()},
                "req_bw_aver_int_mapping": {dr: f.bw_aver for dr, f in flows_int.items()},
                "inst_window_int_mapping": {dr: f.window for dr, f in flows_int.items()},
                "memory_word_access": r.memory_word_access[op][k],
                "energy_pJ": r.mem_energy_breakdown_further[op][k],
                "energy_level_total_pJ": r.mem_energy_breakdown[op][k],
                "real_cycles": d.real_cycles[op][k],
                "allowed_cycles": d.allowed_cycles[op][k],
                "util_individual": r.mem_utilization_individual[op][k],
                "util_shared": r.mem_utilization_shared[op][k],
                "effective_util_individual": r.effective_mem_utilization_individual[op][k],
                "effective_util_shared_after_db_pass": r.effective_mem_utilization_shared[op][k],
                "double_buffer_flag": r.double_buffer[op][k + 1],
                "elem_move_count_informational": counts[op][k],
            }
            assert set(entry) == set(got), where
            for key, value in got.items():
                assert_close(entry[key], value, f"{where}.{key}")


def test_worked_ports_and_loading(worked):
    example, _, d = worked
    exp = example["latency_detail"]
    got_ports = []
    for port in d.ports:
        record = {
            "memory": port.memory,
            "port": port.port,
            "activities": [
                {
                    "op": a.op,
                    "level": a.level,
                    "dir": a.direction,
                    "real": a.real,
                    "allowed": a.allowed,
                    "period": a.period,
                    "period_count": a.count,
                    "stall_or_slack": a.stall_or_slack,
                    "mem_updating_window": a.updating_window,
                }
                for a in port.activities
            ],
            "stall_slack_port": port.stall_slack,
        }
        if port.window_union is not None:
            record["window_union"] = port.window_union
        got_ports.append(record)
    assert_close(exp["port_activities"], got_ports, "port_activities")
    assert d.stall_slack_comb == exp["stall_slack_comb"]
    assert_close(exp["loading_table"], d.loading_table, "loading_table")
    assert_close(exp["offloading_table"], d.offloading_table, "offloading_table")
    parts = d.onloading_parts
    assert_close(
        exp["onloading_parts"],
        {"individual": parts.individual, "half_shared": parts.half_shared, "shared": parts.shared},
        "onloading_parts",
    )
    assert_close(exp["offloading_pairs"], d.offloading_pairs, "offloading_pairs")


def test_worked_results(worked):
    example, _, d = worked
    r = d.result
    for key, value in example["results"].items():
        got = getattr(r, key)
        assert_close(value, per_op(got) if isinstance(got, dict) else got, key)
    # types as in the reference
    assert isinstance(r.ideal_cycle, int) and isinstance(r.stall_slack_comb, int)
    assert isinstance(r.latency_total2, float) and isinstance(r.ideal_temporal_cycle, float)


# ---------------------------------------------------------------------------------------------
# per-layer oracle of the whole network (tpu_like) and the ascend_like cross-check
# ---------------------------------------------------------------------------------------------

LAYER_FIELDS = (
    "memory_word_access",
    "mem_energy_breakdown",
    "mac_energy",
    "mem_energy",
    "energy_total",
    "ideal_cycle",
    "ideal_temporal_cycle",
    "stall_slack_comb",
    "data_onloading_cycle",
    "data_offloading_cycle",
    "latency_total0",
    "latency_total1",
    "latency_total2",
)


def _evaluate_spec_layer(entry, layers, accelerator):
    layer = layers[entry["id"]]
    return evaluate(
        layer,
        accelerator,
        entry["spatial_mapping_per_level_fractional"],
        entry["spatial_mapping_per_level_integer"],
        entry["temporal_mapping"],
        spatial_mapping_array=entry["spatial_mapping_user_after_clipping"],
    )


def _check_spec_layer(entry, result):
    assert result.layer_id == entry["id"] and result.layer_name == entry["name"]
    for key in LAYER_FIELDS:
        got = getattr(result, key)
        assert_close(
            entry[key], per_op(got) if isinstance(got, dict) else got, f"layer {entry['id']}.{key}"
        )
    assert_close(
        entry["spatial_mapping_per_level_integer"], per_op(result.spatial_mapping_int), "spatial"
    )


NETWORK = _SPEC_DATA.get("network_oracle", {}).get("layers", [])
ASCEND = _SPEC_DATA.get("cross_check_ascend_like", {}).get("layers", [])


@pytest.mark.parametrize("entry", NETWORK, ids=[f"layer{e['id']}" for e in NETWORK])
def test_network_oracle_layer(entry):
    _check_spec_layer(
        entry, _evaluate_spec_layer(entry, resnet18("tpu_like"), hardware("tpu_like"))
    )


def test_network_oracle_totals(spec):
    layers, accelerator = resnet18("tpu_like"), hardware("tpu_like")
    entries = sorted(spec["network_oracle"]["layers"], key=lambda e: e["id"])
    total = sum_results(_evaluate_spec_layer(e, layers, accelerator) for e in entries)
    expected = spec["network_oracle"]["network_totals"]
    assert_close(expected["energy_total"], total.energy_total, "energy_total")
    assert_close(expected["latency_total2"], total.latency_total2, "latency_total2")
    assert total.layer_ids == tuple(e["id"] for e in entries)
    assert math.isclose(
        total.energy_total, expected["reference_test_expectation"]["energy"], rel_tol=1e-9
    )


@pytest.mark.parametrize("entry", ASCEND, ids=[f"layer{e['id']}" for e in ASCEND])
def test_ascend_like_layer(entry):
    _check_spec_layer(
        entry, _evaluate_spec_layer(entry, resnet18("ascend_like"), hardware("ascend_like"))
    )


# ---------------------------------------------------------------------------------------------
# oracle files generated from the reference (tests/data/oracle)
# ---------------------------------------------------------------------------------------------


def _load_oracle(stem: str):
    for path in (ORACLE / f"{stem}.json", ORACLE / f"{stem}.json.gz"):
        if path.exists():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt") as fh:
                return json.load(fh)
    return None


def _oracle_inputs(case):
    def source(key):
        base = REFERENCE if case["sources"][key] == "reference" else DATA
        return base / case[key]

    return source("workload"), source("accelerator"), source("mapping")


ORACLE_FIELDS = (
    "energy_total",
    "latency_total2",
    "mac_energy",
    "mem_energy",
    "mem_energy_breakdown",
    "mem_energy_breakdown_further",
    "memory_word_access",
    "latency_total0",
    "latency_total1",
    "ideal_cycle",
    "ideal_temporal_cycle",
    "stall_slack_comb",
    "data_onloading_cycle",
    "data_offloading_cycle",
    "mac_spatial_utilization",
    "mac_utilization0",
    "mac_utilization1",
    "mac_utilization2",
    "temporal_mapping_stationary",
)


def _check_oracle_layer(entry, result: CostResult):
    where = f"layer {entry['id']}"
    for key in ORACLE_FIELDS:
        got = getattr(result, key)
        assert_close(entry[key], per_op(got) if isinstance(got, dict) else got, f"{where}.{key}")
    assert_close(
        entry["mem_utili_shared"],
        per_op(result.mem_utilization_shared),
        f"{where}.mem_utili_shared",
    )
    assert_close(entry["memories"], per_op(result.memory_names), f"{where}.memories")


@pytest.mark.parametrize(
    "stem",
    [
        "resnet18_yaml__tpu_like",
        "resnet18_yaml__ascend_like",
        "resnet18_onnx__tpu_like",
        "resnet18_onnx__ascend_like",
    ],
)
def test_oracle_network_file(stem):
    data = _load_oracle(stem)
    assert data is not None and "layers" in data, f"{stem}: oracle file missing or without results"
    workload, accelerator_path, mapping = _oracle_inputs(data["case"])
    accelerator = load_accelerator(accelerator_path)
    layers = workload_layers(workload, mapping)
    results = []
    for entry in data["layers"]:
        assert entry["accelerator_name"] == accelerator.name
        result = evaluate(
            layers[entry["id"]],
            accelerator,
            entry["spatial_mapping_fractional"],
            entry["spatial_mapping_int"],
            entry["temporal_mapping"],
            spatial_mapping_array=entry["spatial_mapping"],
        )
        _check_oracle_layer(entry, result)
        results.append(result)
    total = sum_results(results)  # in the reference's processing order
    assert_close(data["energy_total"], total.energy_total, "network energy_total")
    assert_close(data["latency_total2"], total.latency_total2, "network latency_total2")


CANDIDATE_CASES = sorted(
    p.name.split(".json")[0]
    for p in ORACLE.glob("*.json*")
    if "__" in p.name and p.name.split("__")[0].startswith(("resnet18_L", "synth_"))
)


@pytest.mark.parametrize("stem", CANDIDATE_CASES)
def test_oracle_candidates(stem):
    """Every temporal mapping the reference evaluated with the chosen spatial mapping."""
    data = _load_oracle(stem)
    assert data is not None and "layers" in data, f"{stem}: oracle file missing or without results"
    workload, accelerator_path, mapping = _oracle_inputs(data["case"])
    accelerator = load_accelerator(accelerator_path)
    layers = workload_layers(workload, mapping)
    checked = 0
    for entry in data["layers"]:
        if entry["accelerator_name"] != accelerator.name:
            continue
        layer = layers[entry["id"]]
        fractional, integer = entry["spatial_mapping_fractional"], entry["spatial_mapping_int"]
        _check_oracle_layer(
            entry, evaluate(layer, accelerator, fractional, integer, entry["temporal_mapping"])
        )
        for cand in entry.get("candidates", []):
            if cand["spatial_mapping"] != entry["spatial_mapping"]:
                continue
            r = evaluate(layer, accelerator, fractional, integer, cand["temporal_mapping"])
            for key in (
                "energy_total",
                "latency_total2",
                "latency_total0",
                "stall_slack_comb",
                "data_onloading_cycle",
                "data_offloading_cycle",
            ):
                assert_close(cand[key], getattr(r, key), f"candidate {cand['index']}.{key}")
            checked += 1
    assert checked, f"{stem}: no candidates with the chosen spatial mapping"


# ---------------------------------------------------------------------------------------------
# result objects
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", NETWORK[:3] + ASCEND[-1:], ids=lambda e: f"layer{e['id']}")
def test_cost_result_json_round_trip(entry):
    name = "ascend_like" if entry in ASCEND else "tpu_like"
    result = _evaluate_spec_layer(entry, resnet18(name), hardware(name))
    text = json.dumps(result.to_dict())
    again = CostResult.from_dict(json.loads(text))
    assert again == result
    assert json.dumps(again.to_dict()) == text


def test_cumulative_json_round_trip_and_scaling(spec):
    layers, accelerator = resnet18("tpu_like"), hardware("tpu_like")
    a, b = (
        _evaluate_spec_layer(e, layers, accelerator) for e in spec["network_oracle"]["layers"][:2]
    )
    total = a + b
    assert isinstance(total, CumulativeResult)
    assert total == sum_results([a, b])
    assert CumulativeResult.from_dict(json.loads(json.dumps(total.to_dict()))) == total
    assert total.mac_utilization2 == total.ideal_cycle / total.latency_total2
    assert total.mac_spatial_utilization == (a.ideal_cycle + b.ideal_cycle) / (
        a.ideal_temporal_cycle + b.ideal_temporal_cycle
    )
    o_tl = [r.memory_word_access["O"][0]["tl"] for r in (a, b)]
    assert total.memory_word_access["O"][0]["tl"] == sum(o_tl)
    assert sum([a, b]) == total  # built-in sum works too
    twice = total * 2
    assert twice.energy_total == total.energy_total * 2
    assert twice.mac_utilization2 == total.mac_utilization2
    assert twice.memory_word_access["W"][1]["tl"] == 2 * total.memory_word_access["W"][1]["tl"]


def test_area_total():
    accelerator = hardware("ascend_like")
    entry = ASCEND[0]
    result = _evaluate_spec_layer(entry, resnet18("ascend_like"), accelerator)
    expected = accelerator.operational_array.total_area + sum(
        m.area * accelerator.unroll_count(m) for m in accelerator.memories
    )
    assert result.area_total == expected
    assert set(result.area_memories) == {m.name for m in accelerator.memories}


# ---------------------------------------------------------------------------------------------
# the algorithms' own examples from the spec
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cycles, minima, surplus, expected",
    [
        ([100], [10], 50.5, ([49.5], [50.5])),  # the surplus runs out: spent in full
        ([100], [10], 200, ([10], [90.0])),  # down to the minimum; the minimum's int kept
        ([100], [10], 90.0, ([10], [90.0])),  # exactly enough
        ([100], [10], 0, ([100], [0.0])),  # nothing to spend
        ([7.5], [10], 3, ([10.0], [-2.5])),  # above its minimum already: raised to it
    ],
)
def test_reduce_balanced_one_transfer(cycles, minima, surplus, expected):
    """One transfer on a port (the short path) takes the loop's steps: the same values and types."""
    got = reduce_balanced(cycles, minima, surplus)
    assert got == expected
    assert [type(v) for part in got for v in part] == [type(v) for part in expected for v in part]


def test_reduce_balanced_over_reduces():
    # conv2_1, dram rw_port_1: I1 tl 26912 (min 26912), I2 tl 4608 (min 5), O fl 25088 (min 1)
    remaining, reductions = reduce_balanced([26912, 4608, 25088], [26912, 5, 1], 112896)
    assert remaining == [-2778, 5, -4602]
    assert reductions == [29690.0, 4603.0, 29690.0]
    assert reduce_balanced([10, 5], [1, 1], 0) == ([10, 5], [0.0, 0.0])
    remaining, _ = reduce_balanced([10, 4], [2, 1], 3)
    assert remaining == [7.0, 4]


def test_window_union_example():
    acts = [PortActivity("O", 0, "tl", 1, 1, 4, 8), PortActivity("O", 1, "fl", 1, 2, 8, 4)]
    assert updating_window_union(acts) == 12
    # an activity using its whole period short-cuts to period x count
    acts = [PortActivity("I", 0, "tl", 1, 1, 1, 100), PortActivity("O", 1, "th", 5, 100, 100, 1)]
    assert updating_window_union(acts) == 100


def test_merge_down():
    ir = frozenset({"C", "FX", "FY"})
    levels = ((("K", 2),), (("C", 2), ("FX", 3), ("K", 4)), (("FY", 3),))
    stationary, mac_st = merge_down(levels, ir)
    assert stationary == ((("K", 2), ("C", 2), ("FX", 3)), (("K", 4), ("FY", 3)), ())
    assert mac_st == 1
    stationary, mac_st = merge_down(((), (("C", 2),), (("FX", 3), ("K", 2))), ir)
    assert stationary == ((("C", 2), ("FX", 3)), (), (("K", 2),))
    assert mac_st == 6


def test_access_same_data_flag_off():
    """With the flag off, level-0 input reads are charged per MAC-level period of 1 (docs/models/cost-model.md#data-movement).

    Reference figures obtained by running the reference on resnet18 layer 0 / tpu_like with
    ``access_same_data_considered_as_no_access`` forced to False (its API hardcodes True);
    the layer's temporal ordering is user-fixed, so the mapping is the network oracle's.
    """
    entry = NETWORK[0]
    assert entry["id"] == 0
    layer = resnet18("tpu_like")[0]
    result = evaluate(
        layer,
        hardware("tpu_like"),
        entry["spatial_mapping_per_level_fractional"],
        entry["spatial_mapping_per_level_integer"],
        entry["temporal_mapping"],
        access_same_data_considered_as_no_access=False,
    )
    assert_close(377414502.848, result.energy_total, "energy_total")
    assert_close(2477127.0, result.latency_total2, "latency_total2")
    assert result.memory_word_access["W"][0]["tl"] == 118013952  # was 9408 with the flag on
    assert result.memory_word_access["I"][0]["tl"] == 38416
