"""In-memory-computing arrays against the reference ZigZag: the worked examples of docs/models/imc.md
(array figures, per-layer evaluations), the four network totals of expected-imc.yaml through
the API and the command line, the further oracle cases of tests/data/oracle (made with
tools/make_oracle.py), and the IMC input checks.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from zigzag.api import get_hardware_performance_zigzag, get_hardware_performance_zigzag_imc
from zigzag.cost.imc import adder_tree_energy, layer_energy, macro_use
from zigzag.cost.model import analyse
from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.io.accelerator_dict import accelerator_from_dict, accelerator_to_dict
from zigzag.io.loaders import load_accelerator, load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.spatial_mapping import convert
from zigzag.plots import energy_components
from zigzag.mapping_search.network import evaluated_layers
from zigzag.workload.workload import build_layer
from support import TESTS

DATA = TESTS / "data"
REFERENCE = DATA / "reference" / "zigzag"
EXPECTED = yaml.safe_load((DATA / "reference" / "expected-imc.yaml").read_text())
MAPPING = str(REFERENCE / "mapping" / "default_imc.yaml")


def hardware(name: str) -> str:
    return str(REFERENCE / "hardware" / f"{name}.yaml")


def rel_close(a: float, b: float, rel: float = 1e-6) -> bool:
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


# ---- array figures (docs/models/imc.md#converters) -----------------------------------------------------


def test_aimc_array_figures():
    array = load_accelerator(hardware("aimc")).operational_array
    assert (array.wordline_dim, array.columns, array.bitline_dim, array.rows, array.banks) == (
        "D1",
        128,
        "D2",
        128,
        1,
    )
    assert array.cycles_per_op == 4.0
    assert tuple(array.adc) == (0.0020846827141356664, 11.80672, 0.7010841600000001)
    assert array.dac.energy == 0.08100000000000002
    assert (
        array.place_value_inputs,
        array.place_value_input_precision,
        array.place_value_adders,
        array.place_value_output_precision,
        array.accumulator_precision,
    ) == (8, 8, 76.0, 16, 24)
    assert array.area_breakdown == {
        "cells": 0,
        "dacs": 0,
        "adcs": 2.1347150992749224,
        "mults": 0.080478208,
        "adders_regular": 0,
        "adders_pv": 0.046589337599999996,
        "accumulators": 0.0260296704,
    }
    assert array.area == 2.2878123152749223
    assert array.tclk_breakdown == {
        "cells": 0,
        "dacs": 0,
        "adcs": 11.80672,
        "mults": 0.0478,
        "adders_regular": 0,
        "adders_pv": 1.3384,
        "accumulators": 0.8795200000000001,
    }
    assert array.tclk == 14.07244
    assert array.peak_energy_breakdown == {
        "local_bl_precharging": 0,
        "dacs": 10.368000000000002,
        "adcs": 717.9101798400001,
        "mults": 37.158912,
        "analog_bl_addition": 37.158912,
        "adders_regular": 0,
        "adders_pv": 33.09465599999999,
        "accumulators": 15.676415999999996,
    }
    assert sum(array.peak_energy_breakdown.values()) == 851.3670758400001
    assert array.peak_macs_per_cycle == 4096
    assert (array.peak_tops, array.peak_tops_per_watt, array.peak_tops_per_mm2) == (
        0.5821307463382327,
        9.622171484511984,
        0.25444864618113533,
    )


def test_dimc_array_figures():
    array = load_accelerator(hardware("dimc")).operational_array
    assert (array.analog, array.adc_resolution, array.cycles_per_op) == (False, 0, 8.0)
    assert (array.regular_tree_adders, array.regular_tree_output_precision) == (1136, 15)
    assert (
        array.place_value_inputs,
        array.place_value_adders,
        array.place_value_output_precision,
    ) == (1, 0, 15)
    assert array.accumulator_precision == 23.0
    assert array.area_breakdown == {
        "cells": 0,
        "dacs": 0,
        "adcs": 0,
        "mults": 0.080478208,
        "adders_regular": 0.6963879935999999,
        "adders_pv": 0.0,
        "accumulators": 0.0249451008,
    }
    assert array.area == 0.8018113023999999
    assert array.tclk_breakdown["adders_regular"] == 2.8297600000000003
    assert array.tclk == 3.75708
    assert sum(array.peak_energy_breakdown.values()) == 546.86016
    assert array.peak_energy_breakdown["adders_regular"] == 494.6780159999999
    assert (array.peak_tops, array.peak_tops_per_watt, array.peak_tops_per_mm2) == (
        1.0902083532956444,
        7.490031820932065,
        1.359681947650785,
    )


@pytest.mark.parametrize(
    "active, energy",
    [
        (96, 2.9104109999999994),
        (49, 1.5513119999999996),
        (72, 2.2215059999999998),
        (128, 3.864671999999999),
        (0, 0),
    ],
)
def test_partially_used_adder_tree(active, energy):
    assert adder_tree_energy(8, active, 128) == energy


# ---- per-layer worked examples (docs/models/imc.md) -------------------------------------------


@lru_cache(maxsize=None)
def resnet18_workload():
    return load_workload(str(REFERENCE / "workload" / "resnet18.yaml"), MAPPING)


def resnet18_layer(layer_id: int):
    workload = resnet18_workload()
    return next(layer for layer in workload.layers if layer.id == layer_id)


def loops(text: str) -> list[tuple[str, int]]:
    return [
        (item.rstrip("0123456789"), int(item[len(item.rstrip("0123456789")) :]))
        for item in text.split()
    ]


#: spatial mapping and memory-level assignment (innermost first, per level) of docs/models/imc.md / docs/models/imc.md
WORKED = {
    2: (
        {"D1": {"K": 64}, "D2": {"FX": 3, "C": 32}},
        {
            "O": ["", "OX8 OY8 C2 FY3", "OY7 OX7"],
            "W": ["OX8 OY8", "C2 FY3 OY7 OX7"],
            "I": ["", "OX8 OY8 C2 FY3", "OY7 OX7"],
        },
    ),
    0: (
        {"D1": {"K": 64}, "D2": {"FX": 7, "FY": 7}},
        {
            "O": ["", "OX4 OY7 OX7 C3", "OY16 OX4"],
            "W": ["OX4 OY7 OX7", "C3 OY16 OX4"],
            "I": ["", "OX4 OY7 OX7 C3", "OY16 OX4"],
        },
    ),
}


def worked_example(layer_id: int, hw: str):
    layer = resnet18_layer(layer_id)
    accelerator = load_accelerator(hardware(hw))
    array_mapping, temporal_text = WORKED[layer_id]
    fractional, integer = convert(array_mapping, layer, accelerator)
    temporal = {op: [loops(level) for level in levels] for op, levels in temporal_text.items()}
    return (
        layer,
        accelerator,
        analyse(
            layer, accelerator, fractional, integer, temporal, spatial_mapping_array=array_mapping
        ),
    )


def test_aimc_layer_2_field_by_field():
    layer, accelerator, detail = worked_example(2, "aimc")
    result = detail.result
    use = macro_use(accelerator.operational_array, layer, WORKED[2][0])
    assert (use.columns, use.rows, use.activations) == (64, 96, 18816.0)
    assert detail.total_cycle == 18816
    assert detail.temporal["W"].mac_st == 64
    assert result.mac_energy_breakdown == {
        "local_bl_precharging": 0,
        "dacs": 585252.8640000002,
        "adcs": 27016395.887738883,
        "mults": 2097546.264576,
        "analog_bl_addition": 1398364.176384,
        "adders_regular": 0,
        "adders_pv": 1245418.0945919997,
        "accumulators": 589934.8869119999,
    }
    assert result.mac_energy == 32932912.17420288
    accesses = result.memory_word_access
    assert accesses["O"][0] == {"fh": 1204224, "tl": 1204224, "fl": 1204224, "th": 1204224}
    assert accesses["O"][1] == {"fh": 0, "tl": 37632, "fl": 37632, "th": 3136}
    assert accesses["O"][2]["fl"] == 25088
    assert accesses["W"][0] == {"fh": 1806336, "tl": 1806336, "fl": 0, "th": 0}
    assert accesses["W"][1]["tl"] == 225792
    assert (accesses["I"][0]["tl"], accesses["I"][0]["fh"]) == (1806336, 1806336)
    assert (accesses["I"][1]["tl"], accesses["I"][1]["fh"], accesses["I"][2]["tl"]) == (
        28224,
        4900,
        39200,
    )
    assert result.mem_energy_breakdown == {
        "O": (101154.816, 31205959.68, 18816000),
        "W": (171601.92, 158054400),
        "I": (75866.11200000001, 13599859.84, 27440000),
    }
    assert result.mem_energy == 249464842.368
    assert result.energy_total == 282397754.5422029
    assert result.stall_slack_comb == 223852
    assert (result.data_onloading_cycle, result.data_offloading_cycle) == (802, 514)
    assert (result.ideal_cycle, result.ideal_temporal_cycle) == (28224, 75264.0)
    assert (result.latency_total0, result.latency_total1, result.latency_total2) == (
        299116.0,
        299918.0,
        300432.0,
    )
    assert (
        result.mac_spatial_utilization,
        result.mac_utilization0,
        result.mac_utilization1,
        result.mac_utilization2,
    ) == (0.375, 0.09435804169619813, 0.09410572223074307, 0.09394471960377057)
    assert (result.tclk, result.area_total) == (14.07244, 2.2878123152749223)


def test_aimc_layer_0_field_by_field():
    layer, accelerator, detail = worked_example(0, "aimc")
    result = detail.result
    use = macro_use(accelerator.operational_array, layer, WORKED[0][0])
    assert (use.columns, use.rows, use.activations) == (64, 49, 37632.0)
    assert detail.temporal["W"].mac_st == 196
    assert result.mac_energy_breakdown == {
        "local_bl_precharging": 0,
        "dacs": 597445.6320000001,
        "adcs": 54032791.77547777,
        "mults": 2141245.145088,
        "analog_bl_addition": 2796728.352768,
        "adders_regular": 0,
        "adders_pv": 2490836.1891839993,
        "accumulators": 1179869.7738239998,
    }
    # a sum of the terms above: Python 3.12's sum() rounds it once, not term by term
    assert result.mac_energy == pytest.approx(63238916.868341774, rel=1e-14)
    assert result.mem_energy_breakdown == {
        "O": (202309.632, 65022074.879999995, 75264000),
        "W": (57200.64, 52684800),
        "I": (77446.656, 15020148.48, 19488000),
    }
    assert (result.memory_word_access["W"][0]["fh"], result.memory_word_access["W"][1]["tl"]) == (
        602112,
        75264,
    )
    assert result.mem_energy == 227815980.28799996
    assert result.energy_total == 291054897.15634173
    assert (result.stall_slack_comb, result.data_onloading_cycle, result.data_offloading_cycle) == (
        74108,
        436,
        1570,
    )
    assert (result.ideal_cycle, result.ideal_temporal_cycle, result.latency_total2) == (
        28812,
        150528.0,
        226642.0,
    )


@pytest.mark.parametrize(
    "layer_id, expected",
    [
        (
            0,
            dict(
                rows=49,
                mults=11186913.411072,
                adders_regular=29890034.270207994,
                accumulators=2261417.0664959997,
                mac=43338364.747775994,
                energy=271154345.03577596,
                ideal=(57624, 301056.0),
                ss=(73344, 436, 1570),
                latency=(374400.0, 374836.0, 376406.0),
            ),
        ),
        (
            2,
            dict(
                rows=96,
                mults=5593456.705536,
                adders_regular=28038294.208511993,
                accumulators=1130708.5332479998,
                mac=34762459.44729599,
                energy=284227301.815296,
                ideal=(56448, 150528.0),
                ss=(222680, 802, 514),
                latency=(373208.0, 374010.0, 374524.0),
            ),
        ),
    ],
)
def test_dimc_layers_field_by_field(layer_id, expected):
    layer, accelerator, detail = worked_example(layer_id, "dimc")
    result = detail.result
    aimc = worked_example(layer_id, "aimc")[2].result
    assert (
        macro_use(accelerator.operational_array, layer, WORKED[layer_id][0]).rows
        == expected["rows"]
    )
    parts = result.mac_energy_breakdown
    assert (parts["mults"], parts["adders_regular"], parts["adders_pv"], parts["accumulators"]) == (
        expected["mults"],
        expected["adders_regular"],
        0.0,
        expected["accumulators"],
    )
    assert (
        parts["dacs"],
        parts["adcs"],
        parts["analog_bl_addition"],
        parts["local_bl_precharging"],
    ) == (0, 0, 0, 0)
    assert result.mac_energy == expected["mac"]
    assert (
        result.memory_word_access == aimc.memory_word_access
        and result.mem_energy == aimc.mem_energy
    )
    assert result.energy_total == expected["energy"]
    assert (result.ideal_cycle, result.ideal_temporal_cycle) == expected["ideal"]
    assert (
        result.stall_slack_comb,
        result.data_onloading_cycle,
        result.data_offloading_cycle,
    ) == expected["ss"]
    assert (result.latency_total0, result.latency_total1, result.latency_total2) == expected[
        "latency"
    ]
    assert (result.tclk, result.area_total) == (3.75708, 0.8018113023999999)


def test_fc_layer_uses_the_generated_unrolling():
    """A reference quirk: K=1000 unrolled 64 times counts 512000 / 8192 = 62.5 activations."""
    layer = resnet18_layer(30)
    array = load_accelerator(hardware("aimc")).operational_array
    assert macro_use(array, layer, {"D1": {"K": 64}, "D2": {"C": 128}}) == (128, 64, 62.5)


def diagonal_case(bitline: dict) -> int:
    """docs/models/imc.md#array-energy-per-layer's verified example: OX unrolled on the wordlines beside K."""
    spec = {
        "id": 0,
        "name": "diag",
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, 16, 8, 8, 8, 3, 3],
        "operand_precision": {"O": 16, "O_final": 8, "W": 8, "I": 8},
        "operand_source": {"W": 0, "I": 0},
    }
    layer = build_layer(
        spec, [MappingEntry(name="default", memory_operand_links={"O": "O", "W": "I2", "I": "I1"})]
    )
    array = load_accelerator(hardware("dimc")).operational_array
    return macro_use(array, layer, {"D1": {"K": 8, "OX": 2}, "D2": bitline}).rows


