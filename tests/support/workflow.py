"""Snakemake runs of the workflow (the repository's Snakefile) on a test's folder."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
import json
from pathlib import Path

import yaml

from support import DATA, REPO, reference_input

SNAKEFILE = REPO / "Snakefile"


def run_snakemake(
    workdir: Path, *args: str, cores: int | None = 2, timeout: float = 900
) -> subprocess.CompletedProcess:
    """Snakemake on ``workdir`` (its config.yaml) in a subprocess, output captured."""
    command = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--directory", str(workdir)]
    if cores is not None:
        command += ["--cores", str(cores)]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout)


def snakemake(workdir: Path, *args: str, check: bool = True) -> str:
    """Snakemake's output (stdout and stderr); with ``check``, the run must succeed."""
    completed = run_snakemake(workdir, *args)
    output = completed.stdout + completed.stderr
    if check:
        assert completed.returncode == 0, output[-4000:]
    return output


def jobs(output: str, rule: str) -> int:
    """How many jobs of ``rule`` a Snakemake output lists."""
    return len(re.findall(rf"^\s*(?:local)?(?:rule|checkpoint) {rule}:", output, re.MULTILINE))


def stored(folder: Path, since: int = 0, store: str = "results") -> int:
    """How many files of a run folder's result store (``results``: layer searches;
    ``multicore-cost/entries``: multi-core cost entries) were written at ``since`` (ns) or later:
    the searches a run made (the jobs run them in chunks, so jobs do not count them)."""
    files = (folder / "results" / ".cache" / store).glob("*.json")
    return sum(path.stat().st_mtime_ns >= since for path in files)


def write_yaml(path: Path, data) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def small_workflow_folder(folder: Path) -> Path:
    """Inputs (two accelerator files, one workload of four convolutions, one mapping) and a config
    of three experiments, the third a repeat of the first, written into ``folder``."""
    inputs = folder / "inputs"
    inputs.mkdir(parents=True)
    shutil.copy(reference_input("hardware", "tpu_like.yaml"), inputs / "tpu_a.yaml")
    hardware_b = yaml.safe_load(Path(reference_input("hardware", "tpu_like.yaml")).read_text())
    write_yaml(inputs / "tpu_b.yaml", {**hardware_b, "name": "tpu_b"})
    shutil.copy(reference_input("mapping", "tpu_like.yaml"), inputs / "mapping.yaml")
    shutil.copy(DATA / "workflow" / "small_convs.yaml", inputs / "small.yaml")
    experiments = [("on_a", "tpu_a"), ("on_b", "tpu_b"), ("on_a_again", "tpu_a")]
    config = {
        "experiments": [
            {
                "name": name,
                "workload": "inputs/small.yaml",
                "accelerator": f"inputs/{accelerator}.yaml",
                "mapping": "inputs/mapping.yaml",
            }
            for name, accelerator in experiments
        ]
    }
    write_yaml(folder / "config.yaml", config)
    return folder


@dataclass(frozen=True)
class WorkflowRun:
    """A finished Snakemake run: its folder (config, inputs, results) and its output."""

    folder: Path
    output: str

    def copy_to(self, folder: Path) -> Path:
        """A copy of the run's folder (modification times kept, so Snakemake sees it finished)
        that a test may edit and run again."""
        shutil.copytree(self.folder, folder, symlinks=True)
        return folder


def summary(workdir: Path, name: str) -> dict:
    """An experiment's summary.json in a finished run's folder."""
    return json.loads((workdir / "results" / name / "summary.json").read_text())
