"""One experiment that cannot run never removes the comparison of the others: it becomes a row of
experiments.csv with its status and reason, and the run fails at its end, naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from support import DATA, reference_input
from support.workflow import run_snakemake

pytestmark = pytest.mark.slow


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """Three experiments: one runs, one whose memory is too small, one whose mapping does not fit."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    shutil.copy(reference_input("hardware", "tpu_like.yaml"), inputs / "tpu.yaml")
    tiny = yaml.safe_load(Path(reference_input("hardware", "tpu_like.yaml")).read_text())
    tiny["memories"]["dram"]["size"] = 10_000
    (inputs / "tiny.yaml").write_text(yaml.safe_dump({**tiny, "name": "tiny"}, sort_keys=False))
    shutil.copy(reference_input("mapping", "tpu_like.yaml"), inputs / "mapping.yaml")
    mapping = yaml.safe_load(Path(reference_input("mapping", "tpu_like.yaml")).read_text())
    for entry in mapping:
        if entry.get("spatial_mapping"):
            entry["spatial_mapping"] = {
                "D3" if k == "D1" else k: v for k, v in entry["spatial_mapping"].items()
            }
    (inputs / "bad_mapping.yaml").write_text(yaml.safe_dump(mapping))
    shutil.copy(DATA / "workflow" / "small_convs.yaml", inputs / "small.yaml")
    common = {"workload": "inputs/small.yaml", "mapping": "inputs/mapping.yaml"}
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "experiments": [
                    {
                        "name": "fine",
                        **common,
                        "accelerator": "inputs/tpu.yaml",
                        "parameters": {"dram_bits": 10_000_000_000},
                    },
                    {
                        "name": "too_small",
                        **common,
                        "accelerator": "inputs/tiny.yaml",
                        "parameters": {"dram_bits": 10_000},
                    },
                    {
                        "name": "not_fitting",
                        **common,
                        "accelerator": "inputs/tpu.yaml",
                        "mapping": "inputs/bad_mapping.yaml",
                    },
                ]
            },
            sort_keys=False,
        )
    )
    return tmp_path


def test_failed_experiments_are_rows_and_the_run_fails_naming_them(workdir):
    run = run_snakemake(workdir)
    output = run.stdout + run.stderr
    assert run.returncode != 0
    assert "Error in rule check_experiments:" in output and "Traceback" not in output
    check = next(
        line for line in output.splitlines() if line.startswith("error: results/experiments.csv")
    )
    assert (
        "2 of 3 experiments failed: too_small (evaluate: " in check
        and "not_fitting (split_layers: " in check
    )
    results = workdir / "results"
    for name in (
        "experiments.csv",
        "pareto.csv",
        "comparison.png",
        "layers.csv",
        "memory_levels.csv",
    ):
        assert (results / name).exists(), name
    table = pd.read_csv(results / "experiments.csv").set_index("experiment")
    assert list(table["status"]) == ["ok", "failed", "failed"]
    assert "no loop ordering of layer" in table.loc["too_small", "reason"]
    assert "has no OA dimension D3" in table.loc["not_fitting", "reason"]
    assert table.loc["fine", "area_mm2"] == pytest.approx(table.loc["fine", "area_um2"] * 1e-6)
    assert table.loc["too_small", "dram_bits"] == 10_000 and pd.isna(
        table.loc["not_fitting", "dram_bits"]
    )
    assert pd.isna(table.loc["too_small", "energy_pJ"]) and table.loc["fine", "energy_pJ"] > 0
    assert list(pd.read_csv(results / "pareto.csv")["experiment"]) == ["fine"]
    assert (results / "too_small" / "plots" / "layers.png").exists()
    # a second run computes nothing again and fails the same way
    again = run_snakemake(workdir)
    assert again.returncode != 0 and "rule evaluate_layers:" not in again.stdout + again.stderr
    assert "2 of 3 experiments failed" in again.stdout + again.stderr
