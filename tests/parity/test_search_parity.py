"""The search reproduces the reference: every candidate it evaluates, and every layer's pick.

Oracle data: tests/data/oracle/*.json, made with tools/make_oracle.py from zigzag-dse 3.8.5.
"""

from __future__ import annotations

import functools

import pytest
import yaml

from support import ORACLE, oracle, oracle_input_path, rel_close
from zigzag.api import run
from zigzag.errors import InputError
from zigzag.cost.model import evaluate
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.spatial_mapping import convert
from zigzag.mapping_search.loma import temporal_mappings
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

REL = 1e-9


def options_of(case: dict) -> SearchOptions:
    given = case["case"]["options"]
    return SearchOptions(
        opt=given["opt"],
        lpf_limit=given["lpf_limit"],
        nb_spatial_mappings_generated=given["nb_spatial_mappings_generated"],
        temporal_mapping_type=given["temporal_mapping_type"],
        enable_mix_spatial_mapping=given["enable_mix_spatial_mapping"],
        exploit_data_locality=given["exploit_data_locality"] or given["enable_mix_spatial_mapping"],
    )


def workload_of(case: dict):
    path = oracle_input_path(case, "workload")
    layer_id = case["case"].get("layer_id")
    if layer_id is None:
        return path
    spec = next(s for s in yaml.safe_load(open(path)) if s["id"] == layer_id)
    return [{**spec, "operand_source": {op: layer_id for op in spec.get("operand_source", {})}}]


def cases(kind: str) -> list[str]:
    names = []
    for path in sorted(ORACLE.glob("*.json")):
        data = oracle(path.stem)
        if "layers" not in data or data.get("error"):
            continue
        if data["case"]["options"].get("in_memory_compute"):
            continue  # IMC cases run through the IMC API in tests/unit/cost/test_imc.py::test_oracle_cases
        has_candidates = any("candidates" in layer for layer in data["layers"])
        if (kind == "candidates") == has_candidates:
            names.append(path.stem)
    return names


def as_lists(mapping: dict) -> dict:
    return {
        op: [[list(loop) for loop in level] for level in levels] for op, levels in mapping.items()
    }


@functools.cache
def network_run(name: str):
    case = oracle(name)
    return run(
        workload_of(case),
        oracle_input_path(case, "accelerator"),
        oracle_input_path(case, "mapping"),
        options_of(case),
        show_progress=False,
    )


# Cases the reference runs but we reject on purpose (issue 17): the mapping names dimensions that no
# layer of the workload has (a GEMM mapping on ResNet-18), which ZigZag silently drops.
REJECTED = {
    "resnet18_yaml__gemm_l1_l3__no_fdb": "'D0' is not a dimension of any layer of the workload"
}


def test_cases_we_reject_on_purpose():
    for name, message in REJECTED.items():
        with pytest.raises(InputError, match=message):
            network_run(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in cases("network") if name not in REJECTED])
def test_network_totals_and_per_layer_picks(name):
    case = oracle(name)
    result = network_run(name)
    assert rel_close(result.energy, case["energy_total"], REL)
    assert rel_close(result.latency, case["latency_total2"], REL)
    ours = {layer.id: cost for layer, cost in result.layers}
    assert [layer.id for layer, _ in result.layers] == [layer["id"] for layer in case["layers"]]
    for expected in case["layers"]:
        got = ours[expected["id"]]
        for field in (
            "energy_total",
            "mac_energy",
            "mem_energy",
            "latency_total0",
            "latency_total1",
            "latency_total2",
            "ideal_cycle",
            "data_onloading_cycle",
            "data_offloading_cycle",
        ):
            assert rel_close(getattr(got, field), expected[field], REL), (expected["name"], field)
        assert got.spatial_mapping_array == expected["spatial_mapping"], expected["name"]
        assert as_lists(got.spatial_mapping_int) == expected["spatial_mapping_int"], expected[
            "name"
        ]
        assert as_lists(got.temporal_mapping) == expected["temporal_mapping"], expected["name"]


# the two cases with the most candidates (about 4 s of CPU each) run in the slow tier
HEAVY_CANDIDATES = {
    "resnet18_L2__tpu_like__default_no_sm",
    "resnet18_L2__tpu_like__default_no_sm__opt_energy",
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in HEAVY_CANDIDATES else name
        for name in cases("candidates")
    ],
)
def test_every_candidate_in_reference_order(name):
    """Same spatial candidates, same temporal mappings in the same order, same costs."""
    case = oracle(name)
    options = options_of(case)
    workload, accelerator = load_inputs(
        workload_of(case),
        oracle_input_path(case, "accelerator"),
        oracle_input_path(case, "mapping"),
    )
    (layer,) = workload.layers
    expected = case["layers"][0]["candidates"]
    got = []
    for array_mapping in generate_spatial_mappings(
        layer,
        accelerator,
        nb_mappings=options.nb_spatial_mappings_generated,
        enable_mixing=options.enable_mix_spatial_mapping,
    ):
        fractional, integer = convert(array_mapping, layer, accelerator)
        for temporal in temporal_mappings(
            layer,
            accelerator,
            fractional,
            lpf_limit=options.lpf_limit,
            even=options.temporal_mapping_type == "even",
            show_progress=False,
        ):
            got.append(
                (
                    array_mapping,
                    temporal,
                    evaluate(layer, accelerator, fractional, integer, temporal),
                )
            )
    assert len(got) == len(expected)
    for (array_mapping, temporal, cost), reference in zip(got, expected):
        assert array_mapping == reference["spatial_mapping"], reference["index"]
        assert as_lists(temporal) == reference["temporal_mapping"], reference["index"]
        assert rel_close(cost.energy_total, reference["energy_total"], REL), reference["index"]
        assert rel_close(cost.latency_total2, reference["latency_total2"], REL), reference["index"]


def test_same_numbers_on_every_run():
    name = "gemm__gemm_l1"
    case = oracle(name)
    args = (
        workload_of(case),
        oracle_input_path(case, "accelerator"),
        oracle_input_path(case, "mapping"),
    )
    first = run(*args, options_of(case), show_progress=False)
    second = run(*args, options_of(case), show_progress=False)
    assert [c.to_dict() for _, c in first.layers] == [c.to_dict() for _, c in second.layers]
