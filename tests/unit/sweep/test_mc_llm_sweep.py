"""Multi-core LLM steps in sweeps and tables: per-token columns (cycles, and seconds with a clock
from the sweep, the command line, the workflow or the accelerator file), the front over time per
token, energy per token and area, the example sweep config, and the decode sweep on a
Llama-3-8B-shaped step (tests/data/stream_llm/llama3_8b_decode_2layers.onnx, written by
benchmarks/llama_onnx.py with --layers 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from support import REPO
from zigzag.errors import InputError
from zigzag.io.yaml_files import load_yaml
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.summaries import multicore_rows, summarize_run
from zigzag.multicore.pipeline import run_stream
from zigzag.sweep import read_sweep, run_sweep, variants_of
from zigzag.sweep.tables import front

HARDWARE = REPO / "inputs" / "stream" / "hardware"
BASE = HARDWARE / "tpu_like_mesh_llm.yaml"
MAPPING = REPO / "inputs" / "stream" / "mapping" / "llm_mesh_roles.yaml"
GPT2 = REPO / "tests" / "data" / "stream_llm" / "gpt2_decode.onnx"
LLAMA = REPO / "tests" / "data" / "stream_llm" / "llama3_8b_decode_2layers.onnx"
CONFIG = REPO / "config" / "sweep_mc_llm.yaml"
SWEEP = {
    "kind": "multicore",
    "base": str(BASE),
    "mapping": str(MAPPING),
    "modes": ["lbl"],
    "params": {
        "rows": "mesh.rows",
        "cols": "mesh.cols",
        "dram_bw": "offchip_core.memories.dram.w_bw",
        "sram": "mesh.core.memories.sram.size",
    },
    "derive": {"offchip_core.memories.dram.r_bw": "dram_bw"},
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mc-llm-cache")


@pytest.mark.slow
def test_sweep_rows_carry_per_token_figures_and_their_front(tmp_path, cache):
    """GPT-2 decode (one token) on meshes of the LLM base: the time per output token is the step in
    cycles, and in seconds from the clock the accelerator file declares (1 GHz; the sweep gives
    none); energy per token is the step's energy; the front is taken over those and area."""
    rows = run_sweep(
        {
            **SWEEP,
            "zip": [{"rows": [1, 2], "cols": [2, 2]}],
            "vary": {"dram_bw": [64], "sram": ["1MiB", "4MiB"]},
            "workloads": [str(GPT2)],
        },
        tmp_path / "sweep",
        cache=cache,
    )
    assert [r["status"] for r in rows] == ["ok"] * 4
    for row in rows:
        assert (row["phase"], row["batch"], row["tokens"], row["context"]) == ("decode", 1, 1, 127)
        assert row["tpot_cycles"] == row["latency_cycles"] and row["ttft_cycles"] is None
        assert row["clock_ghz"] == 1 and row["tpot_s"] == pytest.approx(
            row["latency_cycles"] * 1e-9
        )
        assert row["tokens_per_s"] == pytest.approx(1 / row["tpot_s"])
        assert row["energy_per_token_pJ"] == pytest.approx(row["energy_pJ"])
        assert 0.9 < row["dram_link_busy_share"] <= 1  # GPT-2's decode streams its weights
    on_front = sorted(front(rows, ("tpot_cycles", "energy_per_token_pJ", "area_mm2")))
    assert [i for i, r in enumerate(rows) if r["pareto"]] == on_front
    assert on_front == sorted(
        front(rows, ("latency_cycles", "energy_pJ", "area_mm2"))
    )  # one token: same front
    assert 0 < len(on_front) <= 4 and all(rows[i]["area_mm2"] > 0 for i in range(4))
    written = (tmp_path / "sweep" / "variants.csv").read_text().splitlines()[0].split(",")
    assert {
        "tpot_cycles",
        "tpot_s",
        "tokens_per_s",
        "energy_per_token_pJ",
        "dram_link_busy_share",
    } <= set(written)


@pytest.mark.slow
def test_a_sweep_clock_overrides_the_file_and_a_prefill_has_a_time_to_first_token(tmp_path, cache):
    prefill = REPO / "tests" / "data" / "stream_llm" / "gpt2_prefill_mask.onnx"
    rows = run_sweep(
        {**SWEEP, "vary": {"dram_bw": [64]}, "clock_ghz": 2, "workloads": [str(prefill)]},
        tmp_path / "sweep",
        cache=cache,
    )
    (row,) = rows
    assert row["status"] == "ok" and row["phase"] == "prefill" and row["tpot_cycles"] is None
    assert row["ttft_cycles"] == row["latency_cycles"] and row["ttft_s"] == pytest.approx(
        row["latency_cycles"] / 2e9
    )
    assert row["tokens_per_s"] == pytest.approx(row["batch"] * row["tokens"] / row["ttft_s"])
    assert row["energy_per_token_pJ"] == pytest.approx(
        row["energy_pJ"] / (row["batch"] * row["tokens"])
    )


