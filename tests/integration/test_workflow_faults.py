"""The workflow under faults (issue 48): damaged cache entries and intermediate files, a results
folder on a read-only disk, two runs in one folder, a run killed and resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support.faults import damage
from support.workflow import SNAKEFILE, jobs, small_workflow_folder, snakemake, stored, summary
from zigzag.io.sealed import is_sound
from zigzag.steps.pipeline import sum_experiment

pytestmark = pytest.mark.slow

NAMES = ("on_a", "on_b", "on_a_again")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The small config and its inputs (support.workflow.small_workflow_folder), not yet run."""
    return small_workflow_folder(tmp_path)


def test_damaged_cache_entries_are_recomputed_never_used(workdir):
    snakemake(workdir)
    before = {name: summary(workdir, name) for name in NAMES}
    results = sorted((workdir / "results" / ".cache" / "results").glob("*.json"))
    damaged = dict(zip(("truncated", "empty", "garbage", "altered"), results))
    for how, path in damaged.items():
        damage(path, how)
    damage(workdir / "results" / "on_b" / "plan.json", "truncated")
    output = snakemake(workdir)
    for path in [*damaged.values(), workdir / "results" / "on_b" / "plan.json"]:
        lines = [line for line in output.splitlines() if str(path.relative_to(workdir)) in line]
        assert any(line.startswith("warning:") and "damaged" in line for line in lines), output
    assert "Traceback" not in output
    assert not any(path.exists() for path in damaged.values())  # removed, never used
    assert {name: summary(workdir, name) for name in NAMES} == before
    # a step that needs them again gets them computed again, exactly those (on_b's split runs
    # again: its chunk searches on_b's; the sums search the others)
    start = time.time_ns()
    output = snakemake(workdir, "--forcerun", "sum")
    assert stored(workdir, start) == len(damaged) and jobs(output, "split_layers") == 1
    assert all(is_sound(path, path.stem) for path in damaged.values())
    assert {name: summary(workdir, name) for name in NAMES} == before


def test_the_sum_step_recomputes_a_damaged_entry_it_reads(workdir):
    snakemake(workdir)
    cache = workdir / "results" / ".cache"
    plan = workdir / "results" / "on_a" / "plan.json"
    expected = json.loads((workdir / "results" / "on_a" / "results.json").read_text())["total"]
    key = json.loads(plan.read_text())["layers"][0]["key"]
    damage(cache / "results" / f"{key}.json", "altered")  # valid JSON, one energy x 1000
    total = sum_experiment(plan, cache, workdir / "results.json")
    assert total == expected
    assert json.loads((cache / "results" / f"{key}.json").read_text())["result"]["energy_total"] < (
        1000 * 0.5 * expected["energy"]
    )


def test_results_on_a_read_only_disk_is_one_line(workdir, read_only_folder):
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["results"] = str(read_only_folder / "results")
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    output = snakemake(workdir, check=False)
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot write in" in errors[0], output
    assert "Traceback" not in output and len(output.splitlines()) <= 3, output


def _start(workdir: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--directory", str(workdir)]
    return subprocess.Popen(
        [*command, "--cores", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_a_second_run_is_refused_and_unlock_is_advised_only_when_none_is_alive(workdir):
    # enough work for the first run to still hold the folder while a second one starts (its
    # layer searches run in a few chunk jobs: the three experiments alone can end too soon)
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["experiments"] += [
        {**experiment, "name": f"{experiment['name']}_{opt}", "opt": opt}
        for experiment in config["experiments"]
        for opt in ("energy", "EDP")
    ]
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    first = _start(workdir)
    try:
        locks = workdir / ".snakemake" / "locks"
        deadline = time.time() + 300
        while not (locks.is_dir() and any(locks.glob("*.lock"))) and first.poll() is None:
            assert time.time() < deadline, "the first run never locked the folder"
            time.sleep(0.2)
        assert first.poll() is None, "the first run finished before a second one could start"
        output = snakemake(workdir, check=False)
        assert f"another Snakemake run (process {first.pid})" in output, output
        assert "It can be removed with the --unlock" not in output  # Snakemake's advice
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # a hard kill: the lock stays
        first.wait()
    output = snakemake(workdir, check=False)
    if re.search(r"cannot be locked", output):  # the lock left behind, and no run alive
        assert "--unlock" in output and "removes it safely" in output
    snakemake(workdir, "--unlock")
    snakemake(workdir)
    assert all(summary(workdir, name)["energy"] > 0 for name in NAMES)
