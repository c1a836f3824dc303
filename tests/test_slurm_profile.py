"""The SLURM profile (profiles/slurm) parses and submits the layer jobs in batches.

No SLURM needed: the default config's experiments are split into layer jobs locally, then a dry
run through the profile shows how the jobs would be submitted. (tools/slurm_local.sh runs the
profile on a real one-node SLURM; it needs root and daemons, so it is not part of the tests.)
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from zigzag.steps.experiments import expand_experiments

pytest.importorskip("snakemake_executor_plugin_slurm", reason="install the [cluster] extra")
pytestmark = pytest.mark.slow

PROFILE = REPO / "profiles" / "slurm"


def snakemake(workdir: Path, *args: str) -> str:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
               str(workdir), *args]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-4000:]
    return output


def profile_groups() -> tuple[dict[str, str], dict[str, int]]:
    """The profile's rule -> group assignment and jobs allowed per group."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    groups = dict(entry.split("=") for entry in profile["groups"])
    sizes = {name: int(size) for name, size in (e.split("=") for e in profile["group-components"])}
    return groups, sizes


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> str:
    """The dry run of the default config through the profile, its experiments already split."""
    workdir = tmp_path_factory.mktemp("slurm_profile")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    (workdir / "inputs").symlink_to(REPO / "inputs")
    names = [experiment["name"] for experiment in expand_experiments(config)]
    results = config.get("results", "results")
    # Split every experiment into its layer jobs (locally): only then are they in the DAG.
    snakemake(workdir, "--cores", "2", *(f"{results}/{name}/plan.json" for name in names))
    return snakemake(workdir, "--profile", str(PROFILE), "--dry-run")


def batches(output: str) -> tuple[list[list[str]], int, int, int]:
    """The layer jobs (by output) of each printed batch, the layer jobs printed alone, the layer
    job count of the job stats, and the batch size the profile allows."""
    (rule, group), = profile_groups()[0].items()
    size = profile_groups()[1][group]
    blocks = re.split(rf"^.*Group job {group} \(jobs in lexicogr\. order\):$", output, flags=re.MULTILINE)
    members = [re.findall(rf"^    rule {rule}:\n\s+input: .*\n\s+output: (.*)$", block, re.MULTILINE)
               for block in blocks[1:]]
    alone = len(re.findall(rf"^rule {rule}:$", output, re.MULTILINE))
    total = int(re.search(rf"^{rule}\s+(\d+)$", output, re.MULTILINE).group(1))
    return members, alone, total, size


def test_layer_jobs_are_submitted_in_batches(dry_run):
    members, alone, total, size = batches(dry_run)
    assert total > size, "the default config should have more layer jobs than one batch holds"
    assert alone == 0, "every layer job runs inside a batch"
    assert len({job for batch in members for job in batch}) == total
    assert len(members) < total


@pytest.mark.xfail(strict=True, reason="Snakemake (9.27.1) regroups after a checkpoint: batches grow past "
                   "--group-components and a layer job can sit in two batches (README, On a cluster)")
def test_batches_hold_at_most_group_components_jobs_each(dry_run):
    members, _, total, size = batches(dry_run)
    assert max(len(batch) for batch in members) <= size
    assert sum(len(batch) for batch in members) == total
    assert len(members) == math.ceil(total / size)
