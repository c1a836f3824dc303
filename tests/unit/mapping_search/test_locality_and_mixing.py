"""exploit_data_locality and enable_mix_spatial_mapping: analysis, options through every entry point, errors.

Whole-network parity with the reference for these options is in test_search_parity.py (oracle
cases *__locality and *__mixed*).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from support import DATA, reference_input
from zigzag.api import get_hardware_performance_zigzag, run
from zigzag.errors import InputError
from zigzag.hardware.data_locality import plan_data_locality, trimmed_accelerator
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.options import SearchOptions
from zigzag.stages import (
    AcceleratorParserStage,
    CostModelStage,
    ExploitInterLayerDataLocalityStage,
    MainStage,
    MinimalLatencyStage,
    SearchInterLayerDataLocalityStage,
    SpatialMappingGeneratorStage,
    SumStage,
    TemporalMappingGeneratorStage,
    WorkloadParserStage,
    WorkloadStage,
)

SMALL = str(DATA / "workflow" / "small_convs.yaml")

# docs/models/mapping-search.md#inter-layer-data-locality: (I1, O) memory index per layer of resnet18.yaml on tpu_like
REFERENCE_LEVELS = {
    0: (2, 2),
    1: (2, 3),
    2: (3, 2),
    3: (2, 3),
    4: (3, 3),
    5: (3, 2),
    6: (2, 3),
    7: (3, 3),
    8: (3, 2),
    10: (3, 3),
    9: (2, 3),
    11: (3, 3),
    12: (3, 2),
    13: (2, 3),
    14: (3, 3),
    15: (3, 2),
    17: (3, 3),
    16: (2, 3),
    18: (3, 3),
    19: (3, 2),
    20: (2, 3),
    21: (3, 3),
    22: (3, 2),
    24: (3, 3),
    23: (2, 3),
    25: (3, 3),
    26: (3, 2),
    27: (2, 3),
    28: (3, 2),
    29: (2, 2),
    30: (2, 2),
}


@pytest.fixture(scope="module")
def resnet_on_tpu():
    return load_inputs(
        reference_input("workload", "resnet18.yaml"),
        reference_input("hardware", "tpu_like.yaml"),
        reference_input("mapping", "tpu_like.yaml"),
    )


def test_data_locality_levels_match_the_reference(resnet_on_tpu):
    workload, accelerator = resnet_on_tpu
    plan = plan_data_locality(workload, accelerator)
    assert plan.weight_level == 3
    assert {i: (lv["I1"], lv["O"]) for i, lv in plan.io_levels.items()} == REFERENCE_LEVELS
    assert [layer.id for layer in workload.layers][8:11] == [8, 10, 9]


def test_trimmed_hierarchies(resnet_on_tpu):
    workload, accelerator = resnet_on_tpu
    plan = plan_data_locality(workload, accelerator)
    layers = {layer.id: layer for layer in workload.layers}

    def kept(layer_id):
        trimmed = trimmed_accelerator(accelerator, layers[layer_id], plan)
        return [(m.name, m.operands) for m in trimmed.memories]

    assert kept(0) == [
        ("rf_128B", ("I2",)),
        ("rf_2B", ("O",)),
        ("sram_2MB", ("I1", "O")),
        ("dram", ("I2",)),
    ]
    assert kept(2)[-1] == ("dram", ("I1", "I2"))
    assert kept(4)[-1] == ("dram", ("I1", "I2", "O"))


def small_inputs():
    return (
        SMALL,
        reference_input("hardware", "tpu_like.yaml"),
        reference_input("mapping", "tpu_like.yaml"),
    )


OPTION_SETS = [
    pytest.param({}, id="neither"),
    pytest.param({"exploit_data_locality": True}, id="locality"),
    pytest.param({"enable_mix_spatial_mapping": True, "exploit_data_locality": False}, id="mixing"),
    pytest.param({"enable_mix_spatial_mapping": True, "exploit_data_locality": True}, id="both"),
]


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTION_SETS)
def test_options_through_api_cli_and_stages(options, tmp_path):
    expected = run(*small_inputs(), SearchOptions(**options), show_progress=False)
    # CLI (as in ZigZag, --enable-mix-spatial-mapping implies --exploit-data-locality)
    flags = [f"--{k.replace('_', '-')}" for k, v in options.items() if v]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            SMALL,
            "--accelerator",
            small_inputs()[1],
            "--mapping",
            small_inputs()[2],
            "--output",
            str(tmp_path),
            "--quiet",
            *flags,
        ],
        check=True,
        capture_output=True,
    )
    cli = json.loads((tmp_path / "summary.json").read_text())
    implied = run(
        *small_inputs(),
        SearchOptions(**{**options, "exploit_data_locality": bool(flags)}),
        show_progress=False,
    )
    assert (cli["energy"], cli["latency"]) == (implied.energy, implied.latency)
    # API: same compatibility rule
    energy, latency, _ = get_hardware_performance_zigzag(
        *small_inputs(),
        dump_folder=tmp_path / "api",
        loma_show_progress_bar=False,
        enable_mix_spatial_mapping=options.get("enable_mix_spatial_mapping", False),
        exploit_data_locality=options.get("exploit_data_locality", False),
    )
    assert (energy, latency) == (implied.energy, implied.latency)
    # Stage API: each option on its own
    locality = options.get("exploit_data_locality", False)
    chain = [WorkloadParserStage, AcceleratorParserStage, SumStage]
    chain += [SearchInterLayerDataLocalityStage] if locality else []
    chain += [WorkloadStage] + ([ExploitInterLayerDataLocalityStage] if locality else [])
    chain += [
        MinimalLatencyStage,
        SpatialMappingGeneratorStage,
        MinimalLatencyStage,
        TemporalMappingGeneratorStage,
        CostModelStage,
    ]
    workload, accelerator, mapping = small_inputs()
    [(total, _)] = MainStage(
        chain,
        workload=workload,
        accelerator=accelerator,
        mapping=mapping,
        loma_lpf_limit=6,
        enable_mix_spatial_mapping_generation=options.get("enable_mix_spatial_mapping", False),
    ).run()
    assert (total.energy_total, total.latency_total2) == (expected.energy, expected.latency)


def test_mixing_finds_mixed_mappings_where_they_pay_off():
    """With a hint allowing C and FX on D2, the generator proposes mixed unrollings."""
    workload, accelerator = load_inputs(
        SMALL,
        reference_input("hardware", "tpu_like.yaml"),
        str(DATA / "mappings" / "spatial_mix_hint_tpu.yaml"),
    )
    from zigzag.mapping_search.spatial_generator import spatial_mapping_candidates

    candidates = [
        m
        for m, _ in spatial_mapping_candidates(workload.layers[0], accelerator, enable_mixing=True)
    ]
    assert any(len(unrolling) > 1 for m in candidates for unrolling in m.values())
    plain = [m for m, _ in spatial_mapping_candidates(workload.layers[0], accelerator)]
    assert all(len(unrolling) <= 1 for m in plain for unrolling in m.values())


def write_mapping(tmp_path, entries) -> str:
    path = tmp_path / "mapping.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return str(path)


def test_mixed_mapping_that_does_not_fit_the_array(tmp_path):
    mapping = write_mapping(
        tmp_path,
        [{"name": "default", "spatial_mapping": {"D1": ["K, 32", "C, 4"], "D2": ["OX, 8"]}}],
    )
    with pytest.raises(InputError) as error:
        run(SMALL, reference_input("hardware", "tpu_like.yaml"), mapping, show_progress=False)
    message = str(error.value)
    assert (
        "mapping entry 'default': spatial_mapping.D1" in message
        and "exceeds the size 32 of D1" in message
    )
    assert "\n" not in message


def test_mapping_for_one_layer_naming_a_dimension_it_lacks(tmp_path):
    mapping = write_mapping(
        tmp_path,
        [
            {"name": "default", "spatial_mapping": {"D1": ["K, 32"], "D2": ["C, 32"]}},
            {"name": "conv_a", "spatial_mapping": {"D1": ["K, 8", "G, 4"], "D2": ["C, 16"]}},
        ],
    )
    with pytest.raises(
        InputError,
        match=r"mapping entry 'conv_a': spatial_mapping.D1: layer 'conv_a' has no "
        r"dimension 'G'",
    ):
        run(SMALL, reference_input("hardware", "tpu_like.yaml"), mapping, show_progress=False)
