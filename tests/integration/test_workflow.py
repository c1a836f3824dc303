"""The Snakemake workflow: cache, incremental reruns, failure isolation, restart, lint.

Each test runs snakemake on a small config in a temporary directory and counts the jobs it ran;
the tests that edit a finished run start from a copy of the shared one (fixture small_workflow).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support.workflow import (
    SNAKEFILE,
    jobs,
    small_workflow_folder,
    snakemake,
    stored,
    summary,
    write_yaml,
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The small config and its inputs (support.workflow.small_workflow_folder), not yet run."""
    return small_workflow_folder(tmp_path)


@pytest.fixture
def finished(small_workflow, tmp_path: Path) -> Path:
    """A copy of the shared finished run of that config, to edit and run again."""
    return small_workflow.copy_to(tmp_path / "run")


def test_identical_layers_are_evaluated_once(small_workflow):
    output, workdir = small_workflow.output, small_workflow.folder
    # 4 layers, two of the same shape -> 3 searches per accelerator file; on_a_again reuses on_a's
    # (one job per experiment's chunk: 3 layers are one chunk; none for layers stored already)
    assert stored(workdir) == 6 and 2 <= jobs(output, "evaluate_layers") <= 3
    assert jobs(output, "parse_workload") == 1  # one workload + mapping pair, shared
    assert jobs(output, "parse_accelerator") == 2
    assert jobs(output, "split_layers") == 3
    assert jobs(output, "sum") == 3
    assert jobs(output, "save") == 3
    assert summary(workdir, "on_a")["layers"] == 4
    assert summary(workdir, "on_a") == {**summary(workdir, "on_a_again"), "experiment": "on_a"}
    table = (workdir / "results" / "on_a" / "layers.csv").read_text().splitlines()
    assert table[0].startswith("id,name,operator_type,energy_pJ") and len(table) == 5
    assert sorted(p.name for p in (workdir / "results" / "on_a" / "layers").glob("*.json")) == [
        "conv_a.json",
        "conv_b.json",
        "conv_c.json",
        "conv_d.json",
    ]
    experiment = json.loads((workdir / "results" / "on_a" / "experiment.json").read_text())
    assert experiment["inputs"]["workload"]["sha256"] and experiment["package_version"]
    assert "on_b" in (workdir / "results" / "experiments.csv").read_text()


@pytest.mark.slow
def test_a_finished_run_runs_nothing_again_and_its_rule_graph_reads_like_zigzags_stages(finished):
    assert jobs(snakemake(finished), "evaluate_layers") == 0
    # the rule graph reads like ZigZag's stage list
    graph = snakemake(finished, "--rulegraph")
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', graph, re.MULTILINE))
    edges = {
        (names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", graph, re.MULTILINE)
    }
    assert {
        ("parse_workload", "split_layers"),
        ("parse_accelerator", "split_layers"),
        # split_layers writes the experiment's jobs and plan, evaluate_layers searches a chunk of
        # them into the result store, sum reads them from there
        ("split_layers", "evaluate_layers"),
        ("split_layers", "sum"),
        ("evaluate_layers", "sum"),
        ("sum", "save"),
        ("save", "compare"),
        ("sum", "plot_experiment"),
        ("parse_accelerator", "plot_accelerator"),
        ("compare", "plot_comparison"),
    } <= edges


@pytest.mark.slow
def test_editing_one_layer_reruns_only_that_layer(workdir):
    snakemake(workdir)
    layers = yaml.safe_load((workdir / "inputs" / "small.yaml").read_text())
    layers[3]["loop_sizes"][1] = 48  # conv_d: K 64 -> 48
    write_yaml(workdir / "inputs" / "small.yaml", layers)
    start = time.time_ns()
    output = snakemake(workdir)
    # the new shape is searched once per accelerator file (a and b), never the unchanged layers
    assert stored(workdir, start) == 2 and jobs(output, "evaluate_layers") <= 3
    assert jobs(output, "parse_workload") == 1
    assert jobs(output, "parse_accelerator") == 0
    assert jobs(output, "split_layers") == 3


@pytest.mark.slow
def test_editing_an_accelerator_reruns_only_its_experiments(finished):
    workdir = finished
    summary_a = (workdir / "results" / "on_a" / "summary.json").stat().st_mtime_ns
    hardware = yaml.safe_load((workdir / "inputs" / "tpu_b.yaml").read_text())
    hardware["memories"]["dram"]["r_cost"] = 800
    write_yaml(workdir / "inputs" / "tpu_b.yaml", hardware)
    start = time.time_ns()
    output = snakemake(workdir)
    assert jobs(output, "parse_accelerator") == 1
    assert jobs(output, "parse_workload") == 0
    assert jobs(output, "split_layers") == 1
    assert stored(workdir, start) == 3 and jobs(output, "evaluate_layers") == 1
    assert (workdir / "results" / "on_a" / "summary.json").stat().st_mtime_ns == summary_a
    assert summary(workdir, "on_b")["energy"] > summary(workdir, "on_a")["energy"]


@pytest.mark.slow
def test_output_only_option_reruns_no_evaluation(finished):
    workdir = finished
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["outputs"] = {"float_format": "%.3f"}
    write_yaml(workdir / "config.yaml", config)
    output = snakemake(workdir)
    assert jobs(output, "evaluate_layers") == 0
    assert jobs(output, "split_layers") == 0
    assert jobs(output, "sum") == 0
    assert jobs(output, "save") == 3
    row = (workdir / "results" / "on_a" / "layers.csv").read_text().splitlines()[1]
    assert re.search(r",\d+\.\d{3},", row)


@pytest.mark.slow
def test_editing_an_experiment_option_reruns_only_that_experiment(finished):
    workdir = finished
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["experiments"][1]["opt"] = "energy"
    write_yaml(workdir / "config.yaml", config)
    output = snakemake(workdir, "--printshellcmds")
    assert jobs(output, "split_layers") == 1
    assert jobs(output, "sum") == 1
    split_command = next(line for line in output.splitlines() if " split --experiment " in line)
    assert "--experiment results/.cache/experiments/on_b.json" in split_command
    spec = json.loads((workdir / "results" / ".cache" / "experiments" / "on_b.json").read_text())
    assert spec["options"]["opt"] == "energy"


@pytest.mark.slow
def test_unmappable_layer_fails_alone(workdir):
    layers = yaml.safe_load((workdir / "inputs" / "small.yaml").read_text())
    big = {
        **layers[3],
        "id": 4,
        "name": "too_big",
        "loop_sizes": [1, 512, 256, 7, 7, 3, 3],
        "operand_source": {"I": 3, "W": 4},
    }
    write_yaml(workdir / "inputs" / "small.yaml", layers + [big])
    hardware = yaml.safe_load((workdir / "inputs" / "tpu_a.yaml").read_text())
    hardware["memories"]["dram"]["size"] = 2_000_000
    write_yaml(workdir / "inputs" / "tpu_a.yaml", hardware)
    output = snakemake(workdir, check=False)
    assert re.search(
        r"error: on_a(_again)?: no loop ordering of layer too_big fits the memories of tpu_like",
        output,
    )
    assert "Traceback" not in output
    # the other experiments and the other layers of on_a finished
    assert summary(workdir, "on_b")["layers"] == 5
    cached = [
        json.loads(p.read_text())
        for p in (workdir / "results" / ".cache" / "results").glob("*.json")
    ]
    assert sum("result" in c for c in cached) == 3 + 4 and sum("failed" in c for c in cached) == 1
    # on_a is a failed row of the comparison (zigzag/steps/failures.py), not a missing one
    assert summary(workdir, "on_a")["failed"]["step"] == "evaluate"
    assert "on_a (evaluate: " in output and (workdir / "results" / "comparison.png").exists()


def interrupt_mid_run(workdir: Path) -> bool:
    """Start a run and kill it hard (SIGKILL to its process group: Snakemake and its jobs) once its
    first layer result is written; True if
    it died before the end. (A hard kill, because whether Snakemake 9.27 stops on SIGINT depends
    on how the test itself was started; with warm jobs the whole run takes only a few seconds.)"""
    shutil.rmtree(workdir / "results", ignore_errors=True)
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(SNAKEFILE),
        "--directory",
        str(workdir),
        "--cores",
        "1",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    results = workdir / "results" / ".cache" / "results"
    deadline = time.time() + 300
    while time.time() < deadline and not any(results.glob("*.json")):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=120)
    return not (workdir / "results" / "experiments.csv").exists()


