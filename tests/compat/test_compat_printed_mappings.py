"""``cme.spatial_mapping`` and ``cme.temporal_mapping`` hold what ZigZag shows: the fractional
unrolling where the array is filled unevenly (K = 1000 on 32 columns: 31.25), and an empty temporal
mapping for a layer with no temporal loop.

tests/data/compat/printed_mappings.json: the reference's values (see tests/data/compat/README.md).
"""

from __future__ import annotations

import json

import pytest

from zigzag.api import get_hardware_performance_zigzag
from zigzag.plots import loop_nest_text
from support import REPO

ROOT = REPO
ORACLE = json.loads((ROOT / "tests" / "data" / "compat" / "printed_mappings.json").read_text())


def as_lists(per_operand: dict) -> dict:
    return {
        op: [[[dim, size] for dim, size in level] for level in levels]
        for op, levels in per_operand.items()
    }


@pytest.fixture(scope="module")
def results() -> dict:
    inputs = ORACLE["inputs"]
    _, _, cmes = get_hardware_performance_zigzag(
        str(ROOT / inputs["workload"]),
        str(ROOT / inputs["accelerator"]),
        str(ROOT / inputs["mapping"]),
        opt=inputs["opt"],
        lpf_limit=inputs["lpf_limit"],
    )
    return {cme.layer_name: cme for cme, _ in cmes[0][1]}


@pytest.mark.parametrize(
    "expected", ORACLE["layers"], ids=[layer["layer"] for layer in ORACLE["layers"]]
)
def test_mappings_equal_the_references(results, expected):
    cme = results[expected["layer"]]
    assert (cme.energy_total, cme.latency_total2) == pytest.approx(
        (expected["energy_total"], expected["latency_total2"])
    )
    assert as_lists(cme.spatial_mapping) == expected["spatial_mapping"]
    assert (
        as_lists(cme.spatial_mapping_int)
        == as_lists(cme.spatial_mapping_dict_int)
        == expected["spatial_mapping_int"]
    )
    assert as_lists(cme.temporal_mapping) == expected["temporal_mapping"]
    assert as_lists(cme.temporal_mapping_stationary) == expected["temporal_mapping_stationary"]


def test_uneven_unrolling_is_fractional_and_an_all_spatial_layer_has_no_temporal_loop(results):
    assert ("K", 31.25) in results["fc_1000"].spatial_mapping["O"][1]
    assert all(
        level == ()
        for levels in results["fc_all_spatial"].temporal_mapping.values()
        for level in levels
    )
    assert "fc_all_spatial" in loop_nest_text(
        results["fc_all_spatial"]
    )  # the loop nest still prints
