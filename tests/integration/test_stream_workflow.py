"""Multi-core experiments in the workflow: rules, pictures, report, and what an edited core file reruns."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from support import REPO
from support.workflow import run_snakemake, stored

ENTRIES = "multicore-cost/entries"

SMALL = REPO / "tests" / "data" / "reference" / "stream" / "small"
CORES = REPO / "inputs" / "stream" / "hardware" / "cores"


def job_counts(stderr: str) -> dict[str, int]:
    """How many jobs of each rule Snakemake started (its log has one 'rule NAME:' block per job)."""
    counts: dict[str, int] = {}
    for rule in re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):$", stderr, flags=re.M):
        counts[rule] = counts.get(rule, 0) + 1
    return counts


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A two-core accelerator (two copies of the TPU-like core), the 3-conv network, conv1 on core 1."""
    root = tmp_path_factory.mktemp("stream_workflow")
    hw = root / "hw"
    (hw / "cores").mkdir(parents=True)
    for name, source in (
        ("core_a.yaml", "tpu_like.yaml"),
        ("core_b.yaml", "tpu_like.yaml"),
        ("offchip.yaml", "offchip.yaml"),
    ):
        shutil.copy(CORES / source, hw / "cores" / name)
    (hw / "dual.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "dual",
                "cores": {0: "core_a.yaml", 1: "core_b.yaml"},
                "offchip_core": "offchip.yaml",
                "bandwidth": 64,
                "unit_energy_cost": 0,
                "core_connectivity": ["0, 1"],
            }
        )
    )
    (root / "mapping.yaml").write_text(
        yaml.safe_dump(
            [
                {"name": "default", "core_allocation": [0], "core_allocation_is_fixed": True},
                {"name": "/conv1/Conv", "core_allocation": [1], "core_allocation_is_fixed": True},
            ]
        )
    )
    shutil.copy(SMALL / "small_3conv.onnx", root / "net.onnx")
    common = {"accelerator": "hw/dual.yaml", "workload": "net.onnx", "mapping": "mapping.yaml"}
    (root / "flexible.yaml").write_text(
        yaml.safe_dump(
            [
                {"name": "default", "core_allocation": [0], "core_allocation_is_fixed": True},
                {"name": "/conv1/Conv", "core_allocation": [0, 1]},
            ]
        )
    )
    config = {
        "stream_experiments": [
            {"name": "net-fused", "mode": "fused", "layer_stacks": "0-2", **common},
            {
                "name": "net-search",
                "mode": "lbl",
                **common,
                "mapping": "flexible.yaml",
                "search": {"individuals": 4, "generations": 2, "seed": 1},
            },
        ],
        "outputs": {"plot_format": "png"},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def snakemake(root: Path, *args: str) -> subprocess.CompletedProcess:
    config = str(root / "config.yaml")
    return run_snakemake(root, "--configfile", config, *args, cores=None, timeout=600)


@pytest.mark.slow
def test_stream_experiments_run_and_rerun_only_the_edited_core(project):
    first = snakemake(project, "--cores", "2")
    assert first.returncode == 0, first.stderr[-4000:]
    results = project / "results" / "multicore"
    for name in ("net-fused", "net-search"):
        summary = json.loads((results / name / "summary.json").read_text())
        assert summary["latency"] > 0 and summary["nb_cns"] >= 3
        for picture in ("gantt.html", "gantt.png", "memory.png", "energy.png", "perfetto.json"):
            assert (results / name / "plots" / picture).stat().st_size > 0, picture
    table = list(csv.DictReader((results / "multicore.csv").open()))
    assert [row["experiment"] for row in table] == ["net-fused", "net-search"]
    assert all(
        float(row["latency_cycles"]) > 0 and row["pareto"] in ("True", "False") for row in table
    )
    for figure in ("multicore.html", "multicore_pareto.png", "multicore_metrics.png"):
        assert (results / figure).stat().st_size > 0, figure
    front = (results / "net-search" / "front.csv").read_text().splitlines()
    assert (
        front[0] == "energy,latency,search_energy,search_latency,allocations,allocation"
        and len(front) >= 2
    )
    assert (results / "net-search" / "plots" / "pareto.png").stat().st_size > 0
    search_job = first.stderr[first.stderr.index("rule multicore_search:") :]
    assert re.search(
        r"^\s+threads: 2$", search_job[: search_job.index("\n\n")], flags=re.M
    )  # --workers {threads}
    plans = {
        n: json.loads((results / n / "cost_plan.json").read_text())
        for n in ("net-fused", "net-search")
    }
    counts = job_counts(first.stderr)
    distinct = {k for p in plans.values() for k in p["keys"]}
    # each distinct (CN shape, core) entry computed once, shared, by a few chunk jobs
    assert stored(project, 0, ENTRIES) == len(distinct) and 2 <= counts["multicore_costs"] <= 4

    again = snakemake(project, "--cores", "2")
    assert again.returncode == 0 and "Nothing to be done" in again.stderr + again.stdout

    core_b = project / "hw" / "cores" / "core_b.yaml"
    core_b.write_text(
        re.sub(
            r"(r_cost:\s*)([0-9.]+)",
            lambda m: f"{m[1]}{float(m[2]) * 2}",
            core_b.read_text(),
            count=1,
        )
    )
    start = time.time_ns()
    edited = snakemake(project, "--cores", "2")
    assert edited.returncode == 0, edited.stderr[-4000:]
    counts = job_counts(edited.stderr)
    new_plans = {n: json.loads((results / n / "cost_plan.json").read_text()) for n in plans}
    on_core_1 = {k for p in new_plans.values() for k, c in zip(p["keys"], p["cores"]) if c == 1}
    # only core 1's cost entries are computed again
    assert on_core_1 and stored(project, start, ENTRIES) == len(on_core_1)
    assert {k for p in new_plans.values() for k, c in zip(p["keys"], p["cores"]) if c == 0} == {
        k for p in plans.values() for k, c in zip(p["keys"], p["cores"]) if c == 0
    }
    assert (
        counts["multicore_schedule"] == 1
        and counts["multicore_search"] == 1
        and counts["multicore_plots"] == 2
    )
    assert "split_layers" not in counts and "evaluate_layers" not in counts

    report = snakemake(project, "--report", str(project / "report.html"))
    assert report.returncode == 0, report.stderr[-4000:]
    html = (project / "report.html").read_text()
    for name in ("net-fused", "net-search"):
        for picture in ("gantt.html", "gantt.png", "memory.png", "energy.png", "perfetto.json"):
            assert f"results/multicore/{name}/plots/{picture}" in html, (name, picture)
    assert "results/multicore/net-search/plots/pareto.png" in html
    for figure in ("multicore.html", "multicore_pareto.png", "multicore_metrics.png"):
        assert f"results/multicore/{figure}" in html, figure
    assert "Multi-core (Stream)" in html


@pytest.mark.slow
def test_stream_experiment_schema_errors_are_one_line(tmp_path):
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "stream_experiments": [
                    {
                        "name": "x",
                        "accelerator": "a.yaml",
                        "workload": "w.onnx",
                        "mapping": "m.yaml",
                        "mode": "sideways",
                    }
                ]
            }
        )
    )
    done = snakemake(tmp_path, "-n")
    assert done.returncode != 0 and "sideways" in done.stderr + done.stdout
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "stream_experiments": [
                    {
                        "name": "x",
                        "accelerator": "a.yaml",
                        "workload": "w.onnx",
                        "mapping": "m.yaml",
                        "mode": "lbl",
                    }
                ]
            }
        )
    )
    done = snakemake(tmp_path, "-n")
    assert (
        done.returncode != 0
        and "stream_experiments[0].accelerator: file a.yaml does not exist"
        in done.stderr + done.stdout
    )
