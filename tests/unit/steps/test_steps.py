"""The workflow's steps one by one: parse rules, layer searches in chunks, tables,
the stand-alone config file, and the example accelerators' names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import REPO, reference_input
from zigzag.errors import InputError
from support.steps import gemm_experiment, run_steps

SNAKEFILE = REPO / "Snakefile"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two accelerators x two options on one workload, through every step."""
    config = {
        "experiments": [
            gemm_experiment("l1_latency", "gemm_l1"),
            gemm_experiment("l1_l3_latency", "gemm_l1_l3"),
            gemm_experiment("l1_l3_energy", "gemm_l1_l3", opt="energy"),
        ]
    }
    return run_steps(config, tmp_path_factory.mktemp("steps") / "results")


def read_csv(path: Path):
    import pandas as pd

    return pd.read_csv(path)


# ---------------------------------------------------------------------------------------------
# parse rules and input ids
# ---------------------------------------------------------------------------------------------


def test_distinct_inputs_are_shared_between_experiments():
    from zigzag.steps.experiments import distinct_inputs, expand_experiments

    config = {
        "sweeps": [
            {
                "name": "{accelerator}-{opt}",
                "workload": "w.yaml",
                "mapping": "m.yaml",
                "accelerator": ["hw/a.yaml", "hw/b.yaml", "other/a.yaml"],
                "opt": ["energy", "latency"],
            }
        ]
    }
    config["sweeps"][0]["name"] = "{accelerator}-{opt}-{workload}"
    with pytest.raises(
        InputError, match="names two points 'a-energy-w': their accelerator differ"
    ):  # two accelerators with the same stem give the same names
        expand_experiments(config)
    config["sweeps"][0]["accelerator"] = ["hw/a.yaml", "hw/b.yaml"]
    workloads, accelerators = distinct_inputs(expand_experiments(config))
    assert len(workloads) == 1 and len(accelerators) == 2
    assert all(re.fullmatch(r"[ab]-[0-9a-f]{8}", key) for key in accelerators)
    (key,) = workloads
    assert key.startswith("w@m-") and workloads[key] == {
        "workload": "w.yaml",
        "mapping": "m.yaml",
        "evaluate_all_operators": False,
    }


def test_parsed_workload_round_trips_the_layers(tmp_path):
    from zigzag.io.loaders import load_workload
    from zigzag.steps.parse import parse_workload, parsed_layers, parsed_workload, read_parsed

    workload, mapping = (
        str(REPO / "inputs/workload/resnet18.onnx"),
        str(REPO / "inputs/mapping/flow_tpu_32x32.yaml"),
    )
    document = parse_workload(workload, mapping, tmp_path / "w.json")
    assert read_parsed(tmp_path / "w.json") == json.loads(json.dumps(document))
    original = load_workload(workload, mapping).layers
    again = parsed_layers(document)
    assert [layer.to_spec() for layer in again] == [layer.to_spec() for layer in original]
    assert [layer.id for layer in parsed_workload(document).layers] == [
        layer.id for layer in original
    ]
    assert document["workload"]["sha256"] and document["mapping"]["path"] == mapping


def _write_mapping_naming_a_missing_array_dimension(path: Path) -> None:
    """gemm_l1's mapping with its spatial unrolling on D4, an array dimension gemm_l1 lacks."""
    mapping = yaml.safe_load(Path(reference_input("mapping", "gemm_l1.yaml")).read_text())
    for entry in mapping:
        if entry.get("spatial_mapping"):
            entry["spatial_mapping"] = {
                "D4" if k == "D1" else k: v for k, v in entry["spatial_mapping"].items()
            }
    path.write_text(yaml.safe_dump(mapping))


