"""The vector unit: its accelerator-file section, the cost of vector layers on it (by hand, term
by term), routing without a unit (ZigZag's behaviour, uncosted layers named), and the results
split between the MAC array and the vector unit (docs/models/operators.md)."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
import yaml

from zigzag.cost.array import accelerator_area_um2
from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.hardware.vector import MAC_ARRAY, UNCOSTED, VECTOR_UNIT, compute_unit
from zigzag.io.accelerator_dict import accelerator_from_dict, accelerator_to_dict
from zigzag.io.loaders import load_accelerator
from zigzag.io.run_files import file_stem, summary
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.jobs import job_key, layer_from_job, layer_job
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.io import tables
from zigzag.workload.workload import Workload, build_layer
from support import REPO, TESTS
from support.steps import run_steps

DATA = TESTS / "data" / "vector"
TINY = DATA / "tiny_vector.yaml"  # 4 lanes; one SRAM: r_cost 10, w_cost 12 pJ per 64-bit access
HARDWARE = REPO / "inputs" / "hardware"
ENTRIES = [MappingEntry(name="default", spatial_mapping={"D1": (("K", 4),), "D2": (("C", 4),)})]


def layer(
    name, operator_type, equation, dims, sizes, precision, vector_op, layer_id=0, source=None
):
    spec = {
        "id": layer_id,
        "name": name,
        "operator_type": operator_type,
        "equation": equation,
        "loop_dims": dims,
        "loop_sizes": sizes,
        "operand_precision": precision,
        "operand_source": source if source is not None else {"I": layer_id},
        "vector_op": vector_op,
    }
    return build_layer(spec, ENTRIES)


def add_layer(layer_id=0, **kw):
    return layer(
        "add",
        "Add",
        "O[b][k]=I[b][k]+W[b][k]",
        ["B", "K"],
        [4, 16],
        {"O": 8, "O_final": 8, "I": 8, "W": 8},
        "add",
        layer_id,
        {"I": layer_id, "W": layer_id},
        **kw,
    )


def reduce_layer(layer_id=0):
    return layer(
        "sum",
        "ReduceSum",
        "O[b]+=I[b][k]",
        ["B", "K"],
        [4, 16],
        {"O": 16, "O_final": 8, "I": 8},
        "reduce_sum",
        layer_id,
    )


def exp_layer(layer_id=0):
    return layer(
        "exp",
        "Exp",
        "O[b][k]=I[b][k]",
        ["B", "K"],
        [4, 16],
        {"O": 8, "O_final": 8, "I": 8},
        "exp",
        layer_id,
    )


def gemm_layer(layer_id=0):
    return layer(
        "gemm",
        "Gemm",
        "O[b][k]+=W[k][c]*I[b][c]",
        ["B", "K", "C"],
        [4, 8, 8],
        {"O": 16, "O_final": 8, "I": 8, "W": 8},
        None,
        layer_id,
        {"W": layer_id},
    )


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
    assert (
        result.data_onloading_cycle == 0 and result.data_offloading_cycle == 0
    )  # one memory level
    assert result.latency_total2 == cycles + 14


def test_reduction_by_hand():
    """reduce_sum of 4 rows of 16: 64 operations; each cycle reads 4 inputs and one partial sum
    (16 bits: 1 access) and writes it back (1 access)."""
    result, _ = search_layer(reduce_layer(), load_accelerator(TINY), SearchOptions())
    assert result.compute_unit == VECTOR_UNIT and result.vector_op == "reduce_sum"
    ops, cycles = 64, 16
    assert result.mac_energy == ops * 0.5
    accesses = result.memory_word_access
    assert (accesses["I"][0]["tl"], accesses["O"][0]["tl"], accesses["O"][0]["fl"]) == (
        cycles,
        cycles,
        cycles,
    )
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
    assert compute_unit(add_layer(), plain) == UNCOSTED
    assert compute_unit(exp_layer(), plain) == UNCOSTED
    unit = vector.vector_unit
    assert (
        compute_unit(
            exp_layer(),
            dataclasses.replace(
                vector,
                vector_unit=dataclasses.replace(
                    unit, operations={k: v for k, v in unit.operations.items() if k != "exp"}
                ),
            ),
        )
        == UNCOSTED
    )


def test_mac_layers_cost_the_same_with_a_vector_unit():
    """The example with a vector unit is the plain one plus `vector_unit:`: MAC layers do not move."""
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    a, _ = search_layer(gemm_layer(), plain, SearchOptions(lpf_limit=4))
    b, _ = search_layer(gemm_layer(), vector, SearchOptions(lpf_limit=4))
    same = ("accelerator_name", "area_operational_array", "area_memories")
    assert {**a.to_dict(), **dict.fromkeys(same)} == {**b.to_dict(), **dict.fromkeys(same)}
    assert a.compute_unit == MAC_ARRAY and a.vector_op is None
    # the area adds the unit's 32 lanes (1200 um2 each) and their registers (5120 um2 each)
    assert b.area_total - a.area_total == pytest.approx(32 * 1200 + 32 * 5120)


def test_without_a_vector_unit_vector_layers_are_uncosted_and_named(caplog):
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    options = SearchOptions(lpf_limit=4)
    network = evaluate_network(
        Workload([gemm_layer(0), exp_layer(1), add_layer(2)]), plain, options
    )
    assert [layer.name for layer, _ in network.layers] == ["gemm"]
    assert network.uncosted == ["exp", "add"]
    assert "2 vector layer(s) left uncosted" in caplog.text and "exp, add" in caplog.text
    assert summary(network.total, 1, network.uncosted)["uncosted_layers"] == ["exp", "add"]
    alone = evaluate_network(Workload([gemm_layer(0)]), plain, options)
    assert alone.total == network.total and alone.uncosted == []
    assert (
        network.total.vector_unit_energy == 0
        and network.total.mac_array_energy == network.total.energy_total
    )


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
    assert (
        total.vector_unit_latency == by_name["exp"].latency_total2 + by_name["sum"].latency_total2
    )
    assert total.mac_array_energy + total.vector_unit_energy == pytest.approx(
        total.energy_total, rel=1e-12
    )
    # exp on the example: 64 operations x 6 pJ, 4 cycles each over 32 lanes
    assert by_name["exp"].mac_energy == 64 * 6.0
    assert by_name["exp"].ideal_cycle == 64 // 32 * 4
    # tables, summary, JSON
    table = tables.layer_rows(network.layers)
    assert [r["compute_unit"] for r in table] == ["mac_array", "vector_unit", "vector_unit"]
    assert [r["vector_op"] for r in table][1:] == ["exp", "reduce_sum"]
    # each layer's operation count (MACs, the vector layers' operations), so the step's work adds up
    assert [r["ops"] for r in table] == [layer.total_macs for layer, _ in network.layers]
    assert table[1]["ops"] == 64
    row = tables.experiment_row(
        {
            "name": "e",
            "workload": "w.yaml",
            "mapping": "m.yaml",
            "accelerator": "a.yaml",
            "options": {"opt": "latency"},
        },
        [r for _, r in network.layers],
        total,
        None,
        [],
    )
    assert row["energy_vector_unit_pJ"] == total.vector_unit_energy
    assert (
        row["latency_mac_array_cycles"] == total.mac_array_latency and row["uncosted_layers"] == 0
    )
    # a plan entry (the workflow's) gives the same row as the layer itself
    entries = [
        ({"id": l.id, "name": l.name, "operator_type": l.operator_type, "spec": l.to_spec()}, r)
        for l, r in network.layers
    ]
    assert tables.layer_rows(entries) == table
    document = summary(total, 3, [])
    assert document["vector_unit_latency"] == total.vector_unit_latency
    for _, result in network.layers:
        assert CostResult.from_dict(
            json.loads(json.dumps(result.to_dict()))
        ) == CostResult.from_dict(result.to_dict())
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
    mac_job = layer_job(
        add_layer(), load_accelerator(HARDWARE / "flow_tpu_32x32.yaml"), SearchOptions()
    )
    assert job_key(mac_job) != job_key(job)


def test_stage_api_runs_vector_layers_on_the_unit():
    from zigzag.stages.stage import MainStage
    from zigzag.stages.iterators import WorkloadStage
    from zigzag.stages.evaluation import CostModelStage
    from zigzag.stages.mapping import SpatialMappingGeneratorStage, TemporalMappingGeneratorStage
    from zigzag.stages.reduce import MinimalLatencyStage
    from zigzag.stages.reduce import SumStage

    stages = [
        SumStage,
        WorkloadStage,
        SpatialMappingGeneratorStage,
        MinimalLatencyStage,
        TemporalMappingGeneratorStage,
        CostModelStage,
    ]
    accelerator = load_accelerator(TINY)
    main = MainStage(
        stages, accelerator=accelerator, workload=Workload([add_layer()]), loma_lpf_limit=6
    )
    total, per_layer = main.run()[0]
    assert per_layer[0][0].compute_unit == VECTOR_UNIT
    assert (
        per_layer[0][0].energy_total
        == search_layer(add_layer(), accelerator, SearchOptions())[0].energy_total
    )
    assert total.vector_unit_energy == total.energy_total


# ----- validation -----------------------------------------------------------------------------------


def _broken(change):
    document = yaml.safe_load(TINY.read_text())
    change(document)
    return document


@pytest.mark.parametrize(
    "change, where, words",
    [
        (
            lambda d: d["vector_unit"]["operations"].update(exq={"cycles": 1, "energy": 1}),
            "vector_unit.operations.exq",
            "did you mean 'exp'",
        ),
        (
            lambda d: d["vector_unit"]["operations"]["add"].update(energy=-1),
            "vector_unit.operations.add.energy",
            "must be zero or more",
        ),
        (
            lambda d: d["vector_unit"]["operations"]["add"].pop("cycles"),
            "vector_unit.operations.add.cycles",
            "missing",
        ),
        (lambda d: d["vector_unit"].update(lane=4), "vector_unit.lane", "did you mean 'lanes'"),
        (lambda d: d["vector_unit"].update(lanes=0), "vector_unit.lanes", "must be positive"),
        (
            lambda d: d["vector_unit"].update(memories=["srm"]),
            "vector_unit.memories[0]",
            "did you mean 'sram'",
        ),
        (
            lambda d: d["vector_unit"].update(memories=["sram", "sram"]),
            "vector_unit.memories[1]",
            "listed twice",
        ),
        (
            lambda d: d["vector_unit"].update(
                registers={"sram": copy.deepcopy(d["memories"]["sram"])}
            ),
            "vector_unit.registers.sram",
            "its own name",
        ),
        (
            lambda d: d["vector_unit"].update(
                registers={
                    "v": {**copy.deepcopy(d["memories"]["sram"]), "served_dimensions": ["D2"]}
                }
            ),
            "vector_unit.registers.v.served_dimensions[0]",
            "'D2' is not a dimension",
        ),
        (
            lambda d: (
                d["memories"]["sram"].update(operands=["I1", "O"])
                or [
                    p.update(allocation=[a for a in p["allocation"] if not a.startswith("I2")])
                    for p in d["memories"]["sram"]["ports"]
                ]
            ),
            "vector_unit.memories",
            "holds operand I2",
        ),
    ],
)
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


# ----- the workflow's steps -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workflow_results(tmp_path_factory):
    """A small grouped-query attention block imported with every operator, run through every step of
    the workflow (parse, split, per-layer jobs, sum, save, compare) on the TPU-like example with and
    without its vector unit."""
    import onnx
    from support.llm_graphs import gqa_attention

    folder = tmp_path_factory.mktemp("vector_workflow")
    onnx.save(gqa_attention("packed", seq=8), folder / "gqa.onnx")
    experiments = [
        {
            "name": name,
            "workload": str(folder / "gqa.onnx"),
            "accelerator": str(HARDWARE / f"{name}.yaml"),
            "mapping": str(HARDWARE.parent / "mapping" / "flow_tpu_32x32.yaml"),
            "lpf_limit": 3,
            "operators": "all",
        }
        for name in ("flow_tpu_32x32_vector", "flow_tpu_32x32")
    ]
    return run_steps({"experiments": experiments}, folder / "results")


def test_workflow_splits_results_by_unit(workflow_results):
    from zigzag.steps.pipeline import plan_keys

    folder = workflow_results / "flow_tpu_32x32_vector"
    layers = tables.read_csv(folder / "layers.csv")
    units = {row["compute_unit"] for row in layers}
    assert units == {"mac_array", "vector_unit"}
    assert {row["vector_op"] for row in layers if row["compute_unit"] == "vector_unit"} >= {
        "exp",
        "reduce_max",
        "div",
    }
    row = tables.read_csv(folder / "summary.csv")[0]
    total = json.loads((folder / "results.json").read_text())["total"]
    assert total["vector_unit_energy"] > 0
    assert float(row["energy_vector_unit_pJ"]) == pytest.approx(
        total["vector_unit_energy"], rel=1e-9
    )
    assert float(row["energy_mac_array_pJ"]) + float(row["energy_vector_unit_pJ"]) == pytest.approx(
        float(row["energy_pJ"]), rel=1e-9
    )
    assert float(row["latency_mac_array_cycles"]) + float(
        row["latency_vector_unit_cycles"]
    ) == pytest.approx(float(row["latency_cycles"]), rel=1e-9)
    vector_energy = sum(float(r["energy_pJ"]) for r in layers if r["compute_unit"] == "vector_unit")
    assert vector_energy == pytest.approx(total["vector_unit_energy"], rel=1e-9)
    assert int(row["uncosted_layers"]) == 0 and total["uncosted_layers"] == []
    assert len(plan_keys(folder / "plan.json")) < len(layers)  # identical layers: one job
    exp_row = next(r for r in layers if r["vector_op"] == "exp")
    details = json.loads((folder / "layers" / f"{file_stem(exp_row['name'])}.json").read_text())
    assert details["inputs"]["layer"]["vector_op"] == "exp"
    assert (
        details["inputs"]["accelerator"]["operational_array"]["operational_unit"]["energy_cost"]
        == 6.0
    )
    assert details["inputs"]["accelerator"]["operational_array"]["dimensions"] == {"D1": 32}


def test_workflow_names_uncosted_layers_without_a_vector_unit(workflow_results):
    plain = workflow_results / "flow_tpu_32x32"
    with_unit = workflow_results / "flow_tpu_32x32_vector"
    summary_json = json.loads((plain / "summary.json").read_text())
    row = tables.read_csv(plain / "summary.csv")[0]
    assert int(row["uncosted_layers"]) == len(summary_json["uncosted_layers"]) == 56
    assert any("56 vector layer(s) left uncosted" in note for note in summary_json["notes"])
    assert {r["compute_unit"] for r in tables.read_csv(plain / "layers.csv")} == {"mac_array"}
    assert float(row["energy_vector_unit_pJ"]) == 0
    # the matrix products cost the same with and without the unit, except those reading or writing a
    # vector layer's operand in the unified buffer (docs/models/per-token.md#intermediates-kept-on-chip)
    from zigzag.hardware.intermediates import on_chip_accelerators
    from zigzag.io.loaders import load_inputs
    from zigzag.mapping_search.network import evaluated_layers

    workload, vector = load_inputs(
        workflow_results.parent / "gqa.onnx",
        HARDWARE / "flow_tpu_32x32_vector.yaml",
        HARDWARE.parent / "mapping" / "flow_tpu_32x32.yaml",
        operators="all",
    )
    trimmed = on_chip_accelerators(evaluated_layers(workload.layers, vector), vector)[0]
    on_chip = {i for i, accelerator in trimmed.items() if accelerator is not vector}
    mac = {
        r["name"]: (r["energy_pJ"], int(r["id"]) in on_chip)
        for r in tables.read_csv(with_unit / "layers.csv")
        if r["compute_unit"] == "mac_array"
    }
    plain_mac = {r["name"]: r["energy_pJ"] for r in tables.read_csv(plain / "layers.csv")}
    assert mac.keys() == plain_mac.keys() and any(reads for _, reads in mac.values())
    for name, (energy, reads_on_chip) in mac.items():
        if reads_on_chip:
            assert float(energy) <= float(plain_mac[name])
        else:
            assert energy == plain_mac[name]
    experiments = tables.read_csv(workflow_results / "experiments.csv")
    assert [r["uncosted_layers"] for r in experiments] == ["0", "56"]


@pytest.mark.slow
def test_cli_prints_the_split_and_the_uncosted_layers(tmp_path, capsys):
    import onnx
    from support.llm_graphs import gqa_attention
    from zigzag.cli import main

    onnx.save(gqa_attention("packed", seq=8, heads=4), tmp_path / "gqa.onnx")
    common = [
        "run",
        "--workload",
        str(tmp_path / "gqa.onnx"),
        "--mapping",
        str(HARDWARE.parent / "mapping" / "flow_tpu_32x32.yaml"),
        "--operators",
        "all",
        "--causal-blocks",
        "0",
        "--lpf-limit",
        "3",
        "--quiet",
    ]
    assert (
        main(
            common
            + [
                "--accelerator",
                str(HARDWARE / "flow_tpu_32x32_vector.yaml"),
                "--output",
                str(tmp_path / "a"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "vector_unit" in printed and "MAC array: " in printed and "; vector unit: " in printed
    summary_json = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary_json["vector_unit_energy"] > 0 and summary_json["uncosted_layers"] == []
    assert (
        main(
            common
            + [
                "--accelerator",
                str(HARDWARE / "flow_tpu_32x32.yaml"),
                "--output",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "uncosted (no vector unit for their class): " in printed
    summary_json = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary_json["uncosted_layers"] and any(
        "left uncosted" in n for n in summary_json["notes"]
    )


def test_data_locality_plans_the_mac_layers_and_leaves_the_vector_unit_whole():
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    chain = Workload(
        [
            gemm_layer(0),
            layer(
                "exp",
                "Exp",
                "O[b][k]=I[b][k]",
                ["B", "K"],
                [4, 8],
                {"O": 8, "O_final": 8, "I": 8},
                "exp",
                1,
                {"I": 0},
            ),
            layer(
                "gemm2",
                "Gemm",
                "O[b][k]+=W[k][c]*I[b][c]",
                ["B", "K", "C"],
                [4, 8, 8],
                {"O": 16, "O_final": 8, "I": 8, "W": 8},
                None,
                2,
                {"I": 1, "W": 2},
            ),
        ]
    )
    network = evaluate_network(
        chain, vector, SearchOptions(lpf_limit=4, exploit_data_locality=True)
    )
    assert network.accelerators[1] is vector
    assert network.accelerators[0].name.endswith("-removing-nouse-mem")
    assert [result.compute_unit for _, result in network.layers] == [
        MAC_ARRAY,
        VECTOR_UNIT,
        MAC_ARRAY,
    ]


def test_searching_an_uncosted_layer_is_a_one_line_error():
    plain = load_accelerator(HARDWARE / "flow_tpu_32x32.yaml")
    with pytest.raises(
        InputError,
        match=r"layer 'exp': its operation class 'exp' runs on no unit .*operations\.exp",
    ):
        search_layer(exp_layer(), plain, SearchOptions())


def test_stage_api_names_uncosted_layers(caplog):
    from zigzag.stages.iterators import WorkloadStage
    from zigzag.stages.stage import Stage

    class Leaf(Stage):
        def is_leaf(self):
            return True

        def run(self):
            yield self.kwargs["layer"].name, None

    stage = WorkloadStage(
        [Leaf],
        workload=Workload([gemm_layer(0), exp_layer(1)]),
        accelerator=load_accelerator(HARDWARE / "flow_tpu_32x32.yaml"),
    )
    assert [name for name, _ in stage.run()] == ["gemm"]
    assert "1 vector layer(s) left uncosted" in caplog.text


def test_more_lanes_help_until_the_memory_bandwidth_bounds():
    """exp of a 128 x 128 matrix of bytes on the TPU-like example: compute-bound with 8 lanes
    (16384 x 4 / 8 cycles), then never faster than moving the input in and the output out over the
    64-bit DRAM port (2 x 16384 x 8 / 64 = 4096 cycles); the energy does not depend on the lanes."""
    base = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    exp = layer(
        "exp",
        "Exp",
        "O[d][k]=I[d][k]",
        ["D", "K"],
        [128, 128],
        {"O": 8, "O_final": 8, "I": 8},
        "exp",
    )
    results = {}
    for lanes in (8, 32, 128):
        accelerator = dataclasses.replace(
            base, vector_unit=dataclasses.replace(base.vector_unit, lanes=lanes)
        )
        results[lanes], _ = search_layer(exp, accelerator, SearchOptions(lpf_limit=4))
    assert results[8].ideal_cycle == 128 * 128 * 4 // 8 and results[8].latency_total2 >= 8192
    for result in results.values():
        assert result.latency_total2 >= 2 * 128 * 128 * 8 / 64
        assert result.energy_total == results[8].energy_total
    assert results[128].latency_total2 < results[8].latency_total2


@pytest.mark.parametrize("make", [add_layer, reduce_layer, exp_layer])
def test_batched_and_scalar_searches_agree_on_vector_layers(make, monkeypatch):
    """The batched evaluator (the default) and the scalar one find the same best mapping and figures
    on the lanes, cycles per operation above 1 included."""
    accelerator = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    batched, _ = search_layer(make(), accelerator, SearchOptions(lpf_limit=4))
    monkeypatch.setenv("ZIGZAG_EVAL", "scalar")
    scalar, _ = search_layer(make(), accelerator, SearchOptions(lpf_limit=4))
    assert batched.to_dict() == scalar.to_dict()


def test_one_area_for_one_accelerator_whatever_runs_first():
    """A vector layer reports the whole core's area (MAC array, lanes, every memory), as a MAC layer
    does: a network starting with a vector layer (an LLM's embedding lookup with ``operators: all``) has
    the area of the same network without it (issue 45: the MAC array was dropped, 18.43 for 32.16 mm²)."""
    vector = load_accelerator(HARDWARE / "flow_tpu_32x32_vector.yaml")
    options = SearchOptions(lpf_limit=4)
    mac_only = evaluate_network(Workload([gemm_layer(0)]), vector, options)
    vector_first = evaluate_network(Workload([exp_layer(0), gemm_layer(1)]), vector, options)
    results = [result for _, result in vector_first.layers]
    assert results[0].compute_unit == VECTOR_UNIT
    assert {r.area_total for r in results} == {mac_only.total.area_total}
    assert vector_first.total.area_total == mac_only.total.area_total
    assert mac_only.total.area_total == pytest.approx(accelerator_area_um2(vector))
