"""The experiment specs the steps read: frozen, read once, and their JSON form unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from support import REPO
from support.steps import gemm_experiment
from zigzag.errors import InputError
from zigzag.steps.experiments import expand_experiments, experiment_spec_text
from zigzag.steps.multicore import resolve_multicore_experiments
from zigzag.steps.specs import ExperimentSpec, MulticoreSpec, read_experiment, read_multicore


def _single() -> list[dict]:
    return expand_experiments(
        {
            "experiments": [
                gemm_experiment("plain", "gemm_l1"),
                {**gemm_experiment("named", "gemm_l1_l3", opt="energy"), "parameters": {"kib": 64}},
            ]
        }
    )


def test_a_single_core_spec_file_reads_into_a_frozen_spec_and_back_unchanged(tmp_path):
    for experiment in _single():
        path = tmp_path / f"{experiment['name']}.json"
        path.write_text(experiment_spec_text(experiment))
        spec = read_experiment(path)
        assert experiment_spec_text(spec.to_dict()) == path.read_text()
        assert spec.name == experiment["name"] and spec.options.lpf_limit == 3
        with pytest.raises(dataclasses.FrozenInstanceError):
            spec.name = "other"
        with pytest.raises(TypeError):
            spec.parameters["kib"] = 1
    named = ExperimentSpec.of(_single()[1])
    assert named.parameters == {"kib": 64} and named.options.opt == "energy"
    assert named.workload_options["evaluate_all_operators"] is False


def test_a_multicore_spec_file_reads_into_a_frozen_spec(tmp_path):
    config = {
        "multicore_experiments": [
            {
                "name": "quad",
                "accelerator": str(REPO / "inputs/stream/hardware/tpu_like_quad_core.yaml"),
                "workload": str(REPO / "inputs/stream/workload/resnet18.onnx"),
                "prefetch": ["W"],
                "clock_ns": 2,
            }
        ]
    }
    experiment = resolve_multicore_experiments(config)["quad"]
    path = tmp_path / "quad.json"
    path.write_text(experiment_spec_text(experiment))
    spec = read_multicore(path)
    assert spec == MulticoreSpec.of(experiment)
    assert (spec.mapping, spec.prefetch, spec.clock_ghz) == (None, ("W",), 0.5)
    assert spec.search["method"] == "co"  # the automatic mapping: constraint optimisation
    with pytest.raises(TypeError):
        spec.search["method"] = "ga"


def test_a_missing_or_damaged_spec_file_is_one_line(tmp_path):
    with pytest.raises(InputError, match="experiment file not found"):
        read_experiment(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match=r"bad.json: line 1: not valid JSON"):
        read_multicore(tmp_path / "bad.json")
