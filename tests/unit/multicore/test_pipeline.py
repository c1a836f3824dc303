"""The multi-core pipeline: prepare -> allocate -> schedule -> write_run, the same for every entry
point (a fixed run, a genetic search, a constraint optimisation), and the feature's names."""

from __future__ import annotations

import json

import pytest

from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.multicore.pipeline import (
    ConstraintOptimisation,
    FixedAllocation,
    GeneticSearch,
    MulticoreRun,
    allocate,
    prepare,
    run_multicore,
    schedule,
    write_run,
)
from zigzag.steps.multicore import resolve_multicore_experiments
from support import TESTS

SMALL = TESTS / "data" / "reference" / "stream" / "small"
DUAL = SMALL / "dual_testing_core_offchip_v2.yaml"
NET = SMALL / "small_3conv.onnx"
FLEXIBLE = TESTS / "data" / "co" / "inputs" / "mapping_flexible.yaml"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("multicore-cost-cache")


def fused(mapping, allocation=None) -> MulticoreRun:
    allocation = FixedAllocation() if allocation is None else allocation
    return MulticoreRun(DUAL, NET, mapping, "fused", allocation, layer_stacks=[(0, 1, 2)])


def test_the_three_steps_are_what_run_multicore_does(cache, tmp_path):
    run = fused(SMALL / "mapping_plain.yaml")
    prepared = prepare(run, cache=cache)
    found = allocate(prepared, run)
    done = schedule(prepared, found, run, cache=cache)
    assert found is None and done.run == run
    files = write_run(tmp_path / "steps", done, notes=[])
    again = run_multicore(run, cache=cache, output=tmp_path / "one-call", notes=[])
    assert (again.schedule.latency, again.schedule.energy) == (
        done.schedule.latency,
        done.schedule.energy,
    )
    assert set(files) == {"summary.json", "schedule.csv"}
    for name in ("summary.json", "schedule.csv"):
        assert (tmp_path / "steps" / name).read_text() == (tmp_path / "one-call" / name).read_text()


@pytest.mark.parametrize(
    "allocation, written",
    [
        (GeneticSearch(individuals=4, generations=1), {"front.csv", "allocation.yaml"}),
        (ConstraintOptimisation(time_limit=30), {"allocation.yaml", "co_slots.csv"}),
    ],
)
def test_one_writer_for_every_allocation_and_its_mapping_reruns_to_its_figures(
    allocation, written, cache, tmp_path
):
    done = run_multicore(
        fused(FLEXIBLE, allocation), cache=cache, output=tmp_path / "run", notes=[]
    )
    files = {p.name for p in (tmp_path / "run").iterdir() if p.is_file()}
    assert written | {"summary.json", "schedule.csv", "schedule_trace.json"} <= files
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["search"] and isinstance(summary["notes"], list)
    assert (summary["latency"], summary["energy"]) == (done.schedule.latency, done.schedule.energy)
    rerun = run_multicore(fused(tmp_path / "run" / "allocation.yaml"), cache=cache)
    assert (rerun.schedule.latency, rerun.schedule.energy) == (
        done.schedule.latency,
        done.schedule.energy,
    )


def test_a_fixed_run_of_a_flexible_mapping_is_a_one_line_error(cache):
    with pytest.raises(InputError, match="core_allocation: some layers may go to several cores"):
        prepare(fused(FLEXIBLE), cache=cache)


def test_the_config_key_and_its_alias(tmp_path):
    entry = {
        "name": "small",
        "accelerator": str(DUAL),
        "workload": str(NET),
        "mapping": str(FLEXIBLE),
        "mode": "fused",
        "search": {"method": "co"},
    }
    new = resolve_multicore_experiments({"multicore_experiments": [entry]})
    old = resolve_multicore_experiments({"stream_experiments": [entry]})
    assert new == old and new["small"]["search"]["time_limit"] == 600
    with pytest.raises(InputError, match="under multicore_experiments only"):
        resolve_multicore_experiments({"multicore_experiments": [entry], "stream_experiments": []})
    with pytest.raises(InputError, match=r"stream_experiments\[0\]\.mode"):
        resolve_multicore_experiments({"stream_experiments": [entry | {"mode": "stacked"}]})


def test_the_command_and_its_alias_write_the_same_folder(cache, tmp_path, capsys):
    args = ["run", "--accelerator", str(DUAL), "--workload", str(NET), "--mode", "lbl"]
    args += ["--mapping", str(SMALL / "mapping_plain.yaml"), "--cache", str(cache)]
    assert main(["multicore", *args, "--output", str(tmp_path / "new")]) == 0
    assert main(["stream", *args, "--output", str(tmp_path / "old")]) == 0
    capsys.readouterr()
    assert (tmp_path / "new" / "schedule.csv").read_text() == (
        tmp_path / "old" / "schedule.csv"
    ).read_text()
    new, old = (json.loads((tmp_path / f / "summary.json").read_text()) for f in ("new", "old"))
    new.pop("notes"), old.pop("notes")  # the first run also notes the cost entries it computed
    assert new == old and new["latency"] > 0
