"""Workload fields as sweep axes (``workload_vary``): context length and batch beside a hardware
parameter, in the grid, the guided search and the workflow's files; the per-token columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from support import REPO
from support.llm_steps import block_workload
from zigzag.errors import InputError
from zigzag.sweep import read_sweep, run_sweep, search_sweep
from zigzag.sweep.workflow import settings, sweep_from_settings
from zigzag.tokens.workloads import llm_document

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"


@pytest.fixture
def llm_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.llm.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "llm": {
                    "model": str(REPO / "tests" / "data" / "llm" / "llama_tiny.config.json"),
                    "phase": "decode",
                    "context": 64,
                    "batch": 1,
                }
            }
        )
    )
    return path


@pytest.fixture
def generated(monkeypatch):
    """The sweep's loader with the workload generator replaced by tests/llm_steps.py's block:
    what the sweep asks for (the document it builds) is recorded."""
    asked = []

    def load(workload, changes, entries, options):
        document = llm_document(workload, changes)
        asked.append(document["llm"])
        section = document["llm"]
        step = block_workload(entries, batch=section["batch"], context=section["context"])
        step.inference = {
            "model": "tiny",
            "phase": "decode",
            "batch": section["batch"],
            "tokens": 1,
            "context": section["context"],
            "layers": 1,
        }
        return step

    monkeypatch.setattr("zigzag.sweep.point.load_point_workload", load)
    return asked


def _sweep(llm_file, **more):
    return {
        "base": str(BASE),
        "vary": {"memories.unified_buffer.size": ["512KiB", "3MiB"]},
        "workloads": [str(llm_file)],
        "mapping": str(MAPPING),
        "clock_ghz": 1.0,
        "lpf_limit": 4,
        "workload_vary": {"context": [64, 512], "batch": [1, 4]},
        **more,
    }


@pytest.mark.slow
def test_every_variant_runs_every_workload_point(tmp_path, llm_file, generated):
    rows = run_sweep(_sweep(llm_file), tmp_path / "out")
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}
    assert [(r["context"], r["batch"]) for r in rows[:4]] == [(64, 1), (64, 4), (512, 1), (512, 4)]
    assert [a["context"] for a in generated[:4]] == [64, 64, 512, 512]
    for row in rows:
        assert (
            row["workload"] == "tiny"
            and row["workload_point"] == f"context={row['context']} batch={row['batch']}"
        )
        assert row["tpot_s"] == pytest.approx(row["latency_cycles"] * 1e-9)
        assert row["tokens_per_s"] == pytest.approx(row["batch"] / row["tpot_s"])
        assert row["energy_per_token_J"] == pytest.approx(row["energy_pJ"] * 1e-12 / row["batch"])
        assert row["kv_cache_bytes"] == 64 * row["batch"] * (row["context"] + 1)
        assert row["dram_bound_ratio"] >= 1
    # a longer context costs more time per token on every variant
    by_point = {(r["variant"], r["context"], r["batch"]): r["tpot_s"] for r in rows}
    for variant in {r["variant"] for r in rows}:
        assert by_point[(variant, 512, 1)] > by_point[(variant, 64, 1)]
    # fronts are per workload point: every point has its own
    fronts = {r["workload_point"] for r in rows if r["pareto"]}
    assert len(fronts) == 4
    for name in (
        "tokens_vs_context",
        "tokens_vs_batch",
        "tpot_s_memories.unified_buffer.size_x_context",
    ):
        assert (tmp_path / "out" / "plots" / f"{name}.png").stat().st_size > 0


@pytest.mark.slow
def test_the_guided_search_sums_over_the_workload_points(tmp_path, llm_file, generated):
    result = search_sweep(
        _sweep(llm_file, search={"population": 4, "generations": 1, "workers": 1}),
        tmp_path / "search",
    )
    assert len(result.rows) == 4 * result.evaluations
    for front_row in result.front:
        rows = [r for r in result.rows if r["variant"] == front_row["variant"]]
        assert front_row["latency_cycles"] == sum(r["latency_cycles"] for r in rows)


def test_the_workflow_files_keep_the_workload_axes(llm_file):
    sweep = read_sweep({"name": "s", **_sweep(llm_file)})
    again = sweep_from_settings(json.loads(json.dumps(settings(sweep))))
    assert again.workload_axes == (("context", (64, 512)), ("batch", (1, 4)))


@pytest.mark.parametrize(
    "vary, where",
    [
        ({"seq_len": [1]}, "workload_vary.seq_len"),
        ({"context": 4096}, "workload_vary.context"),
        ({"precision.bias": [4]}, "workload_vary.precision.bias"),
        # bad values are refused before any variant runs, naming the axis (issue 45)
        ({"context": [64, 4096]}, "workload_vary.context"),
        ({"logits": ["last", "first"]}, "workload_vary.logits"),
        ({"precision": [8, 0]}, "workload_vary.precision"),
        ({"batch": [0]}, "workload_vary.batch"),
    ],
)
def test_bad_workload_axes_are_one_line(llm_file, vary, where):
    with pytest.raises(InputError) as error:
        read_sweep({"name": "s", **_sweep(llm_file), "workload_vary": vary})
    assert error.value.where == where and "\n" not in str(error.value)


def test_workload_axes_need_a_generated_workload(llm_file):
    onnx = str(REPO / "inputs" / "workload" / "resnet18.onnx")
    with pytest.raises(InputError, match="workloads\\[1\\].*model configuration"):
        read_sweep({"name": "s", **_sweep(llm_file), "workloads": [str(llm_file), onnx]})


def test_an_llm_document_with_changes(tmp_path):
    (tmp_path / "cfg.json").write_text("{}")
    path = tmp_path / "m.llm.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "llm": {
                    "model": "cfg.json",
                    "phase": "decode",
                    "context": 8,
                    "precision": {"weights": 8, "activations": 8, "kv_cache": 8},
                }
            }
        )
    )
    document = llm_document(path, {"context": 4096, "precision.weights": 4})
    assert document["llm"]["model"] == str(tmp_path / "cfg.json")
    assert document["llm"]["context"] == 4096
    assert document["llm"]["precision"] == {"weights": 4, "activations": 8, "kv_cache": 8}
    assert llm_document(path, {"precision": 16})["llm"]["precision"] == {
        "weights": 16,
        "activations": 16,
        "kv_cache": 16,
    }
    with pytest.raises(InputError, match="llm"):
        llm_document(REPO / "tests" / "data" / "workflow" / "small_convs.yaml", {"context": 1})


def test_the_command_line_varies_the_workload(llm_file):
    from zigzag.cli import build_parser
    from zigzag.sweep.flags import sweep_from_args

    args = build_parser().parse_args(
        [
            "sweep",
            "--base",
            str(BASE),
            "--workload",
            str(llm_file),
            "--mapping",
            str(MAPPING),
            "--workload-vary",
            "context=[1024,2047]",
            "--workload-vary",
            "precision.weights=[4,8]",
        ]
    )
    section = sweep_from_args(args)
    assert section["workload_vary"] == {"context": [1024, 2047], "precision.weights": [4, 8]}
    assert read_sweep(section).workload_axes == (
        ("context", (1024, 2047)),
        ("precision.weights", (4, 8)),
    )


@pytest.mark.slow
def test_a_generated_model_swept_over_context(tmp_path):
    """End to end, with the configuration generator: a TinyLlama-shaped decode step (tests/data/llm),
    its context varied beside the DRAM's bandwidth on the TPU-like example with its vector unit."""
    path = tmp_path / "tiny.llm.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "llm": {
                    "model": str(REPO / "tests" / "data" / "llm" / "llama_tiny.config.json"),
                    "phase": "decode",
                    "context": 16,
                    "batch": 1,
                    "layers": 1,
                }
            }
        )
    )
    rows = run_sweep(
        {
            "base": str(REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"),
            "vary": {"memories.dram.ports[0].bandwidth_max": [64, 256]},
            "workloads": [str(path)],
            "mapping": str(MAPPING),
            "clock_ghz": 1.0,
            "lpf_limit": 4,
            "workload_vary": {"context": [16, 256]},
        },
        tmp_path / "out",
    )
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}
    for row in rows:
        # one block: K and V of 4 kv heads of 64, 8-bit, for every token in the cache
        assert row["kv_cache_bytes_per_token"] == 2 * 4 * 64
        assert row["kv_cache_bytes"] == 512 * row["batch"] * (row["context"] + 1)
        assert row["dram_bound_ratio"] >= 1
    tpot = {(r["variant"], r["context"]): r["tpot_s"] for r in rows}
    for (variant, context), seconds in tpot.items():
        if context == 16:
            assert tpot[variant, 256] > seconds  # a longer context reads more cache
    assert (tmp_path / "out" / "plots" / "tokens_vs_context.png").exists()
