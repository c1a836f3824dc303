"""The SLURM profile (profiles/slurm) parses and submits the layer jobs in batches.

No SLURM needed: the default config's experiments are split into layer jobs locally, then a dry
run through the profile shows how the jobs would be submitted. (tools/slurm_local.sh runs the
profile on a real one-node SLURM; it needs root and daemons, so it is not part of the tests.)
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import REPO
from support.workflow import run_snakemake
from zigzag.steps.experiments import expand_experiments

pytestmark = pytest.mark.slow

if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
    pytest.skip(
        "the SLURM executor plugin is not installed (pip install -e '.[cluster]')",
        allow_module_level=True,
    )

PROFILE = REPO / "profiles" / "slurm"


def snakemake(workdir: Path, *args: str) -> str:
    completed = run_snakemake(workdir, *args, cores=None, timeout=600)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-4000:]
    return output


def profile_groups() -> dict[str, list[str]]:
    """The profile's groups: name -> the rules in it."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    groups: dict[str, list[str]] = {}
    for entry in profile["groups"]:
        rule, group = entry.split("=")
        groups.setdefault(group, []).append(rule)
    return groups


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> str:
    """The dry run of the default config through the profile, its experiments already split."""
    workdir = tmp_path_factory.mktemp("slurm_profile")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    (workdir / "inputs").symlink_to(REPO / "inputs")
    names = [experiment["name"] for experiment in expand_experiments(config)]
    results = config.get("results", "results")
    # Split every experiment into its chunks of layers (locally): only then are they in the DAG.
    snakemake(workdir, "--cores", "2", *(f"{results}/{name}/plan.json" for name in names))
    return snakemake(workdir, "--profile", str(PROFILE), "--dry-run")


def test_profile_groups_the_layer_jobs_with_their_sum():
    ((group, rules),) = profile_groups().items()
    assert "evaluate_layers" in rules and len(rules) == 2, rules


def test_each_experiment_is_one_batch_of_its_layer_jobs_and_their_sum(dry_run):
    ((group, rules),) = profile_groups().items()
    layer_rule = "evaluate_layers"
    (sum_rule,) = set(rules) - {layer_rule}
    blocks = re.split(
        rf"^.*Group job {group} \(jobs in lexicogr\. order\):$", dry_run, flags=re.MULTILINE
    )
    # the block after the last batch also holds the ungrouped jobs: none of them may be a layer job
    batches = [
        re.findall(
            rf"^    rule ({layer_rule}|{sum_rule}):\n\s+input: .*\n\s+output: ([^,\n]*)",
            block,
            re.MULTILINE,
        )
        for block in blocks[1:]
    ]
    ungrouped = re.findall(rf"^rule ({layer_rule}|{sum_rule}):$", dry_run, re.MULTILINE)
    counts = {
        rule: re.search(rf"^{rule}\s+(\d+)$", dry_run, re.MULTILINE)
        for rule in (layer_rule, sum_rule)
    }
    assert all(counts.values()), f"the profile groups rules the workflow does not run: {counts}"
    counts = {rule: int(match.group(1)) for rule, match in counts.items()}
    assert ungrouped == [], "every layer job and every sum runs inside a batch"
    assert (
        len(batches)
        == counts[sum_rule]
        == len(expand_experiments(yaml.safe_load((REPO / "config.yaml").read_text())))
    ), "one batch per experiment"
    for batch in batches:
        assert [rule for rule, _ in batch].count(sum_rule) == 1, batch
    layer_jobs = [output for batch in batches for rule, output in batch if rule == layer_rule]
    assert len(layer_jobs) == len(set(layer_jobs)) == counts[layer_rule] >= len(batches) // 2


