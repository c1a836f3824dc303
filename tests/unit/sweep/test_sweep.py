"""Hardware sweeps (zigzag.sweep): results equal hand-written files, rows of variants that cannot
run, the shared cache, the tables, the CLI, the Python API and the workflow."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import DATA, REPO
from zigzag.api import run
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.io.loaders import load_accelerator
from zigzag.sweep import run_sweep

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
PARAMS = {
    "D1": "operational_array.sizes[0]",
    "D2": "operational_array.sizes[1]",
    "ub": "memories.unified_buffer.size",
}


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def array_mapping(tmp_path: Path) -> Path:
    """The TPU mapping written against the array: K over all of D1, C over all of D2."""
    mapping = yaml.safe_load(MAPPING.read_text())
    for entry in mapping:
        if entry["name"] in ("default", "Gemm", "MatMul"):
            entry["spatial_mapping"] = {"D1": ["K, D1"], "D2": ["C, D2"]}
    path = tmp_path / "array_mapping.yaml"
    path.write_text(yaml.safe_dump(mapping, sort_keys=False))
    return path


@pytest.mark.slow
def test_variants_equal_the_same_accelerators_written_by_hand(tmp_path, array_mapping):
    rows = run_sweep(
        {
            "base": str(BASE),
            "params": PARAMS,
            "zip": [{"D1": [16, 32], "D2": [8, 32]}],
            "vary": {"ub": ["256KiB", "1MiB"]},
            "derive": {
                "memories.unified_buffer.r_cost": "10 * (ub / 65536) ** 0.5 * 8",
                "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
            },
            "workloads": [str(WORKLOAD)],
            "mapping": str(array_mapping),
        },
        tmp_path / "sweep",
    )
    assert [r["status"] for r in rows] == ["ok"] * 4
    base = yaml.safe_load(BASE.read_text())
    for row, (d1, d2, kib) in zip(
        rows, [(16, 8, 256), (32, 32, 256), (16, 8, 1024), (32, 32, 1024)]
    ):
        by_hand = yaml.safe_load(BASE.read_text())
        by_hand["operational_array"]["sizes"] = [d1, d2]
        by_hand["memories"]["unified_buffer"]["size"] = kib * 1024 * 8
        by_hand["memories"]["unified_buffer"]["r_cost"] = 10 * (kib * 1024 * 8 / 65536) ** 0.5 * 8
        by_hand["memories"]["accumulators"]["ports"][0]["bandwidth_max"] = d1 * 16
        assert by_hand != base
        hardware = tmp_path / f"by_hand_{d1}_{kib}.yaml"
        hardware.write_text(yaml.safe_dump(by_hand, sort_keys=False))
        mapping = yaml.safe_load(MAPPING.read_text())
        for entry in mapping:
            if entry["name"] in ("default", "Gemm", "MatMul"):
                entry["spatial_mapping"] = {"D1": [f"K, {d1}"], "D2": [f"C, {d2}"]}
        mapping_file = tmp_path / f"mapping_{d1}.yaml"
        mapping_file.write_text(yaml.safe_dump(mapping, sort_keys=False))
        result = run(str(WORKLOAD), str(hardware), str(mapping_file))
        assert row["energy_pJ"] == result.energy
        assert row["latency_cycles"] == result.latency
        assert row["area_mm2"] == pytest.approx(
            result.total.area_total * 1e-6
            if result.total.tclk
            else max(c.area_total for _, c in result.layers) * 1e-6
        )
    written = read_rows(tmp_path / "sweep" / "variants.csv")
    assert [r["variant"] for r in written] == [r["variant"] for r in rows]
    assert (tmp_path / "sweep" / "variants" / f"{rows[0]['variant']}.yaml").exists()


def test_variants_that_cannot_run_are_rows_and_the_rest_goes_on(tmp_path):
    rows = run_sweep(
        {
            "base": str(BASE),
            "fragments": {
                "case": {
                    "fine": {},
                    "tiny_dram": {"set": {"memories.dram.size": 4096}},
                    "bad_port": {"set": {"memories.dram.ports[0].bandwidth_min": 0}},
                }
            },
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
            "constraints": ["area <= 1000 mm2"],
        },
        tmp_path / "sweep",
    )
    status = {r["variant"]: (r["status"], r["reason"]) for r in rows}
    assert status["flow_tpu_32x32-fine"] == ("ok", "")
    assert status["flow_tpu_32x32-tiny_dram"][0] == "infeasible"
    assert "fits the memories" in status["flow_tpu_32x32-tiny_dram"][1]
    assert status["flow_tpu_32x32-bad_port"][0] == "invalid"
    assert "ports[0].bandwidth_min" in status["flow_tpu_32x32-bad_port"][1]
    for file in ("variants.csv", "pareto.csv", "best.csv", "plots/pareto.png", "plots/vs_case.png"):
        assert (tmp_path / "sweep" / file).exists(), file
    pareto = read_rows(tmp_path / "sweep" / "pareto.csv")
    assert [r["variant"] for r in pareto] == ["flow_tpu_32x32-fine"]
    best = read_rows(tmp_path / "sweep" / "best.csv")
    assert {r["objective"] for r in best} == {"energy", "latency", "edp", "area"}


def test_constraints_clock_and_fronts(tmp_path):
    rows = run_sweep(
        {
            "base": str(BASE),
            "params": PARAMS,
            "vary": {"D1": [8, 32]},
            "derive": {"memories.unified_buffer.area": "D1 * 1e6"},
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
            "clock_ghz": 0.5,
            "constraints": ["latency <= 1 ms", "area <= 30 mm2"],
        },
        tmp_path / "sweep",
    )
    small, large = rows
    assert small["latency_s"] == pytest.approx(small["latency_cycles"] / 0.5e9)
    assert small["edp_Js"] == pytest.approx(small["energy_pJ"] * 1e-12 * small["latency_s"])
    assert small["status"] == "ok"
    assert large["status"] == "out" and "area <= 30 mm2" in large["reason"]
    assert large["area_mm2"] - small["area_mm2"] == pytest.approx(
        24 + (32 - 8) * 32 * (419 + 80 + 160) * 1e-6
    )  # MAC + per-MAC registers
    assert small["pareto"] and not large["pareto"]


@pytest.mark.slow
def test_new_variants_reuse_the_cache(tmp_path):
    sweep = {
        "base": str(BASE),
        "vary": {"memories.dram.r_cost": [1950, 2000]},
        "workloads": [str(WORKLOAD)],
        "mapping": str(MAPPING),
    }
    cache = tmp_path / "cache"
    run_sweep(sweep, tmp_path / "one", cache=cache)
    first = {p.name: p.stat().st_mtime_ns for p in (cache / "results").glob("*.json")}
    assert len(first) == 2 * 3  # 3 distinct layers per variant
    rows = run_sweep(
        {**sweep, "vary": {"memories.dram.r_cost": [1950, 2000, 2100]}},
        tmp_path / "two",
        cache=cache,
    )
    second = {p.name: p.stat().st_mtime_ns for p in (cache / "results").glob("*.json")}
    assert len(second) == 3 * 3
    assert all(second[name] == stamp for name, stamp in first.items())  # nothing recomputed
    assert [r["status"] for r in rows] == ["ok"] * 3


def test_cli_sweep(tmp_path, capsys):
    status = main(
        [
            "sweep",
            "--base",
            str(BASE),
            "--param",
            "ub=memories.unified_buffer.size",
            "--vary",
            "ub=[1MiB,2MiB]",
            "--workload",
            str(WORKLOAD),
            "--mapping",
            str(MAPPING),
            "--constraint",
            "area <= 100 mm2",
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert status == 0
    output = capsys.readouterr().out
    assert "flow_tpu_32x32-ub1MiB" in output and "2 rows (2 ok)" in output
    assert len(read_rows(tmp_path / "out" / "variants.csv")) == 2


@pytest.mark.parametrize(
    "flag, message",
    [
        ("memories.unified_bufer.size=[1MiB]", "did you mean 'memories.unified_buffer'"),
        ("memories.unified_buffer.size=1MiB", "is not a list"),
    ],
)
def test_cli_sweep_errors_are_one_line(tmp_path, capsys, flag, message):
    status = main(
        [
            "sweep",
            "--base",
            str(BASE),
            "--vary",
            flag,
            "--workload",
            str(WORKLOAD),
            "--mapping",
            str(MAPPING),
            "--output",
            str(tmp_path / "out"),
        ]
    )
    error = capsys.readouterr().err.strip()
    assert status == 2
    assert message in error and error.startswith("error: ") and "\n" not in error


@pytest.mark.slow
def test_workflow_hardware_sweep(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for source, name in ((BASE, "hw.yaml"), (MAPPING, "mapping.yaml"), (WORKLOAD, "small.yaml")):
        (inputs / name).write_text(source.read_text())
    sweep = {
        "name": "tpu",
        "base": "inputs/hw.yaml",
        "params": {"ub": "memories.unified_buffer.size"},
        "vary": {"ub": ["1MiB", "2MiB"]},
        "fragments": {"dram": {"big": {}, "tiny": {"set": {"memories.dram.size": 4096}}}},
        "workloads": ["inputs/small.yaml"],
        "mapping": "inputs/mapping.yaml",
    }
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"hardware_sweeps": [sweep]}))

    def snakemake():
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-s",
                str(REPO / "Snakefile"),
                "--directory",
                str(tmp_path),
                "--cores",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert completed.returncode == 0, completed.stderr[-3000:]
        return completed.stdout + completed.stderr

    output = snakemake()
    assert len(re.findall(r"^\s*(?:local)?rule sweep_batch:", output, re.MULTILINE)) == 4
    # the batch files are written as the Snakefile loads, not by write_spec jobs (the sweep's
    # settings file is one)
    assert len(re.findall(r"^\s*localrule write_spec:", output, re.MULTILINE)) == 1
    folder = tmp_path / "results" / "hardware_sweeps" / "tpu"
    rows = read_rows(folder / "variants.csv")
    assert [(r["variant"], r["status"]) for r in rows] == [
        ("flow_tpu_32x32-big-ub1MiB", "ok"),
        ("flow_tpu_32x32-big-ub2MiB", "ok"),
        ("flow_tpu_32x32-tiny-ub1MiB", "infeasible"),
        ("flow_tpu_32x32-tiny-ub2MiB", "infeasible"),
    ]
    assert (folder / "pareto.csv").exists() and (folder / "plots" / "vs_ub.png").exists()
    sweep["vary"]["ub"].append("4MiB")
    config.write_text(yaml.safe_dump({"hardware_sweeps": [sweep]}))
    output = snakemake()
    assert (
        len(re.findall(r"^\s*(?:local)?rule sweep_batch:", output, re.MULTILINE)) == 2
    )  # only the new ones
    assert len(read_rows(folder / "variants.csv")) == 6


def test_cacti_variants_equal_the_same_files_written_by_hand(tmp_path):
    """Varying the size of a CACTI-costed buffer changes its costs exactly as a file of that size."""
    rows = run_sweep(
        {
            "base": str(_cacti_base(tmp_path)),
            "params": {"ub": "memories.unified_buffer.size"},
            "vary": {"ub": ["256KiB", "1MiB"]},
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
        },
        tmp_path / "sweep",
    )
    assert [r["status"] for r in rows] == ["ok", "ok"]
    energies = []
    for row, kib in zip(rows, (256, 1024)):
        by_hand = yaml.safe_load(_cacti_base(tmp_path).read_text())
        by_hand["memories"]["unified_buffer"]["size"] = kib * 1024 * 8
        hardware = tmp_path / f"cacti_by_hand_{kib}.yaml"
        hardware.write_text(yaml.safe_dump(by_hand, sort_keys=False))
        result = run(str(WORKLOAD), str(hardware), str(MAPPING))
        assert row["energy_pJ"] == result.energy
        assert row["latency_cycles"] == result.latency
        energies.append(result.energy)
    assert energies[0] != energies[1]  # the buffer's energy per access follows its size


def _cacti_base(tmp_path: Path) -> Path:
    """The TPU example with its unified buffer costed by CACTI (the file's figures removed)."""
    path = tmp_path / "tpu_cacti.yaml"
    if not path.exists():
        document = yaml.safe_load(BASE.read_text())
        buffer = document["memories"]["unified_buffer"]
        for key in ("r_cost", "w_cost", "area"):
            buffer.pop(key)
        buffer["auto_cost_extraction"] = True
        path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.mark.slow
def test_area_of_cacti_memories_is_in_the_units_of_the_file(tmp_path):
    """CACTI's areas (mm2) are converted before they are added to the file's areas: a file without
    area_unit is read in um2, like one stating it, and a file stating mm2 gives the same total."""
    plain = _cacti_base(tmp_path)
    document = yaml.safe_load(plain.read_text())
    document["area_unit"] = "um2"
    in_um2 = tmp_path / "tpu_cacti_um2.yaml"
    in_um2.write_text(yaml.safe_dump(document, sort_keys=False))
    document["area_unit"] = "mm2"
    document["operational_array"]["unit_area"] *= 1e-6
    for memory in document["memories"].values():
        if memory.get("area") is not None:
            memory["area"] *= 1e-6
    in_mm2 = tmp_path / "tpu_cacti_mm2.yaml"
    in_mm2.write_text(yaml.safe_dump(document, sort_keys=False))
    areas = []
    for base in (plain, in_um2, in_mm2):
        rows = run_sweep(
            {
                "base": str(base),
                "params": {"ub": "memories.unified_buffer.size"},
                "vary": {"ub": ["1MiB"]},
                "workloads": [str(WORKLOAD)],
                "mapping": str(MAPPING),
            },
            tmp_path / base.stem,
        )
        assert rows[0]["status"] == "ok"
        areas.append(rows[0]["area_mm2"])
    buffer_mm2 = load_accelerator(in_mm2).memory["unified_buffer"].area
    assert buffer_mm2 > 0.1  # CACTI's 1 MiB SRAM, a visible part of the total
    assert areas[0] == pytest.approx(areas[1]) and areas[2] == pytest.approx(areas[1])


def test_batches_of_variants_and_their_files(tmp_path):
    import json

    from zigzag.sweep.config import read_sweep
    from zigzag.sweep.runner import evaluate_points, variants_of
    from zigzag.sweep.workflow import batches, evaluate_point_file, write_point_files

    section = {
        "name": "s",
        "base": str(BASE),
        "vary": {"memories.dram.r_cost": [1900, 1950, 2000, 2050, 2100]},
        "workloads": [str(WORKLOAD)],
        "mapping": str(MAPPING),
        "batch_size": 2,
    }
    sweep = read_sweep(section)
    variants = variants_of(sweep)
    assert [len(b) for b in batches(sweep, variants)] == [2, 2, 1]
    auto = read_sweep({**section, "batch_size": "auto"})
    assert [len(b) for b in batches(auto, variants)] == [1] * 5  # small sweeps: a job per variant
    files = write_point_files(sweep, variants, tmp_path / "points")
    assert list(files) == [
        "flow_tpu_32x32-r_cost1900+1",
        "flow_tpu_32x32-r_cost2000+1",
        "flow_tpu_32x32-r_cost2100",
    ]
    stamps = {name: Path(path).stat().st_mtime_ns for name, path in files.items()}
    grown = read_sweep(
        {**section, "vary": {"memories.dram.r_cost": [1900, 1950, 2000, 2050, 2100, 2150]}}
    )
    again = write_point_files(grown, variants_of(grown), tmp_path / "points")
    assert [Path(again[n]).stat().st_mtime_ns == stamps[n] for n in list(files)[:2]] == [
        True,
        True,
    ]  # not rerun
    rows = evaluate_point_file(
        files["flow_tpu_32x32-r_cost1900+1"], tmp_path / "cache", tmp_path / "rows.json"
    )
    assert rows == evaluate_points(sweep, variants[:2], tmp_path / "cache")
    written = json.loads((tmp_path / "rows.json").read_text())["rows"]
    # the per-layer figures are kept as JSON text (the collect job copies them without parsing)
    assert all(isinstance(row["_detail"], str) for row in written)
    assert [{**row, "_detail": json.loads(row["_detail"])} for row in written] == json.loads(
        json.dumps(rows)
    )
    with pytest.raises(
        InputError, match=r"batch_size: 0 is neither a positive whole number nor 'auto'"
    ):
        read_sweep({**section, "batch_size": 0})
