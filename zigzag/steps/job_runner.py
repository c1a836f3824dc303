"""The environment of the workflow's job processes (set once, when the Snakefile loads), and the
job server started ahead of the jobs."""

from __future__ import annotations

import compileall
import subprocess
import sys
from pathlib import Path

from zigzag.steps import client
from zigzag.steps.integrity import is_dry_run


def prepare_job_environment(environ) -> None:
    """Settings that make the job processes start faster (called by the Snakefile).

    * one BLAS/OpenMP thread per job: jobs run in parallel already, and numpy imports faster;
    * the package's bytecode is compiled once, also where ``PYTHONDONTWRITEBYTECODE`` is set
      (otherwise every job compiles every module it imports, ~0.1 s each time).
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        environ.setdefault(name, "1")
    if sys.dont_write_bytecode:
        compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)


#: Snakemake's options with which a run starts no job (besides a dry run), or may run its jobs
#: elsewhere than on this machine (a cluster's executor, a profile)
NO_LOCAL_JOBS = frozenset(
    {
        "--lint",
        "--dag",
        "--rulegraph",
        "--filegraph",
        "--summary",
        "-S",
        "--detailed-summary",
        "-D",
        "--list-rules",
        "--list",
        "-l",
        "--unlock",
        "--touch",
        "-t",
        "--report",
        "--cleanup-metadata",
        "--list-changes",
        "--delete-all-output",
        "--delete-temp-output",
        "--executor",
        "-e",
        "--profile",
        "--version",
        "-v",
        "--help",
        "-h",
    }
)


def start_server_in_background(arguments: list[str]) -> bool:
    """Start the job server (``client.py --start-server``, as a job starts it) without waiting,
    unless Snakemake's command line ``arguments`` run no job here; whether it was started."""
    if is_dry_run(arguments) or NO_LOCAL_JOBS & {a.split("=")[0] for a in arguments}:
        return False
    subprocess.Popen(
        [sys.executable, "-S", client.__file__, "--start-server"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return True
