"""Multi-core hardware sweeps (``kind: multicore``): a variant equals the same accelerator written
as files, mappings follow the core count, variants that cannot run are rows, the allocation
search, the shared cost cache, and the config, CLI, API and workflow interfaces.

The base is the shipped mesh with a pooling core and no SIMD core (its scheduling does not need
the SIMD links of the mesh shorthand)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import REPO
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.multicore.pipeline import run_stream
from zigzag.sweep import read_sweep, run_sweep, variants_of
from zigzag.sweep.multicore import variant_accelerator, with_integer_core_ids
from zigzag.variants import Variant
from zigzag.multicore.roles import core_roles, follow_cores

BASE = REPO / "inputs" / "stream" / "hardware" / "tpu_like_mesh_pooling.yaml"
MAPPING = REPO / "inputs" / "stream" / "mapping" / "mesh_all_cores.yaml"
WORKLOAD = REPO / "inputs" / "stream" / "workload" / "small_3conv.onnx"
MESH = {"rows": "mesh.rows", "cols": "mesh.cols"}


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def sweep(**changes) -> dict:
    return {
        "kind": "multicore",
        "base": str(BASE),
        "params": dict(MESH),
        "workloads": [str(WORKLOAD)],
        "mapping": str(MAPPING),
        **changes,
    }


@pytest.mark.slow
def test_variants_equal_the_same_accelerators_written_as_files(tmp_path):
    rows = run_sweep(
        sweep(
            zip=[{"rows": [1, 2], "cols": [2, 2]}],
            vary={"bandwidth": [16, 64]},
            modes=["lbl", "fused"],
        ),
        tmp_path / "out",
        cache=tmp_path / "cache",
    )
    assert [r["status"] for r in rows] == ["ok"] * 8
    assert rows[0]["cns"] < rows[2]["cns"]  # lbl on 2 and on 4 mesh cores: one group per core
    for row in rows:
        folder = tmp_path / "out" / "variants"
        result = run_stream(
            folder / f"{row['variant']}.yaml",
            WORKLOAD,
            folder / f"{row['variant']}.mapping.yaml",
            row["mode"],
            cache=tmp_path / "cache",
        )
        assert (row["latency_cycles"], row["energy_pJ"]) == (float(result.latency), result.energy)
    written = yaml.safe_load(
        (tmp_path / "out" / "variants" / f"{rows[2]['variant']}.yaml").read_text()
    )
    assert written["mesh"]["rows"] == 2 and written["bandwidth"] == 16
    mapping = yaml.safe_load(
        (tmp_path / "out" / "variants" / f"{rows[2]['variant']}.mapping.yaml").read_text()
    )
    assert mapping[1]["core_allocation"] == [0, 1, 2, 3] and mapping[1]["inter_core_tiling"] == [
        "K, 4"
    ]


@pytest.mark.slow
def test_a_mesh_with_a_simd_core_written_as_files(tmp_path):
    base = REPO / "inputs" / "stream" / "hardware" / "tpu_like_mesh_2x2.yaml"
    rows = run_sweep(
        sweep(base=str(base), params={}, vary={"bandwidth": [16, 64]}, modes=["lbl", "fused"]),
        tmp_path / "out",
        cache=tmp_path / "cache",
    )
    assert [r["status"] for r in rows] == ["ok"] * 4
    for row in rows:
        folder = tmp_path / "out" / "variants"
        result = run_stream(
            folder / f"{row['variant']}.yaml",
            WORKLOAD,
            folder / f"{row['variant']}.mapping.yaml",
            row["mode"],
            cache=tmp_path / "cache",
        )
        assert (row["latency_cycles"], row["energy_pJ"]) == (float(result.latency), result.energy)


@pytest.mark.slow
def test_a_core_file_field_is_a_path_and_mixes_of_core_types(tmp_path):
    spec = sweep(
        params={"dram_bw": "offchip_core.memories.dram.r_bw"},
        vary={"dram_bw": [64, 128]},
        derive={"offchip_core.memories.dram.w_bw": "dram_bw"},
    )
    rows = run_sweep(spec, tmp_path / "out", cache=tmp_path / "cache")
    assert [r["status"] for r in rows] == ["ok", "ok"] and rows[1]["latency_cycles"] <= rows[0][
        "latency_cycles"
    ]
    mixed = {
        "mesh": {
            "rows": 1,
            "cols": 3,
            "core": ["tpu_like.yaml", "eyeriss_like.yaml"],
            "pooling_core": "p.yaml",
        }
    }
    roles = core_roles(mixed)
    assert (
        roles["tpu_like"] == (0, 2) and roles["eyeriss_like"] == (1,) and roles["pooling"] == (3,)
    )
    rows = run_sweep(
        sweep(
            vary={"mesh.core": ["tpu_like.yaml", ["tpu_like.yaml", "eyeriss_like.yaml"]]},
            name_format="{base}-{mesh_core}",
        ),
        tmp_path / "mix",
        cache=tmp_path / "cache",
    )
    assert [r["status"] for r in rows] == ["ok", "ok"] and rows[0]["energy_pJ"] != rows[1][
        "energy_pJ"
    ]


def test_explicit_cores_are_varied_by_id():
    quad = REPO / "inputs" / "stream" / "hardware" / "tpu_like_quad_core.yaml"
    spec = read_sweep(
        {
            "name": "q",
            **sweep(
                base=str(quad), params={}, vary={"cores.1": ["tpu_like.yaml", "eyeriss_like.yaml"]}
            ),
        }
    )
    variants = variants_of(spec)
    assert [v.problem for v in variants] == [None, None] and variants[0].id != variants[1].id
    as_json = json.loads(json.dumps(variants[1].document))  # as a workflow job reads it
    roles = core_roles(with_integer_core_ids(as_json))
    assert (
        roles["eyeriss_like"] == (1,)
        and roles["tpu_like"] == (0, 2, 3)
        and roles["compute"] == tuple(range(6))
    )
    accelerator = variant_accelerator(
        spec, Variant(variants[1].name, variants[1].id, {}, {}, as_json)
    )
    assert [core.name for core in accelerator.cores[:3]] == ["tpu_like", "eyeriss_like", "tpu_like"]


def test_mapping_roles_and_expressions_follow_the_core_count():
    document = {
        "mesh": {"rows": 2, "cols": 3, "core": "tpu_like.yaml", "pooling_core": "pooling.yaml"}
    }
    entries = [
        {"name": "Conv", "core_allocation": "mesh", "inter_core_tiling": ["K", "n_cores"]},
        {
            "name": "Pool",
            "core_allocation": ["pooling"],
            "inter_core_tiling": ["K, rows * cols // 2"],
        },
    ]
    followed = follow_cores(entries, document)
    assert followed[0]["core_allocation"] == [0, 1, 2, 3, 4, 5] and followed[0][
        "inter_core_tiling"
    ] == ["K, 6"]
    assert followed[1]["core_allocation"] == [6] and followed[1]["inter_core_tiling"] == ["K, 3"]
    with pytest.raises(InputError, match="'simd' is not a core role"):
        follow_cores([{"name": "Add", "core_allocation": ["simd"]}], document)
    with pytest.raises(InputError, match="'simd' is not a core role"):
        follow_cores([{"name": "Add", "core_allocation": "simd[1]"}], document)


def test_one_core_of_a_role_is_counted_round_its_cores():
    document = {
        "mesh": {"rows": 1, "cols": 3, "core": "tpu_like.yaml", "pooling_core": "pooling.yaml"}
    }
    entries = [
        {"name": f"L{i}", "core_allocation": f"mesh[{i}]", "core_allocation_is_fixed": True}
        for i in range(5)
    ]
    entries.append({"name": "Pool", "core_allocation": ["pooling[7]", "mesh[4]"]})
    followed = follow_cores(entries, document)
    assert [e["core_allocation"] for e in followed[:5]] == [[0], [1], [2], [0], [1]]
    assert followed[5]["core_allocation"] == [3, 1]


@pytest.mark.slow
def test_variants_that_cannot_run_are_rows_and_the_rest_goes_on(tmp_path):
    spec = sweep(
        fragments={"pooling": {"with": {}, "without": {"remove": ["mesh.pooling_core"]}}},
        vary={"offchip_core.memories.dram.r_bw": [64, 128]},
    )
    rows = run_sweep(spec, tmp_path / "out", cache=tmp_path / "cache")
    status = {r["variant"]: (r["status"], r["reason"]) for r in rows}
    assert status["tpu_like_mesh-with-r_bw64"] == ("ok", "")
    assert (
        status["tpu_like_mesh-with-r_bw128"][0] == "invalid"
        and "w_bw" in status["tpu_like_mesh-with-r_bw128"][1]
    )
    assert status["tpu_like_mesh-without-r_bw64"][0] == "infeasible"
    assert "'pooling' is not a core role" in status["tpu_like_mesh-without-r_bw64"][1]
    assert all("\n" not in reason for _, reason in status.values())
    table = read_rows(tmp_path / "out" / "variants.csv")
    assert [r["status"] for r in table] == [r["status"] for r in rows]


def test_allocation_search_when_the_mapping_leaves_choices(tmp_path):
    mapping = yaml.safe_load(MAPPING.read_text())
    for entry in mapping:
        entry["core_allocation_is_fixed"] = False
        entry["inter_core_tiling"] = ["K, 1"] if entry["name"] != "default" else ["H, 1"]
    path = tmp_path / "flexible.yaml"
    path.write_text(yaml.safe_dump(mapping))
    spec = sweep(
        mapping=str(path), allocation_search={"individuals": 4, "generations": 2, "seed": 3}
    )
    first = run_sweep(spec, tmp_path / "a", cache=tmp_path / "cache")
    again = run_sweep(spec, tmp_path / "b", cache=tmp_path / "cache")
    assert first[0]["status"] == "ok" and first[0]["allocation"] == "searched"
    assert first[0]["search_schedules"] >= 4
    assert [(r["latency_cycles"], r["energy_pJ"]) for r in first] == [
        (r["latency_cycles"], r["energy_pJ"]) for r in again
    ]


@pytest.mark.slow
def test_cost_entries_are_shared_between_variants(tmp_path):
    cache = tmp_path / "cache"
    run_sweep(sweep(vary={"bandwidth": [16]}), tmp_path / "a", cache=cache)
    entries = set((cache / "multicore-cost").rglob("*.json"))
    rows = run_sweep(
        sweep(vary={"bandwidth": [16, 64, 128], "unit_energy_cost": [0, 1]}),
        tmp_path / "b",
        cache=cache,
    )
    assert [r["status"] for r in rows] == ["ok"] * 6
    assert (
        set((cache / "multicore-cost").rglob("*.json")) == entries
    )  # the links changed, no CN cost did


@pytest.mark.parametrize(
    "changes, where, message",
    [
        ({"lpf_limit": 6}, "lpf_limit", "single-core option"),
        ({"modes": ["both"]}, "modes", "is not a list of lbl and fused"),
        (
            {"allocation_search": {"individuals": 1}},
            "allocation_search.individuals",
            "less than the minimum of 2",
        ),
        ({"layer_stacks": ""}, "layer_stacks", "give stacks"),
        ({"vary": {"mesh.colls": [1]}}, "vary.mesh.colls", "did you mean 'mesh.cols'"),
    ],
)
def test_config_errors_are_one_line(changes, where, message):
    with pytest.raises(InputError) as error:
        read_sweep({"name": "s", **sweep(**changes)}, "config")
    assert (
        error.value.where == where and message in str(error.value) and "\n" not in str(error.value)
    )


def test_multicore_keys_in_a_single_core_sweep():
    with pytest.raises(InputError, match="add 'kind: multicore'"):
        read_sweep(
            {
                "name": "s",
                "base": "inputs/hardware/flow_tpu_32x32.yaml",
                "modes": ["lbl"],
                "workloads": ["w.onnx"],
                "mapping": "m.yaml",
            }
        )


@pytest.mark.slow
def test_cli_multicore_sweep(tmp_path, capsys):
    status = main(
        [
            "sweep",
            "--multicore",
            "--base",
            str(BASE),
            "--vary",
            "mesh.cols=[1,2]",
            "--workload",
            str(WORKLOAD),
            "--mapping",
            str(MAPPING),
            "--mode",
            "lbl",
            "--mode",
            "fused",
            "--clock-ghz",
            "1",
            "--output",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "cache"),
        ]
    )
    assert status == 0
    output = capsys.readouterr().out
    assert "tpu_like_mesh-cols1" in output and "4 rows (4 ok)" in output
    rows = read_rows(tmp_path / "out" / "variants.csv")
    assert [r["mode"] for r in rows] == ["lbl", "fused", "lbl", "fused"]
    for column in (
        "latency_cycles",
        "latency_s",
        "energy_pJ",
        "cn_onchip_energy_pJ",
        "area_mm2",
        "edp_Js",
        "util_mesh_r0c0",
        "utilization",
        "compute_utilization",
        "dram_traffic_bits",
        "pareto",
    ):
        assert rows[0][column] != "", column
    assert (
        rows[0]["util_mesh_r0c1"] == "" and rows[2]["util_mesh_r0c1"] != ""
    )  # one column, then two
    assert [r["compute_cores"] for r in rows] == ["2", "2", "4", "4"]
    assert all(r["utilization"] == r["compute_utilization"] for r in rows)
    assert (tmp_path / "out" / "plots" / "vs_mesh.cols.png").exists()
    best = read_rows(tmp_path / "out" / "best.csv")
    assert {(r["mode"], r["objective"]) for r in best} >= {("lbl", "latency"), ("fused", "energy")}


def test_cli_rejects_single_core_flags_for_multicore(tmp_path, capsys):
    status = main(
        [
            "sweep",
            "--multicore",
            "--base",
            str(BASE),
            "--vary",
            "mesh.cols=[1]",
            "--workload",
            str(WORKLOAD),
            "--mapping",
            str(MAPPING),
            "--lpf-limit",
            "4",
            "--output",
            str(tmp_path),
        ]
    )
    assert status == 2 and "single-core search option" in capsys.readouterr().err


@pytest.mark.slow
def test_workflow_multicore_sweep(tmp_path):
    inputs = tmp_path / "inputs"
    shutil.copytree(REPO / "inputs" / "stream" / "hardware" / "cores", inputs / "cores")
    for source in (BASE, MAPPING, WORKLOAD):
        shutil.copy(source, inputs / source.name)
    entry = {
        "name": "mesh",
        "kind": "multicore",
        "base": f"inputs/{BASE.name}",
        "params": MESH,
        "vary": {"cols": [1, 2]},
        "workloads": [f"inputs/{WORKLOAD.name}"],
        "mapping": f"inputs/{MAPPING.name}",
        "modes": ["lbl"],
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"hardware_sweeps": [entry]}))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--cores",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    output = completed.stdout + completed.stderr
    assert len(re.findall(r"^\s*(?:local)?rule sweep_batch:", output, re.MULTILINE)) == 2
    rows = read_rows(tmp_path / "results" / "hardware_sweeps" / "mesh" / "variants.csv")
    assert [(r["variant"], r["status"]) for r in rows] == [
        ("tpu_like_mesh-cols1", "ok"),
        ("tpu_like_mesh-cols2", "ok"),
    ]
    api = run_sweep(
        {**entry, "base": str(BASE), "workloads": [str(WORKLOAD)], "mapping": str(MAPPING)},
        tmp_path / "api",
        cache=tmp_path / "cache",
    )
    assert [float(r["latency_cycles"]) for r in rows] == [r["latency_cycles"] for r in api]


def test_cli_runs_a_multicore_entry_of_a_config(tmp_path, capsys):
    entry = {"name": "mesh", **sweep(vary={"mesh.cols": [1]})}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"defaults": {"lpf_limit": 6}, "hardware_sweeps": [entry]}))
    status = main(
        [
            "sweep",
            "--config",
            str(config),
            "--output",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "cache"),
        ]
    )
    assert status == 0 and "1 rows (1 ok)" in capsys.readouterr().out


def test_the_round_robin_mapping_gives_each_layer_one_core():
    document = {
        "mesh": {"rows": 1, "cols": 3, "core": "tpu_like.yaml", "pooling_core": "pooling.yaml"}
    }
    entries = follow_cores(
        yaml.safe_load(MAPPING.with_name("mesh_resnet18_round_robin.yaml").read_text()), document
    )
    assert all(len(e["core_allocation"]) == 1 and e["core_allocation_is_fixed"] for e in entries)
    convs = [e["core_allocation"][0] for e in entries if e["name"].endswith(("/Conv", "/Gemm"))]
    assert convs[:7] == [0, 1, 2, 0, 1, 2, 0] and len(convs) == 21
    assert {e["core_allocation"][0] for e in entries if "Pool" in e["name"]} == {3}
