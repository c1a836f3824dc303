"""The environment of the workflow's job processes (set once, when the Snakefile loads)."""

from __future__ import annotations

import compileall
import sys
from pathlib import Path


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
