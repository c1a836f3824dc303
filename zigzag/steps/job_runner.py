"""Layer jobs as the workflow's ``evaluate_layer`` rule runs them: a job file (its format and key
are :mod:`zigzag.search.jobs`) in, the best result out."""

from __future__ import annotations

import compileall
import json
import logging
import sys
from pathlib import Path

from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.errors import InputError, MappingError
from zigzag.io.atomic import write_text_atomic
from zigzag.io.sealed import DamagedFile, damage_warning, read_sealed, sealed_text
from zigzag.search.jobs import job_result_text, layer_from_job
from zigzag.search.layer_search import search_layer
from zigzag.search.options import SearchOptions

_LOG = logging.getLogger(__name__)


def evaluate_job(
    job_path: str | Path, result_path: str | Path, *, show_progress: bool | None = None
):
    """Search one job's layer and write its best result (a CostResult) to ``result_path``, sealed
    with the job's key (the job file's name)."""
    job = json.loads(Path(job_path).read_text())
    layer = layer_from_job(job)
    accelerator = accelerator_from_dict(job["accelerator"])
    best, stats = search_layer(
        layer, accelerator, SearchOptions(**job["options"]), show_progress=show_progress
    )
    write_text_atomic(result_path, job_result_text(best, stats, Path(job_path).stem))
    return best


def read_or_recompute(job_path: str | Path, result_path: str | Path) -> dict:
    """The checked data of a job's result file (its result or its failure record); a result file
    that is missing or damaged (:mod:`zigzag.io.sealed`) is reported in one warning naming it,
    never used, and computed again from its job (a layer no mapping fits gets its record)."""
    key = Path(job_path).stem
    try:
        return read_sealed(result_path, key)
    except FileNotFoundError:
        _LOG.warning("%s is missing; computed again from %s", result_path, job_path)
    except DamagedFile as exc:
        _LOG.warning(damage_warning(exc))
    try:
        evaluate_job(job_path, result_path, show_progress=False)
    except (InputError, MappingError) as exc:
        write_text_atomic(result_path, sealed_text(failure_record("evaluate", str(exc)), key))
    return read_sealed(result_path, key)


def failure_record(step: str, reason: str) -> dict:
    """The record of a step that could not do its work (``zigzag/steps/failures.py``)."""
    return {"failed": {"step": step, "reason": " ".join(str(reason).split())}}


def prepare_job_environment(environ) -> None:
    """Settings that make the many short job processes start faster (called by the Snakefile).

    * one BLAS/OpenMP thread per job: jobs run in parallel already, and numpy imports faster;
    * the package's bytecode is compiled once, also where ``PYTHONDONTWRITEBYTECODE`` is set
      (otherwise every job compiles every module it imports, ~0.1 s each time).
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        environ.setdefault(name, "1")
    if sys.dont_write_bytecode:
        compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)