def test_diagonal_mapping_rows():
    assert diagonal_case({"C": 8, "FX": 3}) == 27  # set order FX, C pairs FX with factor 8
    assert diagonal_case({"FX": 3, "C": 8}) == 32
    assert diagonal_case({"FX": 3}) == 4  # the reference crashes here; we take FX + OX - 1


# ---- network totals (expected-imc.yaml) -------------------------------------------------------


def case_id(case: dict) -> str:
    return f"{case['workload']}-{case['accelerator']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", EXPECTED, ids=case_id)
def test_api_totals(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the three-argument API writes into ./outputs
    energy, latency, tclk, area, cmes = get_hardware_performance_zigzag_imc(
        str(REFERENCE / "workload" / case["workload"]),
        hardware(Path(case["accelerator"]).stem),
        MAPPING,
    )
    assert rel_close(energy, case["energy_pJ"]) and rel_close(latency, case["latency_cycles"])
    assert rel_close(tclk, case["tclk_ns"]) and rel_close(area, case["area_mm2"])
    total, per_layer = cmes[0]
    assert len(per_layer) == 21  # Pooling and Add layers are skipped
    first = per_layer[0][0]
    assert (first.tclk, first.area_total) == (tclk, area)
    assert total.energy_total == energy and total.latency_total2 == latency
    assert total.latency_ns == latency * tclk
    complete = json.loads(next((tmp_path / "outputs").glob("*/*_complete.json")).read_text())
    assert complete["outputs"]["clock"]["tclk (ns)"] == tclk
    assert set(complete["outputs"]["energy"]["operational_energy_breakdown"]) == set(
        first.mac_energy_breakdown
    )


@pytest.mark.slow
@pytest.mark.parametrize("case", EXPECTED, ids=case_id)
def test_command_line_totals(case, tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            str(REFERENCE / "workload" / case["workload"]),
            "--accelerator",
            hardware(Path(case["accelerator"]).stem),
            "--mapping",
            MAPPING,
            "--output",
            str(tmp_path),
            "--quiet",
            "--in-memory-compute",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert rel_close(summary["energy"], case["energy_pJ"]) and rel_close(
        summary["latency"], case["latency_cycles"]
    )
    assert rel_close(summary["tclk_ns"], case["tclk_ns"]) and rel_close(
        summary["area"], case["area_mm2"]
    )
    assert f"clock period (tclk): {case['tclk_ns']:.10g} ns" in completed.stdout
    assert f"area: {case['area_mm2']:.10g} mm2" in completed.stdout


def test_imc_api_takes_the_three_inputs_only():
    with pytest.raises(TypeError):
        get_hardware_performance_zigzag_imc("w", "a", "m", opt="energy")


# ---- further oracle cases (tests/data/oracle, group 7 of tools/make_oracle.py) ---------------

ORACLE_CASES = sorted(
    p.stem
    for p in (DATA / "oracle").glob("*.json")
    if json.loads(p.read_text())["case"]["options"].get("in_memory_compute")
)


def oracle_path(case: dict, kind: str) -> str:
    base = REFERENCE if case["case"]["sources"][kind] == "reference" else DATA
    return str(base / case["case"][kind])


@pytest.mark.slow
@pytest.mark.parametrize("name", ORACLE_CASES)
def test_oracle_cases(name, tmp_path):
    case = json.loads((DATA / "oracle" / f"{name}.json").read_text())
    options = {
        k: v
        for k, v in case["case"]["options"].items()
        if k in ("opt", "lpf_limit", "nb_spatial_mappings_generated", "temporal_mapping_type")
    }
    energy, latency, tclk, area, cmes = get_hardware_performance_zigzag(
        oracle_path(case, "workload"),
        oracle_path(case, "accelerator"),
        oracle_path(case, "mapping"),
        in_memory_compute=True,
        dump_folder=tmp_path,
        loma_show_progress_bar=False,
        **options,
    )
    assert rel_close(energy, case["energy_total"]) and rel_close(latency, case["latency_total2"])
    assert rel_close(tclk, case["tclk"]) and rel_close(area, case["area_total"])
    per_layer = cmes[0][1]
    assert [layer.name for _, (layer, _) in per_layer] == [
        layer["name"] for layer in case["layers"]
    ]
    for (ours, _), theirs in zip(per_layer, case["layers"]):
        assert ours.spatial_mapping_array == theirs["spatial_mapping"], theirs["name"]
        assert rel_close(ours.energy_total, theirs["energy_total"]), theirs["name"]
        assert rel_close(ours.latency_total2, theirs["latency_total2"]), theirs["name"]
        for part, value in theirs["imc"]["mac_energy_breakdown"].items():
            assert rel_close(ours.mac_energy_breakdown[part], value), (theirs["name"], part)
        assert rel_close(ours.area_total, theirs["imc"]["area_total"]), theirs["name"]


# ---- inputs, results and plots ------------------------------------------------------------------


def imc_document(name: str = "aimc") -> dict:
    return copy.deepcopy(load_yaml(hardware(name)))


def rejected(mutate, where: str, *needles: str):
    data = imc_document()
    mutate(data)
    with pytest.raises(InputError) as info:
        validate_accelerator(data, "aimc.yaml")
    assert info.value.where == where, info.value
    for needle in needles:
        assert needle in info.value.message, info.value.message
    assert "\n" not in str(info.value)


def test_imc_input_errors_name_field_and_fix():
    oa = "operational_array"
    rejected(
        lambda d: d[oa].pop("bit_serial_precision"), f"{oa}.bit_serial_precision", "required", "add"
    )
    rejected(
        lambda d: d[oa].update(bit_serial_precision=16),
        f"{oa}.bit_serial_precision",
        "larger",
        "at most 8",
    )
    rejected(
        lambda d: d[oa].update(input_precision=[8, 6]), f"{oa}.input_precision[1]", "power of two"
    )
    rejected(
        lambda d: d[oa].update(imc_type="digital"),
        f"{oa}.adc_resolution",
        "no ADC",
        "set adc_resolution to 0",
    )
    rejected(
        lambda d: d[oa].update(dimensions=["D1"], sizes=[128]), f"{oa}.dimensions", "at least two"
    )
    rejected(
        lambda d: d[oa].update(imc_type="digital", adc_resolution=0, sizes=[128, 96]),
        f"{oa}.sizes",
        "not a power of two",
    )
    rejected(lambda d: d["memories"].pop("cells"), "memories", "named 'cells'")
    rejected(
        lambda d: d["memories"]["cells"].update(operands=["I2", "I1"]),
        "memories.cells.operands",
        "only hold weights",
    )
    rejected(
        lambda d: d["memories"]["cells"].update(served_dimensions=["D1"]),
        "memories.cells.served_dimensions",
        "fully unrolled",
    )
    rejected(
        lambda d: d["memories"]["cells"].update(size=16),
        "memories.cells.size",
        "several weights",
        "set it to the weight precision",
    )


def test_accelerator_round_trip_keeps_the_imc_array():
    for name in ("aimc", "dimc"):
        accelerator = load_accelerator(hardware(name))
        again = accelerator_from_dict(validate_accelerator(accelerator_to_dict(accelerator), "x"))
        assert again.operational_array == accelerator.operational_array


def test_yaml_pooling_and_add_layers_are_skipped():
    workload = resnet18_workload()
    skipped = [
        layer.id
        for layer in workload.layers
        if layer not in evaluated_layers(workload.layers, load_accelerator(hardware("aimc")))
    ]
    assert skipped == [1, 4, 7, 11, 14, 18, 21, 25, 28, 29]
    assert len(evaluated_layers(workload.layers, load_accelerator(hardware("dimc")))) == 21


def test_result_round_trip_and_energy_parts():
    result = worked_example(2, "aimc")[2].result
    assert CostResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    parts = energy_components(result)
    assert "MAC" not in parts and parts["IMC adcs"] == 27016395.887738883
    assert "IMC adders_regular" not in parts  # zero parts are left out
    assert sum(parts.values()) == pytest.approx(result.energy_total, rel=1e-12)


def test_layer_energy_ignores_the_layer_precisions():
    """A reference quirk: the array's own precisions are used, whatever the layer's."""
    layer = resnet18_layer(2)
    array = load_accelerator(hardware("aimc")).operational_array
    wider = build_layer(
        {**layer.to_spec(), "operand_precision": {"O": 16, "O_final": 8, "W": 4, "I": 4}},
        [MappingEntry.from_dict(layer.mapping.to_dict())],
    )
    assert layer_energy(array, wider, WORKED[2][0]) == layer_energy(array, layer, WORKED[2][0])


# ---- the Stage API -----------------------------------------------------------------------------

SMALL_NETWORK = [
    {
        "id": 0,
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, 32, 16, 14, 14, 3, 3],
        "operand_precision": {"O": 16, "O_final": 8, "W": 8, "I": 8},
        "operand_source": {"W": 0, "I": 0},
    },
    {
        "id": 1,
        "operator_type": "Pooling",
        "equation": "O[b][g][oy][ox]+=W[fx][fy]*I[b][g][iy][ix]",
        "dimension_relations": ["ix=2*ox+1*fx", "iy=2*oy+1*fy"],
        "loop_dims": ["B", "G", "OY", "OX", "FX", "FY"],
        "loop_sizes": [1, 32, 7, 7, 2, 2],
        "operand_precision": {"O": 16, "O_final": 8, "W": 0, "I": 8},
        "operand_source": {"W": 1, "I": 0},
    },
    {
        "id": 2,
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, 64, 32, 5, 5, 3, 3],
        "operand_precision": {"O": 16, "O_final": 8, "W": 8, "I": 8},
        "operand_source": {"W": 2, "I": 1},
    },
]


