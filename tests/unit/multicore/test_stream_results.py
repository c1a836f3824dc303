"""The multi-core results table: run summaries, rows with parameter columns, Pareto flags over
latency, energy and area, figures, and the workflow step that writes them."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace

import pytest

from zigzag.errors import InputError
from zigzag.steps.experiments import write_experiment_spec
from zigzag.steps.multicore import resolve_multicore_experiments, results
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.plots.summary_figures import metrics_png, pareto_png
from zigzag.multicore.summaries import (
    ENERGY_TERMS,
    core_area,
    mark_pareto,
    multicore_rows,
    summarize_run,
)
from zigzag.multicore.pipeline import run_stream
from support import REPO

ROOT = REPO
INPUTS = ROOT / "inputs" / "stream"
QUAD = INPUTS / "hardware" / "tpu_like_quad_core.yaml"
MESH = INPUTS / "hardware" / "tpu_like_mesh_2x2.yaml"
RESNET = INPUTS / "workload" / "resnet18.onnx"
FIXED = INPUTS / "mapping" / "tpu_like_quad_core_resnet18_fixed_split.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """ResNet-18 layer by layer on the quad core and on the 2 x 2 mesh (their run folders)."""
    root = tmp_path_factory.mktemp("multicore")
    folders = {}
    for name, hardware in (("quad", QUAD), ("mesh", MESH)):
        run_stream(hardware, RESNET, FIXED, "lbl", cache=root / "cache", output=root / name)
        folders[name] = (root / name, hardware)
    return folders


def test_a_run_summary_holds_the_schedule_figures(runs):
    folder, hardware = runs["mesh"]
    run = summarize_run(
        folder,
        hardware,
        experiment="mesh",
        workload=RESNET,
        mapping=FIXED,
        mode="lbl",
        clock_ghz=0.5,
    )
    summary = json.loads((folder / "summary.json").read_text())
    assert (run.workload, run.mapping, run.allocation, run.compute_cores) == (
        "resnet18",
        FIXED.stem,
        "fixed",
        4,
    )
    assert run.latency_cycles == summary["latency"] and run.energy_pJ == summary["energy"]
    assert math.isclose(sum(value for _, value in run.energy_terms), run.energy_pJ, rel_tol=1e-9)
    accelerator = load_multicore_accelerator(hardware)
    by_core = sum(core_area(c) for c in accelerator.compute_cores)
    assert run.cores_area_um2 > 0 and run.cores_area_um2 == pytest.approx(by_core)
    row = multicore_rows([run])[0]
    assert row["latency_s"] == pytest.approx(run.latency_cycles * 2e-9)
    assert row["edp_pJ_cycles"] == pytest.approx(run.energy_pJ * run.latency_cycles)
    assert row["dram_traffic_bits"] == row["dram_read_bits"] + row["dram_write_bits"] > 0
    assert set(ENERGY_TERMS) <= set(row) and row["interconnect_area_mm2"] == 0
    assert row["area_mm2"] == pytest.approx(run.cores_area_um2 * 1e-6)


def test_utilisation_is_of_the_compute_cores_with_columns_named_by_role_and_position(runs):
    """The 2 x 2 mesh has 4 compute cores (its pooling and SIMD cores are not counted), per-core
    columns by mesh position and role, and the compute utilisation leaves the helpers out."""
    row = multicore_rows([summarize_run(*runs["mesh"], workload=RESNET)])[0]
    mesh = ["util_mesh_r0c0", "util_mesh_r1c0", "util_mesh_r0c1", "util_mesh_r1c1"]
    assert [c for c in row if c.startswith("util_")] == mesh + ["util_pooling", "util_simd"]
    assert row["compute_cores"] == 4
    assert row["compute_utilization"] == pytest.approx(sum(row[c] for c in mesh) / 4)
    quad = multicore_rows([summarize_run(*runs["quad"], workload=RESNET)])[0]
    assert [c for c in quad if c.startswith("util_")] == [
        f"util_core{i}_tpu_like" for i in range(4)
    ] + ["util_pooling", "util_simd"]


def test_rows_take_one_parameter_set_per_run_as_columns(runs):
    run = summarize_run(*runs["quad"], workload=RESNET)
    rows = multicore_rows([run, run], [{"mesh.rows": 2, "link_bandwidth": 32}, None])
    assert list(rows[0])[:8] == [
        "experiment",
        "workload",
        "accelerator",
        "mapping",
        "mode",
        "allocation",
        "mesh.rows",
        "link_bandwidth",
    ]
    assert "mesh.rows" not in rows[1] and rows[0]["latency_s"] is None
    with pytest.raises(InputError, match="parameters.energy_pJ"):
        multicore_rows([run], [{"energy_pJ": 1}])
    with pytest.raises(InputError, match="one \\(or None\\) per run"):
        multicore_rows([run], [])


def test_pareto_flags_are_per_workload_over_latency_energy_and_area(runs):
    base = summarize_run(*runs["quad"], workload=RESNET)
    cheap_small = replace(
        base,
        experiment="small",
        energy_pJ=base.energy_pJ / 2,
        cores_area_um2=base.cores_area_um2 / 2,
    )
    slow = replace(
        base, experiment="slow", latency_cycles=base.latency_cycles * 2
    )  # dominated by base
    fast_big = replace(
        base,
        experiment="big",
        latency_cycles=base.latency_cycles / 2,
        cores_area_um2=base.cores_area_um2 * 4,
    )
    other = replace(slow, workload="other")  # alone in its workload: on its front
    twin = replace(base, experiment="twin")  # equal points are all kept
    rows = mark_pareto(multicore_rows([base, cheap_small, slow, fast_big, other, twin]))
    assert {row["experiment"]: row["pareto"] for row in rows if row["workload"] == "resnet18"} == {
        base.experiment: False,
        "small": True,
        "slow": False,
        "big": True,
        "twin": False,
    }
    assert [row["pareto"] for row in rows if row["workload"] == "other"] == [True]
    equal = mark_pareto(multicore_rows([base, twin]))
    assert [row["pareto"] for row in equal] == [True, True]


def test_figures_with_and_without_parameter_columns(runs, tmp_path):
    quad, mesh = (summarize_run(*runs[n], experiment=n, workload=RESNET) for n in ("quad", "mesh"))
    rows = mark_pareto(multicore_rows([quad, mesh], [{"topology": "bus"}, {"topology": "mesh"}]))
    for path in (
        pareto_png(rows, tmp_path / "pareto.png"),
        metrics_png(rows, tmp_path / "metrics.png"),
        metrics_png(rows, tmp_path / "against.png", parameters=["topology"]),
    ):
        assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(InputError, match="no multi-core results"):
        pareto_png([], tmp_path / "none.png")


def test_the_workflow_step_writes_table_html_and_figures(runs, tmp_path):
    config = {
        "stream_experiments": [
            {
                "name": n,
                "accelerator": str(h),
                "workload": str(RESNET),
                "mapping": str(FIXED),
                "mode": "lbl",
                **({"clock_ghz": 0.8} if n == "mesh" else {}),
            }
            for n, (_, h) in runs.items()
        ]
    }
    specs = {
        n: write_experiment_spec(tmp_path / "specs", e)
        for n, e in resolve_multicore_experiments(config).items()
    }
    out = {k: tmp_path / f"multicore{k}" for k in (".csv", ".html", "_pareto.png", "_metrics.png")}
    message = results(
        [f"{specs[n]}={folder}" for n, (folder, _) in runs.items()],
        out[".csv"],
        out[".html"],
        out["_pareto.png"],
        out["_metrics.png"],
    )
    assert message.startswith("2 multi-core runs")
    rows = list(csv.DictReader(out[".csv"].open()))
    assert [(r["experiment"], r["accelerator"]) for r in rows] == [
        ("quad", "tpu_like_quad_core"),
        ("mesh", "tpu_like_mesh_2x2"),
    ]
    assert rows[0]["latency_s"] == "" and float(rows[1]["latency_s"]) == pytest.approx(
        float(rows[1]["latency_cycles"]) * 1.25e-9
    )
    assert "util_simd" in rows[0] and "<table>" in out[".html"].read_text()
    with pytest.raises(InputError, match="EXPERIMENT_SPEC=RUN_FOLDER"):
        results(["no-folder"], *out.values())


def test_a_bad_clock_is_a_one_line_config_error():
    config = {
        "stream_experiments": [
            {
                "name": "x",
                "accelerator": str(QUAD),
                "workload": str(RESNET),
                "mapping": str(FIXED),
                "mode": "lbl",
                "clock_ghz": 0,
            }
        ]
    }
    with pytest.raises(InputError, match="stream_experiments\\[0\\].clock_ghz"):
        resolve_multicore_experiments(config)


def test_the_clock_is_clock_ghz_and_the_older_clock_ns_is_read_with_a_warning(caplog):
    """One clock name in stream_experiments and hardware_sweeps: clock_ghz; clock_ns is converted."""
    base = {
        "name": "x",
        "accelerator": str(QUAD),
        "workload": str(RESNET),
        "mapping": str(FIXED),
        "mode": "lbl",
    }
    assert (
        resolve_multicore_experiments({"stream_experiments": [{**base, "clock_ghz": 2}]})["x"][
            "clock_ghz"
        ]
        == 2
    )
    with caplog.at_level("WARNING"):
        exp = resolve_multicore_experiments({"stream_experiments": [{**base, "clock_ns": 1.25}]})[
            "x"
        ]
    assert exp["clock_ghz"] == pytest.approx(0.8) and "clock_ns" not in exp
    assert "clock_ns is read as clock_ghz" in caplog.text
    with pytest.raises(InputError, match="clock_ns.*give clock_ghz only"):
        resolve_multicore_experiments(
            {"stream_experiments": [{**base, "clock_ns": 1, "clock_ghz": 1}]}
        )
    with pytest.raises(InputError, match="clock_ns.*not a clock period"):
        resolve_multicore_experiments({"stream_experiments": [{**base, "clock_ns": -1}]})


def test_a_summary_without_the_dram_columns_is_not_read_as_zero(runs, tmp_path):
    folder, hardware = runs["quad"]
    old = tmp_path / "old"
    old.mkdir()
    summary = json.loads((folder / "summary.json").read_text())
    (old / "summary.json").write_text(
        json.dumps({k: v for k, v in summary.items() if k != "dram_moved_bits"})
    )
    (old / "schedule_trace.json").write_text((folder / "schedule_trace.json").read_text())
    with pytest.raises(InputError, match="dram_moved_bits: missing.*schedule it again"):
        summarize_run(old, hardware)
