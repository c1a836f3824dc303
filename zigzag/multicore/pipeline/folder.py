"""The one writer of a multi-core run folder.

Every run: ``summary.json`` (the schedule's figures; ``search`` for an allocation search or a
constraint optimisation; ``per_token`` for a transformer step; ``notes``: the warnings about the
run), ``schedule.csv`` and ``schedule_trace.json``. A genetic search adds ``front.csv`` and
``allocation.yaml``, a constraint optimisation ``allocation.yaml`` and ``co_slots.csv``
(docs/reference/multicore-results.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.multicore.allocation.front import front_csv, write_fixed_mapping
from zigzag.multicore.automap import write_mapping
from zigzag.multicore.allocation.search import AllocationSearch
from zigzag.multicore.pipeline.scheduled import Scheduled
from zigzag.multicore.schedule.tokens import accelerator_clock, export_figures
from zigzag.notes import collected_warnings


def write_run(
    folder: str | Path, scheduled: Scheduled, notes: Sequence[str] | None = None
) -> dict[str, Path]:
    """Write the run folder; ``notes`` (None: no ``notes`` entry) are recorded with the warnings
    logged while writing. Returns the files written by name (the trace left out)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    found, result = scheduled.allocated, scheduled.schedule
    names = ["summary.json", "schedule.csv"]
    automatic = None
    if scheduled.run.mapping is None and scheduled.mapping is not None:
        # the automatic mapping, to edit and rerun (docs/reference/multicore-mapping.md#automatic-mapping)
        automatic = write_mapping(scheduled.mapping, out / "automatic_mapping.yaml")
        names.insert(0, "automatic_mapping.yaml")
    with collected_warnings() as written:
        if isinstance(found, AllocationSearch):
            write_text_atomic(out / "front.csv", front_csv(found.genes, found.front, found.figures))
            write_fixed_mapping(
                out / "allocation.yaml",
                automatic or found.mapping_path,
                found.graph,
                found.genes,
                found.chosen.cores,
                found.accelerator,
            )
            names = ["front.csv", "allocation.yaml", *names]
        elif found is not None:
            write_text_atomic(out / "allocation.yaml", found.allocation_yaml())
            write_text_atomic(out / "co_slots.csv", found.slots_csv())
            names = ["allocation.yaml", "co_slots.csv", *names]
        result.write(out)
        summary = json.loads((out / "summary.json").read_text())
        if found is not None:
            summary["search"] = (
                found.search_summary()
                if isinstance(found, AllocationSearch)
                else found.co_summary()
            )
        tokens = token_figures(scheduled)
        if tokens is not None:
            summary["per_token"] = tokens
    if notes is not None:
        summary["notes"] = [*notes, *written]
    write_json_atomic(out / "summary.json", summary)
    return {name: out / name for name in names}


def token_figures(scheduled: Scheduled) -> dict | None:
    """A transformer step's per-token figures (seconds at the run's clock, else the accelerator
    file's), or None for any other workload."""
    run = scheduled.run
    if not str(run.workload).endswith(".onnx"):
        return None
    clock = run.clock_ghz if run.clock_ghz is not None else accelerator_clock(scheduled.accelerator)
    return export_figures(scheduled.schedule, run.workload, clock)