def test_the_example_config_is_a_valid_sweep_of_eighteen_variants():
    section = load_yaml(CONFIG)["hardware_sweeps"][0]
    sweep = read_sweep(section, str(CONFIG))
    variants = variants_of(sweep)
    assert len(variants) == 18 and all(v.problem is None for v in variants)
    assert {(v.parameters["rows"], v.parameters["cols"]) for v in variants} == {
        (2, 2),
        (2, 4),
        (4, 4),
    }
    assert all(
        v.document["offchip_core"]["memories"]["dram"]["r_cost"]
        == 1000 * v.parameters["dram_bw"] / 64
        for v in variants
    )


@pytest.mark.parametrize(
    "mesh, message",
    [
        ({"rows": 0}, "mesh.rows"),
        ({"cols": "two"}, "mesh.cols"),
    ],
)
def test_a_bad_mesh_in_a_sweep_is_an_invalid_row_with_a_one_line_reason(
    mesh, message, tmp_path, cache
):
    name, value = next(iter(mesh.items()))
    rows = run_sweep(
        {**SWEEP, "vary": {f"mesh.{name}": [value]}, "workloads": [str(GPT2)]},
        tmp_path / "s",
        cache=cache,
    )
    assert (
        rows[0]["status"] == "invalid"
        and message in rows[0]["reason"]
        and "\n" not in rows[0]["reason"]
    )


