"""The reference ZigZag's own test suite, rewritten: each of its cases calls
``get_hardware_performance_zigzag`` the way that suite does (the parserless case gives the
workload as the layers read with ``zigzag.utils.open_yaml``) and checks the totals it asserts
(tests/data/compat/reference_suite.yaml; gemm_l1_l3 with the reference's current figure)."""

from __future__ import annotations


import pytest
import yaml

from zigzag.api import get_hardware_performance_zigzag
from zigzag.utils import open_yaml
from support import TESTS

DATA = TESTS / "data"
INPUTS = DATA / "reference" / "zigzag"
CASES = yaml.safe_load((DATA / "compat" / "reference_suite.yaml").read_text())


def _params():
    for case in CASES:
        marks = (
            [pytest.mark.slow]
            if case["workload"].startswith("resnet18") and case["suite"] != "parserless"
            else []
        )
        name = f"{case['suite']}-{case['test'].removesuffix('.py')}-{case['workload']}"
        yield pytest.param(case, id=name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_reference_case(case, tmp_path):
    workload = str(INPUTS / "workload" / case["workload"])
    if case["suite"] == "parserless":
        workload = open_yaml(workload)
        assert isinstance(workload, list) and workload[0]["operator_type"]
    energy, latency, _ = get_hardware_performance_zigzag(
        workload,
        str(INPUTS / "hardware" / case["accelerator"]),
        str(INPUTS / "mapping" / case["mapping"]),
        dump_folder=str(tmp_path),
        loma_show_progress_bar=False,
        **case["options"],
    )
    assert energy == pytest.approx(case["energy_pJ"])
    assert latency == pytest.approx(case["latency_cycles"])


def test_every_reference_test_file_is_covered():
    files = {(case["suite"], case["test"]) for case in CASES}
    assert len(CASES) == 33 and len(files) == 18
    suites = {suite for suite, _ in files}
    assert suites == {
        "test_origin",
        "test_with_exploit_data_locality",
        "test_with_mix_spatial_mapping",
        "parserless",
    }
