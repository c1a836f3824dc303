"""Network totals of tests/data/reference/expected.yaml through the API and the command line."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
import yaml

from support import EXPECTED_TOTALS, reference_input, rel_close
from zigzag.api import get_hardware_performance_zigzag
from zigzag.errors import InputError

EXPECTED = yaml.safe_load(EXPECTED_TOTALS.read_text())


def case_id(case: dict) -> str:
    return f"{case['workload']}-{case['accelerator']}"


def case_params() -> list:
    return list(_case_params())


def _case_params():
    for case in EXPECTED:
        marks = [pytest.mark.slow] if "resnet18" in case["workload"] else []
        yield pytest.param(case, id=case_id(case), marks=marks)


def inputs(case: dict) -> tuple[str, str, str]:
    return (
        reference_input("workload", case["workload"]),
        reference_input("hardware", case["accelerator"]),
        reference_input("mapping", case["mapping"]),
    )


@pytest.mark.parametrize("case", case_params())
def test_api_totals(case, tmp_path):
    energy, latency, cmes = get_hardware_performance_zigzag(
        *inputs(case), dump_folder=tmp_path, loma_show_progress_bar=False, **case["options"]
    )
    assert rel_close(energy, case["energy_pJ"], 1e-6)
    assert rel_close(latency, case["latency_cycles"], 1e-6)
    total, per_layer = cmes[0]
    assert total.energy_total == energy
    assert sum(cme.latency_total2 for cme, _ in per_layer) == pytest.approx(latency)
    for cme, (layer, extra) in per_layer:
        assert (cme.layer_name, extra) == (layer.name, [])
        assert (tmp_path / f"{layer.name.replace('/', '_')}_complete.json").exists()
    assert json.loads((tmp_path / "overall_simple.json").read_text()) == {
        "energy": energy,
        "latency": latency,
    }
    assert len(pickle.loads((tmp_path / "list_of_cmes.pickle").read_bytes())) == len(per_layer)


@pytest.mark.parametrize("case", case_params())
def test_command_line_totals(case, tmp_path):
    workload, accelerator, mapping = inputs(case)
    options = [f"--{key.replace('_', '-')}={value}" for key, value in case["options"].items()]
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            workload,
            "--accelerator",
            accelerator,
            "--mapping",
            mapping,
            "--output",
            str(tmp_path),
            "--quiet",
            *options,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert rel_close(summary["energy"], case["energy_pJ"], 1e-6)
    assert rel_close(summary["latency"], case["latency_cycles"], 1e-6)
    assert "total energy" in completed.stdout and "total latency" in completed.stdout


def test_bad_option_is_one_line_error(tmp_path):
    with pytest.raises(InputError, match="opt: 'speed' is not one of energy, latency, EDP"):
        get_hardware_performance_zigzag(
            reference_input("workload", "gemm_layer.yaml"),
            reference_input("hardware", "gemm_l1.yaml"),
            reference_input("mapping", "gemm_l1.yaml"),
            opt="speed",
            dump_folder=tmp_path,
        )


@pytest.mark.slow
def test_command_line_reports_bad_input_in_one_line(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            str(tmp_path / "missing.yaml"),
            "--accelerator",
            reference_input("hardware", "gemm_l1.yaml"),
            "--mapping",
            reference_input("mapping", "gemm_l1.yaml"),
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "missing.yaml" in lines[0]


def test_help_explains_every_option():
    text = subprocess.run(
        [sys.executable, "-m", "zigzag", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for flag in (
        "--opt",
        "--lpf-limit",
        "--nb-spatial-mappings-generated",
        "--temporal-mapping-search-engine",
        "--temporal-mapping-type",
        "--exploit-data-locality",
        "--enable-mix-spatial-mapping",
        "--salsa-seed",
        "--evaluate-all-operators",
    ):
        assert flag in text


@pytest.mark.slow
@pytest.mark.parametrize("model", ["resnet18.onnx", "transformer_block.onnx"])
@pytest.mark.parametrize("all_operators", [False, True])
def test_export_workload_round_trip(model, all_operators, tmp_path):
    from support import REPO
    from zigzag.io.loaders import load_workload

    source = str(REPO / "inputs" / "workload" / model)
    mapping = str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml")
    out = tmp_path / "exported.yaml"
    flags = ["--evaluate-all-operators"] if all_operators else []
    subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "export-workload",
            source,
            "--mapping",
            mapping,
            "--output",
            str(out),
            *flags,
        ],
        check=True,
        capture_output=True,
    )
    original = load_workload(source, mapping, evaluate_all_operators=all_operators)
    exported = load_workload(str(out), mapping)
    by_id = {layer.id: layer for layer in exported.layers}
    assert sorted(by_id) == sorted(layer.id for layer in original.layers)
    for layer in original.layers:
        again = by_id[layer.id]
        assert (again.name, again.loop_sizes, again.precision) == (
            layer.name,
            layer.loop_sizes,
            layer.precision,
        )
        assert again.equation == layer.equation and again.relations == layer.relations