def test_stage_pipeline_equals_the_api(tmp_path):
    from zigzag.stages import (
        AcceleratorParserStage,
        CompleteSaveStage,
        ExploitInterLayerDataLocalityStage,
        MainStage,
        MinimalLatencyStage,
        SearchInterLayerDataLocalityStage,
        SimpleSaveStage,
        SpatialMappingGeneratorStage,
        SumStage,
        TemporalMappingGeneratorStage,
        CostModelStage,
        WorkloadParserStage,
        WorkloadStage,
    )

    energy, latency, tclk, area, cmes = get_hardware_performance_zigzag(
        SMALL_NETWORK,
        hardware("dimc"),
        MAPPING,
        in_memory_compute=True,
        dump_folder=tmp_path / "api",
        loma_show_progress_bar=False,
        lpf_limit=4,
    )
    results = MainStage(
        [
            WorkloadParserStage,
            AcceleratorParserStage,
            SimpleSaveStage,
            SumStage,
            SearchInterLayerDataLocalityStage,
            WorkloadStage,
            ExploitInterLayerDataLocalityStage,
            CompleteSaveStage,
            MinimalLatencyStage,
            SpatialMappingGeneratorStage,
            MinimalLatencyStage,
            TemporalMappingGeneratorStage,
            CostModelStage,
        ],
        workload=SMALL_NETWORK,
        accelerator=hardware("dimc"),
        mapping=MAPPING,
        dump_folder=str(tmp_path / "stages"),
        loma_lpf_limit=4,
        enable_mix_spatial_mapping_generation=True,
    ).run()
    total, per_layer = results[0]
    assert [layer.id for _, (layer, _) in per_layer] == [0, 2]  # the Pooling layer is skipped
    assert (total.energy_total, total.latency_total2, total.tclk, total.area_total) == (
        energy,
        latency,
        tclk,
        area,
    )
    first = per_layer[0][0]
    assert first.mac_energy_breakdown == cmes[0][1][0][0].mac_energy_breakdown
    simple = json.loads((tmp_path / "stages" / "overall_simple.json").read_text())
    assert simple == {"energy": energy, "latency": latency}
    complete = json.loads((tmp_path / "stages" / f"{first.layer_name}_complete.json").read_text())
    assert complete["outputs"]["area (mm^2)"]["total_area"] == area
    assert complete["inputs"]["accelerator"]["operational_array"] == {
        "operational_unit: ImcArray, dimensions": {"D1": 128, "D2": 128}
    }