def test_split_checks_the_mapping_against_the_accelerator(tmp_path):
    from zigzag.errors import InputError
    from zigzag.steps.experiments import expand_experiments
    from zigzag.steps.parse import parse_accelerator, parse_workload
    from zigzag.steps.pipeline import split_layers

    _write_mapping_naming_a_missing_array_dimension(tmp_path / "bad_mapping.yaml")
    experiment = expand_experiments(
        {
            "experiments": [
                {**gemm_experiment("x", "gemm_l1"), "mapping": str(tmp_path / "bad_mapping.yaml")}
            ]
        }
    )[0]
    parse_workload(
        experiment["workload"], experiment["mapping"], tmp_path / "w.json"
    )  # alone it is fine
    parse_accelerator(experiment["accelerator"], tmp_path / "a.json")
    with pytest.raises(
        InputError,
        match=r"bad_mapping\.yaml: .*spatial_mapping\.D4: accelerator 'gemm_l1' has no OA "
        r"dimension D4",
    ):
        split_layers(
            experiment,
            tmp_path / "w.json",
            tmp_path / "a.json",
            tmp_path / "cache",
            tmp_path / "plan.json",
        )
    assert not (tmp_path / "plan.json").exists() and not (tmp_path / "cache").exists()


# ---------------------------------------------------------------------------------------------
# the layer searches, in chunks
# ---------------------------------------------------------------------------------------------


def test_chunks_share_the_keys_round_robin():
    from zigzag.steps.chunks import chunk_keys, chunk_names, planned_chunks

    keys = list("abcdefg")
    assert chunk_names(3) == ["1of3", "2of3", "3of3"] and chunk_names(0) == []
    assert [chunk_keys(keys, name) for name in chunk_names(3)] == [
        ["a", "d", "g"],
        ["b", "e"],
        ["c", "f"],
    ]
    assert planned_chunks(0, {"ZIGZAG_FLOW_CORES": "4"}) == 0
    assert planned_chunks(20, {"ZIGZAG_FLOW_CORES": "4"}) == 3  # at least 8 keys a chunk
    assert planned_chunks(100, {"ZIGZAG_FLOW_CORES": "4"}) == 4
    assert planned_chunks(100, {}) == 1
    with pytest.raises(InputError, match="'3of2' is not a chunk; give it as <i>of<n>"):
        chunk_keys(keys, "3of2")


def test_a_chunk_searches_only_what_the_store_lacks_and_records_what_fits_nowhere(
    results, tmp_path
):
    from zigzag.io.sealed import read_step_file, write_sealed
    from zigzag.mapping_search.result_store import ResultStore
    from zigzag.steps.pipeline import evaluate_chunk, read_jobs

    cache, plan = results / ".cache", results / "l1_latency" / "plan.json"
    # planned before anything was stored: every layer; run again, it reads them all from the store
    again = evaluate_chunk(plan, cache, "1of1", tmp_path / "again.json")
    assert again["keys"] == read_step_file(plan)["to_compute"] and again["searched"] == []
    assert read_step_file(tmp_path / "again.json") == again
    # a layer no mapping fits: a failure record in the store, and the step succeeds
    job = next(iter(read_jobs(cache, "l1_latency").values()))
    for memory in job["accelerator"]["memories"].values():
        memory["size"] = 8
    other = tmp_path / "cache"
    write_sealed(other / "layer-jobs" / "l1_latency.json", {"jobs": {"tiny": job}})
    write_sealed(
        tmp_path / "plan.json", {**read_step_file(plan), "to_compute": ["tiny"], "chunks": 1}
    )
    done = evaluate_chunk(tmp_path / "plan.json", other, "1of1", tmp_path / "c.json")
    assert done == {"keys": ["tiny"], "searched": ["tiny"], "failed": ["tiny"]}
    record = ResultStore(other).read("tiny")["failed"]
    assert record["step"] == "evaluate" and "fits the memories" in record["reason"]


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------


