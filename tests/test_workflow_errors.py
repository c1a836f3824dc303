"""Bad input in the Snakemake workflow: the failing job's one-line error is what the user sees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import DATA, REPO, reference_input
from test_bad_inputs import relu_softmax

pytestmark = pytest.mark.slow


def snakemake(workdir: Path) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
         "--cores", "2"], capture_output=True, text=True, timeout=900)
    assert completed.returncode != 0
    return completed.stdout + completed.stderr


def workdir_with(tmp_path: Path, workload: str, accelerator: str) -> Path:
    config = {"experiments": [{"name": "bad", "workload": workload, "accelerator": accelerator,
                               "mapping": reference_input("mapping", "tpu_like.yaml")}]}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def test_model_without_layers_fails_in_parsing_with_one_line(tmp_path):
    model = relu_softmax(tmp_path / "act.onnx")
    output = snakemake(workdir_with(tmp_path, model, reference_input("hardware", "tpu_like.yaml")))
    first_error = next(line for line in output.splitlines() if "rror" in line)
    assert first_error.startswith(f"error: {model}: no operator of the model can be evaluated (it has 1 Relu, 1 Softmax)")
    assert "MissingOutputException" not in output and "Traceback" not in output
    assert re.search(r"Error in rule parse_workload:", output)
    logs = [path.read_text().splitlines() for path in (tmp_path / "results").rglob("*.log")]
    assert [log[-1] for log in logs if log and log[-1].startswith("error:")] == [first_error]  # the log's last line
    assert output.rstrip().splitlines().count(first_error) == 2  # printed by the job, then with the failed log


def test_missing_workload_stops_the_workflow_with_one_line(tmp_path):
    output = snakemake(workdir_with(tmp_path, "inputs/workload/gone.onnx", reference_input("hardware", "tpu_like.yaml")))
    assert "config: experiment 'bad'.workload: file inputs/workload/gone.onnx does not exist; fix the path" in output
    assert "MissingInputException" not in output and "Traceback" not in output


def test_failing_job_shows_a_short_command_line(tmp_path):
    hardware = yaml.safe_load(Path(reference_input("hardware", "tpu_like.yaml")).read_text())
    hardware["memories"]["dram"]["size"] = 10_000
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(hardware, sort_keys=False))
    output = snakemake(workdir_with(tmp_path, str(DATA / "workflow" / "small_convs.yaml"), "tiny.yaml"))
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert errors and all(re.match(r"error: bad: no loop ordering of layer conv_\w fits the memories of tpu_like: "
                                   r"operand \w+ needs \d+ bits in memory dram, which holds 10000 bits", e)
                          for e in errors)
    commands = [line for line in output.splitlines() if 'python -S "$ZIGZAG_FLOW_CLIENT"' in line]
    assert commands and max(len(line) for line in commands) < 400, max(commands, key=len)
    assert not any("{" in line for line in commands)  # the experiment is a file, not JSON on the command line
