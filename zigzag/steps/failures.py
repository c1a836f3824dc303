"""Failure records: one experiment that cannot run never takes the comparison of the others down.

In the workflow (steps run with ``--record-failure``), a step of an experiment that stops on bad
input or an unmappable layer still prints its one-line error, but writes a *failure record*
(``{"failed": {"step": ..., "reason": ...}}``) into its output and succeeds. The later steps pass
the record on; ``save`` turns it into the experiment's row with ``status`` ``failed`` and the
``reason``, so ``experiments.csv``, ``pareto.csv`` and the comparison figure are written for all
experiments; the run's last job (``check_experiments``) then fails, naming every failed
experiment. Without the flag a step fails as before (exit status 1, no output).
"""

from __future__ import annotations

from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.sealed import read_step_file, write_sealed
from zigzag.io.tables import read_csv
from zigzag.mapping_search.result_store import failure_record

FAILED = "failed"


def failure(step: str, reason: str) -> dict:
    """The record of a step that could not do its work."""
    return failure_record(step, reason)


def failure_in(document) -> dict | None:
    """The failure record in a step's output document (None if the step succeeded)."""
    return document.get(FAILED) if isinstance(document, dict) else None


def read_failure(path: str | Path) -> dict | None:
    """The failure record of a JSON output file (None if it holds a result)."""
    return failure_in(read_step_file(path))


def write_failure(path: str | Path, step: str, reason: str, **context) -> None:
    """Write a step's failure record (plus ``context``, e.g. the experiment) to its output."""
    write_sealed(path, {**context, **failure(step, reason)})


def failed_rows(rows: list[dict]) -> list[dict]:
    """The rows of ``experiments.csv`` whose experiment did not run."""
    return [row for row in rows if row.get("status") not in (None, "", "ok")]


def check_experiments(experiments_csv: str | Path) -> str:
    """Fail (InputError) naming every failed experiment of ``experiments.csv``; else a one-line summary."""
    rows = read_csv(experiments_csv)
    failed = failed_rows(rows)
    if failed:
        names = "; ".join(f"{row['experiment']} ({row['reason']})" for row in failed)
        raise InputError(
            str(experiments_csv),
            "status",
            f"{len(failed)} of {len(rows)} experiments failed: {names}",
        )
    return f"all {len(rows)} experiments ran"