@pytest.mark.slow
def test_the_cli_and_the_accelerator_file_give_the_clock(tmp_path, cache):
    """``zigzag stream run --clock-ghz`` turns the per-token figures into seconds; without it, the
    accelerator file's ``clock_ghz``; a bad clock is a one-line error (flag and file)."""
    command = [
        sys.executable,
        "-m",
        "zigzag",
        "stream",
        "run",
        "--accelerator",
        str(BASE),
        "--workload",
        str(GPT2),
        "--mapping",
        str(MAPPING),
        "--mode",
        "lbl",
        "--cache",
        str(cache),
    ]
    done = subprocess.run(
        [*command, "--output", str(tmp_path / "a"), "--clock-ghz", "0.5"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "at 0.5 GHz" in done.stdout and "tokens/s" in done.stdout
    tokens = json.loads((tmp_path / "a" / "summary.json").read_text())["per_token"]
    assert tokens["clock_ghz"] == 0.5 and tokens["tpot_s"] == pytest.approx(
        tokens["tpot_cycles"] / 0.5e9
    )
    result = run_stream(BASE, GPT2, MAPPING, "lbl", cache=cache, output=tmp_path / "b")
    tokens = json.loads((tmp_path / "b" / "summary.json").read_text())["per_token"]
    assert tokens["clock_ghz"] == 1 and tokens["tpot_s"] == pytest.approx(result.latency * 1e-9)
    done = subprocess.run(
        [*command, "--output", str(tmp_path / "c"), "--clock-ghz", "-1"],
        capture_output=True,
        text=True,
    )
    assert (
        done.returncode != 0
        and done.stderr.strip().count("\n") == 0
        and "--clock-ghz" in done.stderr
    )
    document = yaml.safe_load(BASE.read_text()) | {"clock_ghz": 0}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(document))
    for name in ("tpu_like_llm.yaml", "simd_vector.yaml", "offchip_1tbit.yaml"):
        (tmp_path / name).write_text((HARDWARE / "cores" / name).read_text())
    with pytest.raises(InputError, match="clock_ghz: must be a positive frequency"):
        load_multicore_accelerator(bad)


def test_the_results_table_carries_the_per_token_columns(tmp_path, cache):
    """The workflow's multi-core table (``summarize_run`` of a run folder): time per output token in
    cycles and, with the experiment's clock, in seconds; energy per token; the DRAM link's share."""
    quad = HARDWARE / "tpu_like_quad_core.yaml"
    mapping = REPO / "inputs" / "stream" / "mapping" / "llm_quad_core.yaml"
    run_stream(quad, GPT2, mapping, "lbl", cache=cache, output=tmp_path / "run", clock_ghz=2.0)
    summary = summarize_run(
        tmp_path / "run", quad, workload=GPT2, mapping=mapping, mode="lbl", clock_ghz=2.0
    )
    (row,) = multicore_rows([summary])
    assert row["tpot_cycles"] == row["latency_cycles"] and row["tpot_s"] == pytest.approx(
        row["latency_s"]
    )
    assert row["tokens_per_s"] == pytest.approx(2e9 / row["latency_cycles"])
    assert (
        row["energy_per_token_pJ"] == pytest.approx(row["energy_pJ"])
        and row["dram_link_busy_share"] > 0.9
    )
    plain = summarize_run(tmp_path / "run", quad, workload=GPT2, mapping=mapping, mode="lbl")
    assert multicore_rows([plain])[0]["latency_s"] is None  # cycles unless a clock is given


@pytest.mark.slow
def test_the_llama_decode_sweep_on_two_blocks(tmp_path, cache):
    """Two Llama-3-8B blocks at 4,096 cached tokens: a wider DRAM link shortens the step by about its
    width ratio while the link is the bound (busy all the step), at the same energy per bit."""
    section = dict(load_yaml(CONFIG)["hardware_sweeps"][0])
    section.update(
        zip=[{"rows": [2], "cols": [2]}],
        vary={"dram_bw": [64, 256], "sram": ["1MiB"]},
        workloads=[str(LLAMA)],
    )
    rows = run_sweep(section, tmp_path / "sweep", cache=cache)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    narrow, wide = rows
    assert all(r["dram_link_busy_share"] > 0.95 and r["context"] == 4096 for r in rows)
    assert 3.5 < narrow["tpot_cycles"] / wide["tpot_cycles"] < 4.1
    assert wide["energy_per_token_pJ"] == pytest.approx(narrow["energy_per_token_pJ"], rel=0.02)
    assert wide["pareto"] and wide["tpot_s"] == pytest.approx(wide["tpot_cycles"] * 1e-9)


def test_the_workflow_schedule_step_writes_per_token_seconds(tmp_path, cache):
    """The workflow's steps (split, then schedule with the cached costs) write ``per_token`` into the
    run's summary.json, in seconds with the experiment's clock; the table reads it from there."""
    from zigzag.steps.multicore import resolve_multicore_experiments, run, split

    quad = HARDWARE / "tpu_like_quad_core.yaml"
    mapping = REPO / "inputs" / "stream" / "mapping" / "llm_quad_core.yaml"
    config = {
        "stream_experiments": [
            {
                "name": "gpt2",
                "accelerator": str(quad),
                "workload": str(GPT2),
                "mapping": str(mapping),
                "mode": "lbl",
                "clock_ghz": 0.5,
            }
        ]
    }
    exp = resolve_multicore_experiments(config)["gpt2"]
    split(exp, tmp_path / "graph.npz")
    run(exp, tmp_path / "graph.npz", cache, tmp_path / "run")
    tokens = json.loads((tmp_path / "run" / "summary.json").read_text())["per_token"]
    assert tokens["clock_ghz"] == 0.5 and tokens["tpot_s"] == pytest.approx(
        tokens["tpot_cycles"] / 0.5e9
    )
    (row,) = multicore_rows(
        [summarize_run(tmp_path / "run", quad, workload=GPT2, mode="lbl", clock_ghz=0.5)]
    )
    assert row["tpot_s"] == pytest.approx(row["latency_s"]) and row[
        "tokens_per_s"
    ] == pytest.approx(0.5e9 / row["tpot_cycles"])


@pytest.mark.parametrize("method", ["ga", "co"])
def test_an_allocation_search_writes_and_prints_the_per_token_figures(
    method, tmp_path, cache, capsys
):
    """``zigzag stream search`` (genetic or constraint optimisation) gives the chosen allocation's
    per-token figures as ``zigzag stream run`` does, in seconds with --clock-ghz."""
    from zigzag.cli import main

    flexible = tmp_path / "flexible.yaml"
    flexible.write_text(
        "- name: default\n  core_allocation: [0, 1, 2, 3]\n  inter_core_tiling: [K, 1]\n"
    )
    budget = (
        ["--individuals", "4", "--generations", "1"] if method == "ga" else ["--time-limit", "10"]
    )
    assert (
        main(
            [
                "stream",
                "search",
                "--method",
                method,
                *budget,
                "--accelerator",
                str(HARDWARE / "tpu_like_quad_core.yaml"),
                "--workload",
                str(GPT2),
                "--mapping",
                str(flexible),
                "--mode",
                "lbl",
                "--quiet",
                "--cache",
                str(cache),
                "--output",
                str(tmp_path / "out"),
                "--clock-ghz",
                "2",
            ]
        )
        == 0
    )
    assert "time per output token" in capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    tokens = summary["per_token"]
    assert tokens["tpot_cycles"] == summary["latency"] and tokens["tpot_s"] == pytest.approx(
        summary["latency"] / 2e9
    )
