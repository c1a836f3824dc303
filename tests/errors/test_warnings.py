"""Warnings a user must see once: a mapping entry no layer uses (single- and multi-core), grouped
per-layer warnings, and the warnings kept as the results' notes and in the step logs."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import REFERENCE_DATA, REPO
from support.bad_inputs import SMALL, TPU, TPU_MAPPING, warnings_of
from support.steps import gemm_experiment, run_steps
from zigzag.api import run
from zigzag.io.loaders import load_inputs
from zigzag.notes import collected_warnings, grouped_layer_warnings, held_warnings, warn_for_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.inputs import load_cn_graph_inputs

STREAM = REFERENCE_DATA / "stream" / "stream" / "inputs" / "examples"
QUAD = STREAM / "hardware" / "tpu_like_quad_core.yaml"
RESNET = STREAM / "workload" / "resnet18.onnx"


def with_entry(mapping: str | Path, name: str, folder: Path) -> str:
    """``mapping`` plus a copy of its first entry named ``name``."""
    entries = yaml.safe_load(Path(mapping).read_text())
    entries.append({**entries[0], "name": name})
    path = folder / f"with_{Path(mapping).name}"
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return str(path)


def entry_warnings(caplog) -> list[str]:
    return [m for m in warnings_of(caplog) if "mapping entry" in m]


def test_an_entry_naming_no_layer_warns_with_the_closest_layer_names(tmp_path, caplog):
    mapping = with_entry(TPU_MAPPING, "cnv_a", tmp_path)
    load_inputs(str(SMALL), TPU, mapping)
    assert (
        f"{mapping}: mapping entry 'cnv_a' names no layer and no operator type of the workload, so it is "
        "not used; closest layer names: 'conv_a', 'conv_d', 'conv_c'" in entry_warnings(caplog)
    )


def test_entries_naming_operator_types_do_not_warn(caplog):
    """The shipped mapping files name operator types (Add, Pooling, Gemm) a workload may not have."""
    load_inputs(
        str(REPO / "inputs/workload/resnet18.onnx"),
        str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"),
        str(REPO / "inputs/mapping/flow_tpu_32x32.yaml"),
    )
    load_cn_graph_inputs(
        QUAD, RESNET, STREAM / "mapping" / "tpu_like_quad_core.yaml"
    )  # has a 'Pool' entry
    assert entry_warnings(caplog) == []


def test_a_multi_core_entry_naming_no_layer_warns(tmp_path, caplog):
    mapping = with_entry(
        STREAM / "mapping" / "tpu_like_quad_core_resnet18_fixed_split.yaml", "/conv1/Cnv", tmp_path
    )
    load_cn_graph_inputs(QUAD, RESNET, mapping)
    assert entry_warnings(caplog) == [
        f"{mapping}: mapping entry '/conv1/Cnv' names no layer and no operator type of the workload, so it is not "
        "used; closest layer names: '/conv1/Conv'"
    ]


@pytest.mark.slow
def test_the_command_line_prints_the_warning_and_keeps_it_in_the_notes(tmp_path):
    mapping = with_entry(TPU_MAPPING, "cnv_a", tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            str(SMALL),
            "--accelerator",
            TPU,
            "--mapping",
            mapping,
            "--lpf-limit",
            "2",
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "mapping entry 'cnv_a' names no layer" in done.stderr
    notes = json.loads((tmp_path / "out" / "summary.json").read_text())["notes"]
    assert any("mapping entry 'cnv_a' names no layer" in note for note in notes)


def test_the_workflow_keeps_the_warning_in_the_results_notes_and_the_log(tmp_path):
    experiment = gemm_experiment("gemm", "gemm_l1")
    experiment["mapping"] = with_entry(experiment["mapping"], "gemm_layr", tmp_path)
    results = run_steps({"experiments": [experiment]}, tmp_path / "results")
    notes = json.loads((results / "gemm" / "summary.json").read_text())["notes"]
    assert [n for n in notes if "mapping entry" in n] == [
        f"{experiment['mapping']}: mapping entry 'gemm_layr' names no layer and no operator type of the workload, "
        "so it is not used; no layer has a similar name"
    ]
    log = tmp_path / "parse.log"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "step",
            "parse-workload",
            experiment["workload"],
            "--mapping",
            experiment["mapping"],
            "--output",
            str(tmp_path / "w.json"),
            "--log",
            str(log),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    assert f"warning: {notes[-1]}" in lines and lines[-1].endswith("1 layers")


def test_a_warning_of_several_layers_is_one_line_naming_them(tmp_path, caplog):
    mapping = yaml.safe_load(Path(TPU_MAPPING).read_text())
    mapping[0]["spatial_mapping"]["D2"] = ["G, 4"]  # no layer of the workload has G
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(mapping))
    run(str(SMALL), TPU, str(tmp_path / "m.yaml"), SearchOptions(lpf_limit=2), show_progress=False)
    removed = [m for m in warnings_of(caplog) if "spatial unrolling of G" in m]
    assert len(removed) == 1 and removed[0].startswith(
        "spatial unrolling of G on D2 removed: not a loop dim ("
    )
    assert "layers: conv_a, conv_b" in removed[0]


def test_grouped_warnings_count_repeats_and_name_a_few_layers(caplog):
    logger = logging.getLogger("zigzag.test")
    with grouped_layer_warnings():
        for index in range(10):
            warn_for_layer(logger, f"l{index}", "same problem")
            warn_for_layer(logger, f"l{index}", "same problem")
        warn_for_layer(logger, "lone", "other problem")
    assert warnings_of(caplog) == [
        "same problem (20 times, 10 layers: l0, l1, l2, l3, l4, l5, l6, l7 and 2 more)",
        "lone: other problem",
    ]


@pytest.mark.slow
def test_multi_core_warnings_name_the_layer(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "stream",
            "run",
            "--accelerator",
            str(QUAD),
            "--workload",
            str(RESNET),
            "--mapping",
            str(STREAM / "mapping" / "tpu_like_quad_core_resnet18_fixed_split.yaml"),
            "--mode",
            "lbl",
            "--cache",
            str(tmp_path / "cache"),
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings and not any(": layer:" in line or ": CN:" in line for line in warnings), (
        warnings
    )
    assert any(
        "spatial unrolling of C on D2 removed: not a loop dim (5 layers: /relu/Relu," in w
        for w in warnings
    )


def test_multi_core_results_keep_the_warning_in_their_notes(tmp_path):
    from zigzag.steps.multicore import resolve_multicore_experiments, run, split

    mapping = with_entry(
        STREAM / "mapping" / "tpu_like_quad_core_resnet18_fixed_split.yaml", "/conv1/Cnv", tmp_path
    )
    (exp,) = resolve_multicore_experiments(
        {
            "stream_experiments": [
                {
                    "name": "x",
                    "accelerator": str(QUAD),
                    "workload": str(RESNET),
                    "mapping": mapping,
                    "mode": "lbl",
                }
            ]
        }
    ).values()
    split(exp, tmp_path / "graph.npz")
    run(exp, tmp_path / "graph.npz", tmp_path / "cache", tmp_path / "run")
    notes = json.loads((tmp_path / "run" / "summary.json").read_text())["notes"]
    assert [n for n in notes if "mapping entry" in n] == [
        f"{mapping}: mapping entry '/conv1/Cnv' names no layer and no operator type of the workload, so it is not "
        "used; closest layer names: '/conv1/Conv'"
    ]


def test_held_warnings_leave_the_console_but_not_the_step_log(caplog):
    """caplog's handler stands for the console (a root handler); collected_warnings is the step log."""
    caplog.set_level(logging.WARNING)
    reader = logging.getLogger("zigzag.io.example")
    with collected_warnings() as log:
        with held_warnings(lambda name, line: "skipped" in line) as held:
            reader.warning("net.onnx: 1 node skipped")
            reader.warning("net.onnx: sizes differ")
        reader.warning("net.onnx: 2 nodes skipped")
    assert held == [("zigzag.io.example", "net.onnx: 1 node skipped")]
    assert warnings_of(caplog) == ["net.onnx: sizes differ", "net.onnx: 2 nodes skipped"]
    assert log == [
        "net.onnx: 1 node skipped",
        "net.onnx: sizes differ",
        "net.onnx: 2 nodes skipped",
    ]
