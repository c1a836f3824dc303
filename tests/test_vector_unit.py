"""The vector unit: its accelerator-file section, the cost of vector layers on it (by hand, term
by term), routing without a unit (ZigZag's behaviour, uncosted layers named), and the results
split between the MAC array and the vector unit (docs/models/operators.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from zigzag.cost.result import CostResult, sum_results
from zigzag.errors import InputError
from zigzag.hardware.vector import MAC_ARRAY, UNCOSTED, VECTOR_UNIT, compute_unit
from zigzag.io.accelerator_dict import accelerator_from_dict, accelerator_to_dict
from zigzag.io.loaders import load_accelerator
from zigzag.io.results import layer_table, summary
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.search.jobs import job_key, layer_from_job, layer_job
from zigzag.search.layer_search import search_layer
from zigzag.search.network import evaluate_network
from zigzag.search.options import SearchOptions
from zigzag.steps import tables
from zigzag.workload.workload import Workload, build_layer

DATA = Path(__file__).parent / "data" / "vector"
TINY = DATA / "tiny_vector.yaml"  # 4 lanes; one SRAM: r_cost 10, w_cost 12 pJ per 64-bit access
HARDWARE = Path(__file__).resolve().parents[1] / "inputs" / "hardware"
ENTRIES = [MappingEntry(name="default", spatial_mapping={"D1": (("K", 4),), "D2": (("C", 4),)})]


def layer(name, operator_type, equation, dims, sizes, precision, vector_op, layer_id=0, source=None):
    spec = {"id": layer_id, "name": name, "operator_type": operator_type, "equation": equation,
            "loop_dims": dims, "loop_sizes": sizes, "operand_precision": precision,
            "operand_source": source if source is not None else {"I": layer_id}, "vector_op": vector_op}
    return build_layer(spec, ENTRIES)


def add_layer(layer_id=0, **kw):
    return layer("add", "Add", "O[b][k]=I[b][k]+W[b][k]", ["B", "K"], [4, 16],
                 {"O": 8, "O_final": 8, "I": 8, "W": 8}, "add", layer_id, {"I": layer_id, "W": layer_id}, **kw)


def reduce_layer(layer_id=0):
    return layer("sum", "ReduceSum", "O[b]+=I[b][k]", ["B", "K"], [4, 16], {"O": 16, "O_final": 8, "I": 8},
                 "reduce_sum", layer_id)


def exp_layer(layer_id=0):
    return layer("exp", "Exp", "O[b][k]=I[b][k]", ["B", "K"], [4, 16], {"O": 8, "O_final": 8, "I": 8}, "exp", layer_id)


def gemm_layer(layer_id=0):
    return layer("gemm", "Gemm", "O[b][k]+=W[k][c]*I[b][c]", ["B", "K", "C"], [4, 8, 8],
                 {"O": 16, "O_final": 8, "I": 8, "W": 8}, None, layer_id, {"I": layer_id, "W": layer_id})


# ----- cost by hand ---------------------------------------------------------------------------------

def test_elementwise_add_by_hand():
    """B x K = 4 x 16 adds on 4 lanes: 16 cycles. Every cycle the lanes read 4 I and 4 W bytes
    (32 bits each; a 64-bit port counts ceil(32/64) = 1 access) and write 4 output bytes (1 access)."""
    result, _ = search_layer(add_layer(), load_accelerator(TINY), SearchOptions())
    assert result.compute_unit == VECTOR_UNIT and result.vector_op == "add"
    assert sum(result.spatial_mapping_array["D1"].values()) == 4  # all lanes busy
    ops, cycles = 4 * 16, 16
    assert result.mac_energy == ops * 0.5  # 32 pJ
    assert result.memory_word_access["I"][0]["tl"] == cycles
    assert result.memory_word_access["W"][0]["tl"] == cycles
    assert result.memory_word_access["O"][0]["fl"] == cycles
    memory = cycles * 10 + cycles * 10 + cycles * 12  # I read, W read, O written: 512 pJ
    assert result.mem_energy == memory
    assert result.energy_total == ops * 0.5 + memory == 544
    # I and W share the read port, one cycle each per cycle: stall = windows 2 x (16 - 1) - union 16
    assert result.ideal_cycle == cycles and result.ideal_temporal_cycle == cycles
    assert result.stall_slack_comb == 2 * (cycles - 1) - cycles == 14
    assert result.data_onloading_cycle == 0 and result.data_offloading_cycle == 0  # one memory level
    assert result.latency_total2 == cycles + 14


def test_reduction_by_hand():
    """reduce_sum of 4 rows of 16: 64 operations; each cycle reads 4 inputs and one partial sum
    (16 bits: 1 access) and writes it back (1 access)."""
    result, _ = search_layer(reduce_layer(), load_accelerator(TINY), SearchOptions())
    assert result.compute_unit == VECTOR_UNIT and result.vector_op == "reduce_sum"
    ops, cycles = 64, 16
    assert result.mac_energy == ops * 0.5
    accesses = result.memory_word_access
    assert (accesses["I"][0]["tl"], accesses["O"][0]["tl"], accesses["O"][0]["fl"]) == (cycles, cycles, cycles)
    assert result.mem_energy == cycles * 10 + cycles * 10 + cycles * 12
    assert result.energy_total == 544
    assert result.stall_slack_comb == 14  # I and the partial sums share the read port, as above
    assert result.latency_total2 == 30


def test_operation_cycles_stretch_the_loops():
    """exp costs 4 cycles and 2 pJ an operation: 16 iterations x 4 cycles; the one read per
    iteration then has 4 cycles, so no stall."""
    result, _ = search_layer(exp_layer(), load_accelerator(TINY), SearchOptions())
    assert result.mac_energy == 64 * 2
    assert result.mem_energy == 16 * 10 + 16 * 12
    assert result.ideal_cycle == 64 and result.ideal_temporal_cycle == 64
    assert result.stall_slack_comb == 0
    assert result.latency_total2 == 64


def test_layer_cost_result_recomputes_on_the_vector_view():
    network = evaluate_network(Workload([exp_layer()]), load_accelerator(TINY))
    _, result = network.layers[0]
    assert result.accelerator.operational_array.operation == "exp"
    assert result.cost_detail.result.energy_total == result.energy_total  # the details agree


# ----- routing and parity without a vector unit --------------------------------------------------

def test_routing():
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    assert compute_unit(gemm_layer(), vector) == MAC_ARRAY
    assert compute_unit(add_layer(), vector) == VECTOR_UNIT
    assert compute_unit(add_layer(), plain) == MAC_ARRAY  # ZigZag evaluates Add on the array
    assert compute_unit(exp_layer(), plain) == UNCOSTED


def test_mac_layers_cost_the_same_with_a_vector_unit():
    """The example with a vector unit is the plain one plus `vector_unit:`: MAC layers do not move."""
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    a, _ = search_layer(gemm_layer(), plain, SearchOptions(lpf_limit=4))
    b, _ = search_layer(gemm_layer(), vector, SearchOptions(lpf_limit=4))
    assert {**a.to_dict(), "accelerator_name": None} == {**b.to_dict(), "accelerator_name": None}
    assert a.compute_unit == MAC_ARRAY and a.vector_op is None


def test_without_a_vector_unit_add_stays_on_the_array_and_the_rest_is_uncosted(caplog):
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    tagged = add_layer(0)
    untagged = layer("add", "Add", "O[b][k]=I[b][k]+W[b][k]", ["B", "K"], [4, 16],
                     {"O": 8, "O_final": 8, "I": 8, "W": 8}, None, 0, {"I": 0, "W": 0})
    options = SearchOptions(lpf_limit=4)
    assert search_layer(tagged, plain, options)[0].to_dict() == search_layer(untagged, plain, options)[0].to_dict()
    network = evaluate_network(Workload([gemm_layer(0), exp_layer(1)]), plain, options)
    assert [layer.name for layer, _ in network.layers] == ["gemm"]
    assert network.uncosted == ["exp"]
    assert "left uncosted" in caplog.text and "exp" in caplog.text
    assert summary(network.total, 1, network.uncosted)["uncosted_layers"] == ["exp"]
    assert network.total.vector_unit_energy == 0 and network.total.mac_array_energy == network.total.energy_total


def test_layer_specs_of_mac_layers_are_unchanged():
    assert "vector_op" not in gemm_layer().to_spec()
    assert add_layer().signature()["vector_op"] == "add"


# ----- results split ------------------------------------------------------------------------------

def test_results_split_between_the_units():
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    workload = Workload([gemm_layer(0), exp_layer(1), reduce_layer(2)])
    network = evaluate_network(workload, vector, SearchOptions(lpf_limit=4))
    units = {layer.name: result.compute_unit for layer, result in network.layers}
    assert units == {"gemm": MAC_ARRAY, "exp": VECTOR_UNIT, "sum": VECTOR_UNIT}
    by_name = {layer.name: result for layer, result in network.layers}
    total = network.total
    assert total.mac_array_energy == by_name["gemm"].energy_total
    assert total.mac_array_latency == by_name["gemm"].latency_total2
    assert total.vector_unit_energy == by_name["exp"].energy_total + by_name["sum"].energy_total
    assert total.vector_unit_latency == by_name["exp"].latency_total2 + by_name["sum"].latency_total2
    assert total.mac_array_energy + total.vector_unit_energy == pytest.approx(total.energy_total, rel=1e-12)
    # exp on the example: 64 operations x 6 pJ, 4 cycles each over 32 lanes
    assert by_name["exp"].mac_energy == 64 * 6.0
    assert by_name["exp"].ideal_cycle == 64 // 32 * 4
    # tables, summary, JSON
    table = layer_table(network.layers)
    assert list(table["compute_unit"]) == ["mac_array", "vector_unit", "vector_unit"]
    assert list(table["vector_op"])[1:] == ["exp", "reduce_sum"]
    row = tables.experiment_row({"name": "e", "workload": "w.yaml", "mapping": "m.yaml", "accelerator": "a.yaml",
                                 "options": {"opt": "latency"}}, [r for _, r in network.layers], total, None, [])
    assert row["energy_vector_unit_pJ"] == total.vector_unit_energy
    assert row["latency_mac_array_cycles"] == total.mac_array_latency and row["uncosted_layers"] == 0
    layer_rows = tables.layer_rows(({"id": l.id, "name": l.name, "operator_type": l.operator_type}, r)
                                   for l, r in network.layers)
    assert [r["compute_unit"] for r in layer_rows] == ["mac_array", "vector_unit", "vector_unit"]
    document = summary(total, 3, [])
    assert document["vector_unit_latency"] == total.vector_unit_latency
    for _, result in network.layers:
        assert CostResult.from_dict(json.loads(json.dumps(result.to_dict()))) == CostResult.from_dict(result.to_dict())
    restored = type(total).from_dict(json.loads(json.dumps(total.to_dict())))
    assert restored.vector_unit_energy == total.vector_unit_energy
    assert (total * 2).vector_unit_latency == 2 * total.vector_unit_latency


def test_a_layer_job_keeps_the_vector_layer_and_unit():
    """The workflow's per-layer job: the layer's class and the accelerator's unit survive the JSON,
    and the job evaluates as the API does."""
    accelerator = load_accelerator(TINY)
    job = json.loads(json.dumps(layer_job(add_layer(), accelerator, SearchOptions())))
    again = accelerator_from_dict(job["accelerator"])
    assert again.vector_unit == accelerator.vector_unit
    assert accelerator_to_dict(again) == job["accelerator"]
    restored = layer_from_job(job)
    assert restored.vector_op == "add"
    assert search_layer(restored, again, SearchOptions())[0].energy_total == 544
    mac_job = layer_job(add_layer(), load_accelerator(HARDWARE / "flow_tpu_32x32.yaml"), SearchOptions())
    assert job_key(mac_job) != job_key(job)


def test_stage_api_runs_vector_layers_on_the_unit():
    from zigzag.stages.stage import MainStage
    from zigzag.stages.iterators import WorkloadStage
    from zigzag.stages.evaluation import CostModelStage
    from zigzag.stages.mapping import SpatialMappingGeneratorStage, TemporalMappingGeneratorStage
    from zigzag.stages.reduce import MinimalLatencyStage
    from zigzag.stages.reduce import SumStage

    stages = [SumStage, WorkloadStage, SpatialMappingGeneratorStage, MinimalLatencyStage,
              TemporalMappingGeneratorStage, CostModelStage]
    accelerator = load_accelerator(TINY)
    main = MainStage(stages, accelerator=accelerator, workload=Workload([add_layer()]), loma_lpf_limit=6)
    total, per_layer = main.run()[0]
    assert per_layer[0][0].compute_unit == VECTOR_UNIT
    assert per_layer[0][0].energy_total == search_layer(add_layer(), accelerator, SearchOptions())[0].energy_total
    assert total.vector_unit_energy == total.energy_total


# ----- validation -----------------------------------------------------------------------------------

def _broken(change):
    document = yaml.safe_load(TINY.read_text())
    change(document)
    return document


@pytest.mark.parametrize("change, where, words", [
    (lambda d: d["vector_unit"]["operations"].update(exq={"cycles": 1, "energy": 1}),
     "vector_unit.operations.exq", "did you mean 'exp'"),
    (lambda d: d["vector_unit"]["operations"]["add"].update(energy=-1), "vector_unit.operations.add.energy",
     "must be zero or more"),
    (lambda d: d["vector_unit"]["operations"]["add"].pop("cycles"), "vector_unit.operations.add.cycles", "missing"),
    (lambda d: d["vector_unit"].update(lane=4), "vector_unit.lane", "did you mean 'lanes'"),
    (lambda d: d["vector_unit"].update(lanes=0), "vector_unit.lanes", "must be positive"),
    (lambda d: d["vector_unit"].update(memories=["srm"]), "vector_unit.memories[0]", "did you mean 'sram'"),
    (lambda d: d["vector_unit"].update(memories=["sram", "sram"]), "vector_unit.memories[1]", "listed twice"),
    (lambda d: d["vector_unit"].update(registers={"sram": copy.deepcopy(d["memories"]["sram"])}),
     "vector_unit.registers.sram", "its own name"),
    (lambda d: d["vector_unit"].update(registers={"v": {**copy.deepcopy(d["memories"]["sram"]),
                                                        "served_dimensions": ["D2"]}}),
     "vector_unit.registers.v.served_dimensions[0]", "'D2' is not a dimension"),
    (lambda d: d["memories"]["sram"].update(operands=["I1", "O"]) or [
        p.update(allocation=[a for a in p["allocation"] if not a.startswith("I2")]) for p in d["memories"]["sram"]["ports"]],
     "vector_unit.memories", "holds operand I2"),
])
def test_validation_errors(change, where, words):
    with pytest.raises(InputError) as error:
        validate_accelerator(_broken(change), "acc.yaml")
    message = str(error.value)
    assert where in message and words in message and "\n" not in message


def test_memories_listed_out_of_order():
    document = yaml.safe_load((HARDWARE / "flow_tpu_32x32_vector.yaml").read_text())
    document["vector_unit"]["memories"] = ["dram", "unified_buffer"]
    with pytest.raises(InputError, match=r"vector_unit\.memories\[1\].*innermost first"):
        validate_accelerator(document, "acc.yaml")
