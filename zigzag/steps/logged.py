"""The layer job with its outcome logged (:func:`zigzag.notes.run_logged`): one line on success,
one line on error.

A bad input or an unmappable layer ends the step with one ``error: ...`` line on standard error
and in the log, and exit status 1, so Snakemake (``--keep-going``) finishes the other jobs.
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.notes import run_logged
from zigzag.io.atomic import write_text_atomic
from zigzag.io.sealed import sealed_text
from zigzag.steps.failures import failure
from zigzag.steps.job_runner import evaluate_job


def evaluate_logged(job: str, output: str, log: str | None, *, record_failure: bool = False) -> int:
    """Evaluate one layer job; errors name the experiment and layer that planned the job.
    ``record_failure``: an error writes a failure record to ``output`` instead of failing."""

    def action():
        label = json.loads(Path(job).read_text()).get("label", job)
        try:
            best = evaluate_job(job, output, show_progress=False)
        except (InputError, MappingError) as exc:
            raise type(exc)(*_relabelled(exc, label)) from None
        return f"{label}: energy {best.energy_total:.10g} pJ, latency {best.latency_total2:.10g} cycles"

    def record(reason: str) -> None:  # sealed with the job's key, as a result would be
        write_text_atomic(output, sealed_text(failure("evaluate", reason), Path(job).stem))

    return run_logged(log, action, record if record_failure else None)


def _relabelled(exc: Exception, label: str) -> tuple:
    if isinstance(exc, InputError):
        return exc.file, exc.where or label, exc.message
    return (f"{label}: {exc}",)
