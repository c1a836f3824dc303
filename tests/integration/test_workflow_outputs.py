"""The workflow's manners: every file a job writes is one Snakemake knows (an output, a log or a
benchmark of some job) but the content-addressed result stores, and layers stored by one
experiment are not searched again for another, so adding or removing experiments reruns nothing
that is done."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from support import DATA, REPO, reference_input
from support.workflow import jobs, snakemake, stored, write_yaml

pytestmark = pytest.mark.slow

STREAM_SMALL = DATA / "reference" / "stream" / "small"
CORES = REPO / "inputs" / "stream" / "hardware" / "cores"


def _single_core_inputs(root: Path) -> dict:
    inputs = root / "inputs"
    inputs.mkdir()
    shutil.copy(reference_input("hardware", "tpu_like.yaml"), inputs / "tpu.yaml")
    shutil.copy(reference_input("mapping", "tpu_like.yaml"), inputs / "mapping.yaml")
    shutil.copy(DATA / "workflow" / "small_convs.yaml", inputs / "small.yaml")
    return {
        "workload": "inputs/small.yaml",
        "accelerator": "inputs/tpu.yaml",
        "mapping": "inputs/mapping.yaml",
    }


def _multi_core_inputs(root: Path) -> dict:
    """Two TPU-like cores, the 3-conv network, conv1 on either core (its allocation searched)."""
    (root / "hw" / "cores").mkdir(parents=True)
    for name, source in (
        ("core_a.yaml", "tpu_like.yaml"),
        ("core_b.yaml", "tpu_like.yaml"),
        ("offchip.yaml", "offchip.yaml"),
    ):
        shutil.copy(CORES / source, root / "hw" / "cores" / name)
    write_yaml(
        root / "hw" / "dual.yaml",
        {
            "name": "dual",
            "cores": {0: "core_a.yaml", 1: "core_b.yaml"},
            "offchip_core": "offchip.yaml",
            "bandwidth": 64,
            "unit_energy_cost": 0,
            "core_connectivity": ["0, 1"],
        },
    )
    shutil.copy(STREAM_SMALL / "small_3conv.onnx", root / "net.onnx")
    write_yaml(
        root / "flexible.yaml",
        [
            {"name": "default", "core_allocation": [0], "core_allocation_is_fixed": True},
            {"name": "/conv1/Conv", "core_allocation": [0, 1]},
        ],
    )
    return {"accelerator": "hw/dual.yaml", "workload": "net.onnx", "mapping": "flexible.yaml"}


def declared_files(workdir: Path) -> tuple[set[str], list[str]]:
    """Every output and log file of the workflow's jobs (``snakemake --summary``, which also
    lists the jobs the checkpoints added), and the declared folders among them."""
    output = snakemake(workdir, "--summary")
    files = set()
    for line in output.splitlines():
        columns = line.split("\t")
        if len(columns) >= 5 and columns[0] != "output_file":
            files.add(columns[0])
            files.update(log for log in columns[3].split(",") if log and log != "-")
    return files, [path for path in files if (workdir / path).is_dir()]


def undeclared(workdir: Path) -> list[str]:
    """The files under results/ that no job declares (benchmarks aside: every rule's benchmark
    is results/.cache/benchmarks/<rule>/..., not listed by --summary)."""
    files, folders = declared_files(workdir)
    found = []
    for path in sorted((workdir / "results").rglob("*")):
        name = path.relative_to(workdir).as_posix()
        if (
            path.is_dir()
            or name in files
            or any(name.startswith(f"{folder}/") for folder in folders)
        ):
            continue
        if not name.startswith("results/.cache/benchmarks/"):
            found.append(name)
    return found


def test_every_file_a_job_writes_is_declared(tmp_path):
    single, multi = _single_core_inputs(tmp_path), _multi_core_inputs(tmp_path)
    write_yaml(
        tmp_path / "config.yaml",
        {
            "experiments": [{"name": "one", **single}],
            "stream_experiments": [
                {
                    "name": "net",
                    "mode": "lbl",
                    **multi,
                    "search": {"individuals": 4, "generations": 2, "seed": 1},
                }
            ],
            "hardware_sweeps": [
                {
                    "name": "ub",
                    "base": single["accelerator"],
                    "workloads": [single["workload"]],
                    "mapping": single["mapping"],
                    "vary": {"memories.sram_2MB.size": [8388608]},
                }
            ],
        },
    )
    output = snakemake(tmp_path)
    assert jobs(output, "evaluate_layers") >= 1 and jobs(output, "multicore_costs") >= 1
    assert jobs(output, "plotly_script") == 3  # one per report folder: results, stream, the sweep's
    left = undeclared(tmp_path)
    # the exceptions: the result stores (layer results, multi-core cost entries) and their locks,
    # content-addressed and shared by every experiment, sweep and run; their keys are known only
    # inside the jobs that search them (a chunk of a plan, a sweep's batch), and a file is written
    # once, by the first job needing it, so it cannot be one job's output. No job file is left
    # outside the graph: an experiment's jobs are its split's output, a cost plan holds its own.
    allowed = (
        "results/.cache/results/",
        "results/.cache/locks/",
        "results/.cache/multicore-cost/entries/",
        # a sweep's allocation tables, shared by its batch jobs by the allocation problem, the
        # same way (zigzag/mapping_search/batched/allocation_store.py)
        "results/.cache/allocations/",
        # the record of the sealed files found sound, kept by the Snakefile's load and at the end
        # of a successful run (zigzag/steps/integrity.py), never by a job
        "results/.cache/status/sound_files.json",
    )
    assert left and [name for name in left if not name.startswith(allowed)] == []
    assert "Nothing to be done" in snakemake(tmp_path, "-n")


def test_an_experiment_with_stored_layers_searches_nothing(tmp_path):
    single = _single_core_inputs(tmp_path)
    write_yaml(tmp_path / "config.yaml", {"experiments": [{"name": "first", **single}]})
    output = snakemake(tmp_path)
    assert stored(tmp_path) == 3 and jobs(output, "evaluate_layers") == 1
    # a second experiment with the same layers: its plan has nothing to search; nothing reruns
    write_yaml(
        tmp_path / "config.yaml",
        {"experiments": [{"name": "first", **single}, {"name": "second", **single}]},
    )
    start = time.time_ns()
    output = snakemake(tmp_path)
    assert jobs(output, "split_layers") == 1 and jobs(output, "evaluate_layers") == 0
    assert stored(tmp_path, start) == 0
    # the first experiment is gone from the config: the second keeps its results, nothing reruns
    write_yaml(tmp_path / "config.yaml", {"experiments": [{"name": "second", **single}]})
    output = snakemake(tmp_path)
    assert jobs(output, "evaluate_layers") == 0 and jobs(output, "sum") == 0
