"""Bad input in the Snakemake workflow: the failing job's one-line error is what the user sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from support import DATA, REPO, reference_input
from support.bad_inputs import relu_softmax
from support.workflow import run_snakemake

pytestmark = pytest.mark.slow


def snakemake(workdir: Path) -> str:
    """The output of a run that must fail."""
    completed = run_snakemake(workdir)
    assert completed.returncode != 0
    return completed.stdout + completed.stderr


def workdir_with(tmp_path: Path, workload: str, accelerator: str) -> Path:
    config = {
        "experiments": [
            {
                "name": "bad",
                "workload": workload,
                "accelerator": accelerator,
                "mapping": reference_input("mapping", "tpu_like.yaml"),
            }
        ]
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def test_model_without_layers_fails_in_parsing_with_one_line(tmp_path):
    model = relu_softmax(tmp_path / "act.onnx")
    output = snakemake(workdir_with(tmp_path, model, reference_input("hardware", "tpu_like.yaml")))
    first_error = next(line for line in output.splitlines() if "rror" in line)
    assert first_error.startswith(
        f"error: {model}: no operator of the model can be evaluated (it has 1 Relu, 1 Softmax)"
    )
    assert "MissingOutputException" not in output and "Traceback" not in output
    # the parse job records the failure (zigzag/steps/failures.py); the run's last job fails naming it
    assert re.search(r"Error in rule check_experiments:", output)
    logs = {
        path.name: path.read_text().splitlines() for path in (tmp_path / "results").rglob("*.log")
    }
    ends = {name: log[-1] for name, log in logs.items() if log and log[-1].startswith("error:")}
    assert (
        ends.pop(next(name for name in ends if name != "check_experiments.log")) == first_error
    )  # the log's last line
    reason = first_error.removeprefix("error: ")
    assert ends == {
        "check_experiments.log": f"error: results/experiments.csv: status: 1 of 1 experiments failed: "
        f"bad (parse_workload: {reason})"
    }
    assert output.rstrip().splitlines().count(first_error) == 1  # printed by the job


def test_missing_workload_stops_the_workflow_with_one_line(tmp_path):
    output = snakemake(
        workdir_with(
            tmp_path, "inputs/workload/gone.onnx", reference_input("hardware", "tpu_like.yaml")
        )
    )
    line = "error: config: experiment 'bad'.workload: file inputs/workload/gone.onnx does not exist; fix the path"
    assert "MissingInputException" not in output and "Traceback" not in output
    # checked before any rule is built, and printed alone (no WorkflowError, file, line or stack lines)
    assert own_lines(output) == [line]


def own_lines(output: str) -> list[str]:
    """The output's lines but Snakemake's note on the profile it uses."""
    return [
        text
        for text in output.splitlines()
        if text.strip() and not text.startswith("Using workflow specific")
    ]


def sweep_workdir(tmp_path: Path, **sweep) -> Path:
    config = {
        "hardware_sweeps": [
            {
                "name": "ub",
                "base": str(REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"),
                "vary": {"memories.unified_buffer.size": ["64KiB", "128KiB"]},
                "workloads": [str(DATA / "workflow" / "small_convs.yaml")],
                "mapping": str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"),
                "lpf_limit": 3,
                **sweep,
            }
        ]
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def test_a_sweep_constraint_on_an_unknown_metric_stops_the_workflow_before_any_job(tmp_path):
    output = snakemake(sweep_workdir(tmp_path, constraints=["areaa <= 1 mm2"]))
    lines = own_lines(output)
    assert len(lines) == 1 and lines[0].startswith(
        "error: config: hardware_sweeps[0] (ub): constraints[0]: 'areaa' is not a metric (did you mean 'area'?); "
        "use area, energy, latency, edp, utilization, a column of variants.csv (area_mm2, "
    )
    assert not (tmp_path / "results" / "hardware_sweeps").exists()


def test_a_sweep_without_an_ok_variant_fails_the_workflow_with_one_line(tmp_path):
    output = snakemake(sweep_workdir(tmp_path, constraints=["area <= 0.000001 mm2"]))
    line = (
        "error: hardware sweep ub: no variant is ok (2 out of 2 rows); constraint 'area <= 0.000001 mm2' "
        "excludes the most: 2 of the 2 out rows; relax it"
    )
    assert line in output.splitlines() and "Traceback" not in output
    log = tmp_path / "results" / "hardware_sweeps" / "ub" / "logs" / "collect.log"
    assert log.read_text().splitlines()[-1] == line


def test_failing_job_shows_a_short_command_line(tmp_path):
    hardware = yaml.safe_load(Path(reference_input("hardware", "tpu_like.yaml")).read_text())
    hardware["memories"]["dram"]["size"] = 10_000
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(hardware, sort_keys=False))
    output = snakemake(
        workdir_with(tmp_path, str(DATA / "workflow" / "small_convs.yaml"), "tiny.yaml")
    )
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    check = "error: results/experiments.csv: status: 1 of 1 experiments failed: bad (evaluate: bad: no loop ordering"
    assert any(
        e.startswith(check) for e in errors
    )  # the run's last job names the failed experiment
    errors = [e for e in errors if not e.startswith(check)]
    assert errors and all(
        re.match(
            r"error: bad: no loop ordering of layer conv_\w fits the memories of tpu_like: "
            r"operand \w+ needs \d+ bits in memory dram, which holds 10000 bits",
            e,
        )
        for e in errors
    )
    commands = [line for line in output.splitlines() if 'python -S "$ZIGZAG_FLOW_CLIENT"' in line]
    assert commands and max(len(line) for line in commands) < 400, max(commands, key=len)
    assert not any(
        "{" in line for line in commands
    )  # the experiment is a file, not JSON on the command line


def test_a_guided_search_without_an_ok_variant_fails_the_workflow_with_one_line(tmp_path):
    output = snakemake(
        sweep_workdir(
            tmp_path,
            constraints=["area <= 0.000001 mm2"],
            search={"population": 4, "generations": 1, "workers": 1},
        )
    )
    # the job's line (Snakemake may show the failed job's log too, which ends with the same line)
    lines = sorted(
        {line for line in output.splitlines() if line.startswith("error: hardware sweep ub:")}
    )
    assert len(lines) == 1 and "Traceback" not in output
    assert lines[0].startswith("error: hardware sweep ub: no variant is ok (")
    assert lines[0].endswith(
        "constraint 'area <= 0.000001 mm2' excludes the most: 2 of the 2 out rows; relax it"
    )