def test_experiments_table(results):
    table = read_csv(results / "experiments.csv")
    assert list(table.columns[:6]) == [
        "experiment",
        "workload",
        "accelerator",
        "mapping",
        "opt",
        "layers",
    ]
    assert list(table["experiment"]) == ["l1_latency", "l1_l3_latency", "l1_l3_energy"]
    assert set(table["workload"]) == {"gemm_layer"}
    assert list(table["accelerator"]) == ["gemm_l1", "gemm_l1_l3", "gemm_l1_l3"]
    assert list(table["opt"]) == ["latency", "latency", "energy"]
    for column in (
        "energy_pJ",
        "latency_cycles",
        "edp_pJ_cycles",
        "area_um2",
        "workload_file",
        "lpf_limit",
    ):
        assert column in table.columns, column
    assert (
        abs(table["edp_pJ_cycles"] / (table["energy_pJ"] * table["latency_cycles"]) - 1) < 1e-9
    ).all()
    memory_columns = [
        c
        for c in table.columns
        if c.endswith("_energy_pJ") and c not in ("mac_energy_pJ", "memory_energy_pJ")
    ]
    assert set(memory_columns) == {"reg_O_energy_pJ", "l1_energy_pJ", "l3_energy_pJ"}
    per_memory = table[memory_columns].fillna(0).sum(axis=1)
    assert (abs(per_memory - table["memory_energy_pJ"]) <= 1e-9 * table["memory_energy_pJ"]).all()
    assert table["l3_energy_pJ"].isna().tolist() == [True, False, False]  # gemm_l1 has no l3
    summary = json.loads((results / "l1_latency" / "summary.json").read_text())
    assert summary["energy"] == pytest.approx(table["energy_pJ"][0], rel=1e-9)


def test_layer_tables(results):
    layers = read_csv(results / "l1_l3_latency" / "layers.csv")
    assert list(layers.columns[:4]) == ["id", "name", "operator_type", "energy_pJ"]
    assert "area" in layers.columns and not layers["area"].isna().any()
    memory = layers[["reg_O_energy_pJ", "l1_energy_pJ", "l3_energy_pJ"]].sum(axis=1)
    assert (abs(memory - layers["memory_energy_pJ"]) <= 1e-9 * layers["memory_energy_pJ"]).all()
    combined = read_csv(results / "layers.csv")
    assert list(combined.columns[:5]) == ["experiment", "workload", "accelerator", "mapping", "opt"]
    assert len(combined) == 3 * len(layers)
    mine = combined[combined["experiment"] == "l1_l3_latency"].reset_index(drop=True)
    assert list(mine["energy_pJ"]) == list(layers["energy_pJ"])


def test_the_api_writes_the_workflows_layer_table(results, tmp_path):
    """One layers.csv: ``zigzag run`` and the API write the table the workflow's save step writes,
    column for column and number for number, and the same summary figures."""
    from zigzag.api import run
    from zigzag.io.run_files import save_network_outputs
    from zigzag.mapping_search.options import SearchOptions

    experiment = gemm_experiment("l1_l3_latency", "gemm_l1_l3")
    network = run(
        experiment["workload"],
        experiment["accelerator"],
        experiment["mapping"],
        SearchOptions(lpf_limit=experiment["lpf_limit"], opt="latency"),
        show_progress=False,
    )
    save_network_outputs(network, tmp_path)
    folder = results / "l1_l3_latency"
    assert (tmp_path / "layers.csv").read_text() == (folder / "layers.csv").read_text()
    mine, theirs = (json.loads((f / "summary.json").read_text()) for f in (tmp_path, folder))
    assert {k: mine[k] for k in ("energy", "latency", "layers")} == {
        k: theirs[k] for k in ("energy", "latency", "layers")
    }