def test_hardware_sweep_dry_run_submits_one_job_per_batch(tmp_path):
    """A hardware sweep through the profile: one SLURM job per batch of variants, then its tables."""
    from support import DATA

    (tmp_path / "inputs").symlink_to(REPO / "inputs")
    shutil.copy(DATA / "workflow" / "small_convs.yaml", tmp_path / "small.yaml")
    sweep = {
        "name": "tpu",
        "base": "inputs/hardware/flow_tpu_32x32.yaml",
        "params": {"ub": "memories.unified_buffer.size"},
        "vary": {"ub": ["1MiB", "2MiB", "3MiB"], "memories.dram.r_cost": [1900, 2000]},
        "batch_size": 4,
        "workloads": ["small.yaml"],
        "mapping": "inputs/mapping/flow_tpu_32x32.yaml",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"hardware_sweeps": [sweep]}))
    dry_run = snakemake(tmp_path, "--profile", str(PROFILE), "--dry-run")
    counts = dict(re.findall(r"^(sweep_batch|sweep_collect)\s+(\d+)$", dry_run, re.MULTILINE))
    assert counts == {"sweep_batch": "2", "sweep_collect": "1"}  # 6 variants in batches of 4
    batches = re.findall(
        r"^rule sweep_batch:\n(?:\s+.*\n)*?\s+resources: (.*)$", dry_run, re.MULTILINE
    )
    assert len(batches) == 2 and all("runtime=120" in resources for resources in batches)
    assert "Group job" not in dry_run  # a batch is one SLURM job of its own


@pytest.mark.parametrize("name", ["sweep_slurm_slice.yaml", "sweep_10k_slurm_slice.yaml"])
def test_slice_config_is_the_benchmarks_slice_and_submits_one_job_per_batch(tmp_path, name):
    """The slices tools/slurm_local.sh runs on a real SLURM (config/sweep_slurm_slice.yaml of the
    1,000 grid, config/sweep_10k_slurm_slice.yaml of the 10,000 grid) are what
    benchmarks/bench_hw_sweep.py writes with the command in their header, and go through the
    profile as one SLURM job per batch of variants."""
    committed = REPO / "config" / name
    command = committed.read_text().splitlines()[1].split()
    assert command[:3] == ["#", "python", "benchmarks/bench_hw_sweep.py"], command
    arguments = command[3:]
    written = tmp_path / committed.name
    arguments[arguments.index("--write-config") + 1] = str(written)
    subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_hw_sweep.py"), *arguments],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    config = yaml.safe_load(committed.read_text())
    assert yaml.safe_load(written.read_text()) == config
    (sweep,) = config["hardware_sweeps"]
    variants = len(sweep["zip"][0]["D1"])
    (tmp_path / "inputs").symlink_to(REPO / "inputs")
    dry_run = snakemake(
        tmp_path, "--profile", str(PROFILE), "--configfile", str(written), "--dry-run"
    )
    counts = dict(re.findall(r"^(sweep_batch|sweep_collect)\s+(\d+)$", dry_run, re.MULTILINE))
    assert counts == {"sweep_batch": str(-(-variants // sweep["batch_size"])), "sweep_collect": "1"}


def test_whole_10000_variant_grid_dry_runs_through_the_profile(tmp_path, monkeypatch):
    """config/sweep_10k.yaml (the whole grid of benchmarks/bench_hw_sweep.py --grid 10000) is what
    the benchmark writes with the command in its header, and its dry run through the profile is one
    SLURM job per batch of 200 variants (10,000 distinct variants), then the tables."""

    committed = REPO / "config" / "sweep_10k.yaml"
    arguments = committed.read_text().splitlines()[1].split()[3:]
    written = tmp_path / committed.name
    arguments[arguments.index("--write-config") + 1] = str(written)
    subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_hw_sweep.py"), *arguments],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    config = yaml.safe_load(committed.read_text())
    assert yaml.safe_load(written.read_text()) == config
    (tmp_path / "inputs").symlink_to(REPO / "inputs")
    dry_run = snakemake(
        tmp_path, "--profile", str(PROFILE), "--configfile", str(written), "--dry-run"
    )
    counts = dict(re.findall(r"^(sweep_batch|sweep_collect)\s+(\d+)$", dry_run, re.MULTILINE))
    assert counts == {"sweep_batch": "50", "sweep_collect": "1"}
    batches = re.findall(
        r"^rule sweep_batch:\n(?:\s+.*\n)*?\s+resources: (.*)$", dry_run, re.MULTILINE
    )
    assert len(batches) == 50 and all("runtime=120" in resources for resources in batches)
    # the batch files are written by the write_spec jobs (a dry run writes nothing): one per batch
    specs = re.findall(
        r"^rule write_spec:\n(?:\s+.*\n)*?\s+output: (.*sweeps/grid/.*\.json)$",
        dry_run,
        re.MULTILINE,
    )
    assert len(specs) == 50
    from zigzag.sweep import read_sweep, variants_of

    (section,) = config["hardware_sweeps"]
    monkeypatch.chdir(tmp_path)
    names = [v.name for v in variants_of(read_sweep(section))]
    assert len(names) == len(set(names)) == 10000
