"""The Snakemake workflow: cache, incremental reruns, failure isolation, restart, lint.

Each test runs snakemake on a small config in a temporary directory and counts the jobs it ran.
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

from conftest import DATA, REPO, reference_input

pytestmark = pytest.mark.slow

SNAKEFILE = REPO / "Snakefile"


def snakemake(workdir: Path, *args: str, check: bool = True) -> str:
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(SNAKEFILE),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        *args,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=900)
    output = completed.stdout + completed.stderr
    if check:
        assert completed.returncode == 0, output[-4000:]
    return output


def jobs(output: str, rule: str) -> int:
    return len(re.findall(rf"^\s*(?:local)?(?:rule|checkpoint) {rule}:", output, re.MULTILINE))


def write_yaml(path: Path, data) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(name="workdir")
def workdir_fixture(tmp_path: Path) -> Path:
    """Inputs (two accelerator files, one workload, one mapping) and a two-experiment config."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    shutil.copy(reference_input("hardware", "tpu_like.yaml"), inputs / "tpu_a.yaml")
    hardware_b = yaml.safe_load(Path(reference_input("hardware", "tpu_like.yaml")).read_text())
    write_yaml(inputs / "tpu_b.yaml", {**hardware_b, "name": "tpu_b"})
    shutil.copy(reference_input("mapping", "tpu_like.yaml"), inputs / "mapping.yaml")
    shutil.copy(DATA / "workflow" / "small_convs.yaml", inputs / "small.yaml")
    write_yaml(
        tmp_path / "config.yaml",
        {
            "experiments": [
                {
                    "name": "on_a",
                    "workload": "inputs/small.yaml",
                    "accelerator": "inputs/tpu_a.yaml",
                    "mapping": "inputs/mapping.yaml",
                },
                {
                    "name": "on_b",
                    "workload": "inputs/small.yaml",
                    "accelerator": "inputs/tpu_b.yaml",
                    "mapping": "inputs/mapping.yaml",
                },
                {
                    "name": "on_a_again",
                    "workload": "inputs/small.yaml",
                    "accelerator": "inputs/tpu_a.yaml",
                    "mapping": "inputs/mapping.yaml",
                },
            ],
        },
    )
    return tmp_path


def summary(workdir: Path, name: str) -> dict:
    return json.loads((workdir / "results" / name / "summary.json").read_text())


def test_identical_layers_are_evaluated_once(workdir):
    output = snakemake(workdir)
    # 4 layers, two of the same shape -> 3 jobs per accelerator file; on_a_again reuses on_a's.
    assert jobs(output, "evaluate_layer") == 6
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
    assert jobs(snakemake(workdir), "evaluate_layer") == 0
    # the rule graph reads like ZigZag's stage list
    graph = snakemake(workdir, "--rulegraph")
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', graph, re.MULTILINE))
    edges = {
        (names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", graph, re.MULTILINE)
    }
    assert {
        ("parse_workload", "split_layers"),
        ("parse_accelerator", "split_layers"),
        # split_layers writes the layer jobs (not declared files: a content-addressed store), and
        # evaluate_layer's input is its job alone, so that its input set never depends on which
        # experiment wrote a shared job first; the split reaches evaluate_layer through sum's plan
        ("split_layers", "sum"),
        ("evaluate_layer", "sum"),
        ("sum", "save"),
        ("save", "compare"),
        ("sum", "plot_experiment"),
        ("parse_accelerator", "plot_accelerator"),
        ("compare", "plot_comparison"),
    } <= edges


def test_editing_one_layer_reruns_only_that_layer(workdir):
    snakemake(workdir)
    layers = yaml.safe_load((workdir / "inputs" / "small.yaml").read_text())
    layers[3]["loop_sizes"][1] = 48  # conv_d: K 64 -> 48
    write_yaml(workdir / "inputs" / "small.yaml", layers)
    output = snakemake(workdir)
    # the new shape is evaluated once per accelerator file (a and b), never the unchanged layers
    assert jobs(output, "evaluate_layer") == 2
    assert jobs(output, "parse_workload") == 1
    assert jobs(output, "parse_accelerator") == 0
    assert jobs(output, "split_layers") == 3


def test_editing_an_accelerator_reruns_only_its_experiments(workdir):
    snakemake(workdir)
    summary_a = (workdir / "results" / "on_a" / "summary.json").stat().st_mtime_ns
    hardware = yaml.safe_load((workdir / "inputs" / "tpu_b.yaml").read_text())
    hardware["memories"]["dram"]["r_cost"] = 800
    write_yaml(workdir / "inputs" / "tpu_b.yaml", hardware)
    output = snakemake(workdir)
    assert jobs(output, "parse_accelerator") == 1
    assert jobs(output, "parse_workload") == 0
    assert jobs(output, "split_layers") == 1
    assert jobs(output, "evaluate_layer") == 3
    assert (workdir / "results" / "on_a" / "summary.json").stat().st_mtime_ns == summary_a
    assert summary(workdir, "on_b")["energy"] > summary(workdir, "on_a")["energy"]


def test_output_only_option_reruns_no_evaluation(workdir):
    snakemake(workdir)
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["outputs"] = {"float_format": "%.3f"}
    write_yaml(workdir / "config.yaml", config)
    output = snakemake(workdir)
    assert jobs(output, "evaluate_layer") == 0
    assert jobs(output, "split_layers") == 0
    assert jobs(output, "sum") == 0
    assert jobs(output, "save") == 3
    row = (workdir / "results" / "on_a" / "layers.csv").read_text().splitlines()[1]
    assert re.search(r",\d+\.\d{3},", row)


def test_editing_an_experiment_option_reruns_only_that_experiment(workdir):
    snakemake(workdir)
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
    """Start a run and kill it hard (SIGKILL to its process group: Snakemake, the job shells and
    clients; the job server then kills the jobs) once its first layer result is written; True if
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


def test_lint_is_clean(workdir):
    output = snakemake(workdir, "--lint")
    assert "Congratulations, your workflow is in a good condition!" in output


def test_bad_config_is_reported_in_one_line(workdir):
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["experiments"][1]["opt"] = "speed"
    write_yaml(workdir / "config.yaml", config)
    output = snakemake(workdir, check=False)
    assert "config: experiments[1].opt: 'speed' is not one of energy, latency, EDP" in output