def test_long_memory_table(results):
    long = read_csv(results / "memory_levels.csv")
    assert {
        "experiment",
        "layer",
        "operand",
        "memory_operand",
        "level",
        "memory",
        "energy_pJ",
        "rd_out_to_low_words",
        "wr_in_by_high_words",
        "utilization",
    } <= set(long.columns)
    layers = read_csv(results / "layers.csv")
    sums = long.groupby(["experiment", "layer"])["energy_pJ"].sum()
    for row in layers.itertuples():
        assert sums[(row.experiment, row.name)] == pytest.approx(row.memory_energy_pJ, rel=1e-9)
    one = long[(long["experiment"] == "l1_l3_latency") & (long["operand"] == "O")]
    assert list(one["memory"]) == ["reg_O", "l1", "l3"] and list(one["level"]) == [0, 1, 2]
    assert set(long["memory_operand"]) <= {"O", "I1", "I2"}
    assert (
        set(long["cost_source"]) == {"file"} and (long["r_cost_pJ"] >= 0).all()
    )  # the files give every cost
    # pandas users pivot it straight away
    pivot = long.pivot_table(
        index="experiment", columns="memory", values="energy_pJ", aggfunc="sum"
    )
    experiments = read_csv(results / "experiments.csv").set_index("experiment")
    assert pivot.loc["l1_l3_energy", "l3"] == pytest.approx(
        experiments.loc["l1_l3_energy", "l3_energy_pJ"]
    )


def test_table_html_views(results):
    html = (results / "experiments.html").read_text()
    assert html.count("<tr>") == 1 + 3 and "<th>edp_pJ_cycles</th>" in html
    layer_html = (results / "l1_latency" / "layers.html").read_text()
    assert "<td>Layer0</td>" in layer_html and '<td class="n">' in layer_html


# ---------------------------------------------------------------------------------------------
# the config file stands on its own; the example accelerators' names
# ---------------------------------------------------------------------------------------------


def dry_run(workdir: Path, *args: str) -> str:
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(SNAKEFILE),
        "--directory",
        str(workdir),
        "-n",
        *args,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout + completed.stderr


def planned(output: str) -> set[str]:
    return set(re.findall(r"results/([^/\s]+)/plan\.json", output))


@pytest.mark.slow
def test_configfile_replaces_the_default_config(tmp_path):
    (tmp_path / "inputs").mkdir()
    for kind, name in (
        ("workload", "gemm_layer.yaml"),
        ("hardware", "gemm_l1.yaml"),
        ("mapping", "gemm_l1.yaml"),
    ):
        (tmp_path / "inputs" / f"{kind}_{name}").write_text(
            Path(reference_input(kind, name)).read_text()
        )
    experiment = {
        "workload": "inputs/workload_gemm_layer.yaml",
        "accelerator": "inputs/hardware_gemm_l1.yaml",
        "mapping": "inputs/mapping_gemm_l1.yaml",
    }
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({"experiments": [{"name": f"default_{i}", **experiment} for i in range(3)]})
    )
    (tmp_path / "mine.yaml").write_text(
        yaml.safe_dump({"experiments": [{"name": "mine", **experiment}]})
    )
    assert planned(dry_run(tmp_path)) == {"default_0", "default_1", "default_2"}
    assert planned(dry_run(tmp_path, "--configfile", str(tmp_path / "mine.yaml"))) == {"mine"}
    # --config alone still adds to the default config
    assert planned(dry_run(tmp_path, "--config", "results=elsewhere")) == set()
    assert re.findall(
        r"elsewhere/(default_\d)/plan\.json", dry_run(tmp_path, "--config", "results=elsewhere")
    )


