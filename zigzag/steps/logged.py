"""Running a workflow step with its outcome logged: one line on success, one line on error.

A bad input or an unmappable layer ends the step with one ``error: ...`` line on standard error
and in the log, and exit status 1, so Snakemake (``--keep-going``) finishes the other jobs.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from zigzag.errors import InputError, MappingError


def run_logged(log: str | None, action, on_failure=None) -> int:
    """Run ``action()`` (returns a one-line message); write the time, the warnings logged meanwhile
    and then the message (or the one-line error) to ``log``, so that the outcome is the log's last line.

    ``on_failure(reason)``: called on an error instead of failing (exit status 0), to write the
    step's failure record (see zigzag/steps/failures.py); the error line is printed all the same."""
    from zigzag.notes import collected_warnings

    started = time.perf_counter()
    with collected_warnings() as warnings:
        try:
            message = action()
            status = 0
        except (InputError, MappingError) as exc:
            message = f"error: {exc}"
            print(message, file=sys.stderr)
            status = 1
            if on_failure is not None:
                on_failure(str(exc))
                status = 0
    if log:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        lines = [f"[{time.perf_counter() - started:.3f} s]", *(f"warning: {w}" for w in warnings), message]
        Path(log).write_text("\n".join(lines) + "\n")
    return status


def evaluate_logged(job: str, output: str, log: str | None, *, record_failure: bool = False) -> int:
    """Evaluate one layer job; errors name the experiment and layer that planned the job.
    ``record_failure``: an error writes a failure record to ``output`` instead of failing."""
    from zigzag.steps.job_runner import evaluate_job

    def action():
        label = json.loads(Path(job).read_text()).get("label", job)
        try:
            best = evaluate_job(job, output, show_progress=False)
        except (InputError, MappingError) as exc:
            raise type(exc)(*_relabelled(exc, label)) from None
        return f"{label}: energy {best.energy_total:.10g} pJ, latency {best.latency_total2:.10g} cycles"

    def record(reason: str) -> None:
        from zigzag.steps.failures import write_failure

        write_failure(output, "evaluate", reason)

    return run_logged(log, action, record if record_failure else None)


def _relabelled(exc: Exception, label: str) -> tuple:
    if isinstance(exc, InputError):
        return exc.file, exc.where or label, exc.message
    return (f"{label}: {exc}",)