def is_temporary(path: Path) -> bool:
    """A file zigzag.io.atomic writes before renaming it: ``.<name>.<pid>.<n>.tmp<suffix>``."""
    return re.fullmatch(r"\..+\.\d+\.\d+\.tmp(\.\w+)?", path.name) is not None


@pytest.mark.slow
def test_restart_after_kill_completes(workdir, tmp_path_factory):
    assert any(interrupt_mid_run(workdir) for _ in range(3)), (
        "three runs all finished before the kill"
    )
    snakemake(workdir, "--unlock")  # as docs/reference/results.md says to do after a hard kill
    snakemake(workdir)
    # a job killed while writing leaves its temporary file (zigzag/io/atomic.py), never a
    # half-written output: every other JSON file reads
    written = [path for path in (workdir / "results").rglob("*.json") if not is_temporary(path)]
    assert written
    for path in written:
        json.loads(path.read_text())
    clean = tmp_path_factory.mktemp("clean")
    shutil.copytree(workdir / "inputs", clean / "inputs")
    shutil.copy(workdir / "config.yaml", clean / "config.yaml")
    snakemake(clean)
    for name in ("on_a", "on_b", "on_a_again"):
        assert summary(workdir, name) == summary(clean, name)


def _folder_state(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and folder under ``folder`` but Snakemake's own ``.snakemake``: mtime and content."""
    state = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] != ".snakemake":
            state[str(relative)] = (
                path.stat().st_mtime_ns,
                path.read_bytes() if path.is_file() else b"",
            )
    return state


@pytest.mark.slow
def test_dry_run_changes_nothing_in_the_folder(workdir):
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    sweep = {
        "name": "ub",
        "base": "inputs/tpu_a.yaml",
        "workloads": ["inputs/small.yaml"],
        "mapping": "inputs/mapping.yaml",
        "vary": {"memories.sram_2MB.size": [8388608, 16777216]},
    }
    write_yaml(workdir / "config.yaml", {**config, "hardware_sweeps": [sweep]})
    before = _folder_state(workdir)
    output = snakemake(workdir, "-n")
    assert jobs(output, "write_spec") >= 4  # the experiments' specs and the sweep's files are jobs
    assert _folder_state(workdir) == before


@pytest.mark.slow
def test_lint_is_clean(workdir):
    output = snakemake(workdir, "--lint")
    assert "Congratulations, your workflow is in a good condition!" in output


@pytest.mark.slow
def test_bad_config_is_reported_in_one_line(workdir):
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["experiments"][1]["opt"] = "speed"
    write_yaml(workdir / "config.yaml", config)
    output = snakemake(workdir, check=False)
    assert "config: experiments[1].opt: 'speed' is not one of energy, latency, EDP" in output