def test_example_accelerators_are_not_named_like_the_references():
    # aimc / dimc are ZigZag's own IMC examples, shipped unchanged on purpose (inputs/README.md)
    ours = sorted(
        p for p in (REPO / "inputs" / "hardware").rglob("*.yaml") if p.stem not in ("aimc", "dimc")
    )
    reference = {
        p.stem
        for p in (REPO / "tests" / "data" / "reference" / "zigzag" / "hardware").glob("*.yaml")
    }
    assert len(ours) == 9 and reference
    for path in ours:
        name = yaml.safe_load(path.read_text())["name"]
        assert name == path.stem and name.startswith("flow_"), path
        assert name not in reference and not name.endswith("_like")
        mapping = REPO / "inputs" / "mapping" / f"{name}.yaml"
        assert (
            mapping.exists()
            or (REPO / "inputs" / "mapping" / f"{name.rsplit('_', 1)[0]}.yaml").exists()
        )
    default = yaml.safe_load((REPO / "config.yaml").read_text())
    default.pop(
        "multicore_experiments", None
    )  # multi-core examples are Stream's own files, under Stream's names
    config = yaml.safe_dump(default) + (REPO / "config" / "sweep_large.yaml").read_text()
    assert "_like" not in config


# ---------------------------------------------------------------------------------------------
# failure records and named parameters
# ---------------------------------------------------------------------------------------------


def test_split_with_record_failure_writes_a_record_passed_on_to_the_row(tmp_path):
    from zigzag.cli import main
    from zigzag.steps.experiments import expand_experiments, write_experiment_spec
    from zigzag.steps.parse import parse_accelerator, parse_workload
    from zigzag.io.tables import read_csv as read_rows

    _write_mapping_naming_a_missing_array_dimension(tmp_path / "bad_mapping.yaml")
    experiment = expand_experiments(
        {
            "experiments": [
                {
                    **gemm_experiment("x", "gemm_l1"),
                    "mapping": str(tmp_path / "bad_mapping.yaml"),
                    "parameters": {"array": "32x32"},
                }
            ]
        }
    )[0]
    assert experiment["parameters"] == {"array": "32x32"}
    spec = write_experiment_spec(tmp_path, experiment)
    parse_workload(experiment["workload"], experiment["mapping"], tmp_path / "w.json")
    parse_accelerator(experiment["accelerator"], tmp_path / "a.json")
    plan, cache = tmp_path / "plan.json", tmp_path / "cache"
    assert (
        main(
            [
                "step",
                "split",
                "--experiment",
                spec,
                "--workload",
                str(tmp_path / "w.json"),
                "--accelerator",
                str(tmp_path / "a.json"),
                "--cache",
                str(cache),
                "--output",
                str(plan),
                "--record-failure",
            ]
        )
        == 0
    )
    assert json.loads(plan.read_text())["failed"]["step"] == "split_layers"
    assert (
        main(
            [
                "step",
                "sum",
                str(plan),
                "--cache",
                str(cache),
                "--output",
                str(tmp_path / "results.json"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "step",
                "save",
                str(tmp_path / "results.json"),
                "--cache",
                str(cache),
                "--output",
                str(tmp_path / "x"),
            ]
        )
        == 0
    )
    (row,) = read_rows(tmp_path / "x" / "summary.csv")
    assert row["status"] == "failed" and row["array"] == "32x32"
    assert row["reason"].startswith("split_layers: ") and "has no OA dimension D4" in row["reason"]
    assert main(["step", "check-experiments", str(tmp_path / "x" / "summary.csv")]) == 1


def test_named_parameters_are_checked_and_follow_sweep_patterns():
    from zigzag.errors import InputError
    from zigzag.steps.experiments import expand_experiments

    sweep = {
        "workload": "w.yaml",
        "accelerator": ["a/small.yaml", "a/big.yaml"],
        "mapping": "m.yaml",
        "name": "{accelerator}",
        "parameters": {"array": "{accelerator}", "bits": 8},
    }
    experiments = expand_experiments({"sweeps": [sweep]})
    assert [e["parameters"] for e in experiments] == [
        {"array": "small", "bits": 8},
        {"array": "big", "bits": 8},
    ]
    with pytest.raises(
        InputError,
        match=r"experiments\[0\]\.parameters\.lpf_limit: is a column of experiments\.csv",
    ):
        expand_experiments(
            {"experiments": [{**gemm_experiment("x", "gemm_l1"), "parameters": {"lpf_limit": 1}}]}
        )
