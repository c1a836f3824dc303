"""The workflow's side of hardware sweeps (config ``hardware_sweeps``, rules/hardware_sweep.smk).

One job per *batch* of variants (``batch_size`` variants, all the sweep's workloads, so a parsed
workload serves them all; every layer goes through the shared per-layer cache), then one job per
sweep for its tables and figures. ``batch_size: auto`` makes a sweep at most
:data:`AUTO_BATCHES` jobs, so Snakemake's own work per job stays small beside the jobs' work
however large the sweep, cut where a slow parameter changes (:func:`batches`). A batch's job
reads a *batch file* written when the Snakefile is read
(its variants' documents and parameters, the sweep's settings) and rewritten only when its
content changes: a batch whose variants are unchanged is not rerun, and a batch that is rerun
reads the layers it has already computed from the cache, so adding variants to a finished sweep
computes only the new variants' layers.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_if_changed
from zigzag.io.sealed import read_step_file, write_sealed
from zigzag.sweep.config import Constraint, Sweep, read_sweep
from zigzag.sweep.describe import detail_as_text, split_details, write_details
from zigzag.sweep.forked import run_pieces
from zigzag.sweep.notes import SweepNotes
from zigzag.sweep.runner import check_varied_values, collect, evaluate_points, variants_of
from zigzag.variants import Variant, VariantSpec
from zigzag.variants.spec import Parameter

if TYPE_CHECKING:  # the config is read in the functions: the jobs import this module too
    from zigzag.config import WorkflowConfig

#: the fields of a Sweep a variant's job and the collect job need (the spec itself is not needed)
_SETTINGS = (
    "name",
    "workloads",
    "mapping",
    "spatial_mapping",
    "clock_ghz",
    "options",
    "workload_options",
    "kind",
    "base",
    "layer_stacks",
    "allocation_search",
    "ranking",
)
#: ``batch_size: auto`` splits a sweep into at most this many jobs
AUTO_BATCHES = 48


def resolve_hardware_sweeps(
    config: dict | WorkflowConfig,
) -> dict[str, tuple[Sweep, list[Variant]]]:
    """The config's hardware sweeps (read by :func:`zigzag.config.load_config` when a dict),
    checked and expanded: name -> (sweep, its variants)."""
    from zigzag.config import load_config

    config = load_config(config)
    sweeps = {}
    defaults = config.defaults.given()
    for i, entry in enumerate(config.hardware_sweeps):
        name = entry.name
        sweep = read_sweep(entry, f"config: hardware_sweeps[{i}]", defaults=defaults)
        if name in sweeps:
            raise InputError(
                "config",
                f"hardware_sweeps[{i}].name",
                f"'{name}' is used twice; name each sweep once",
            )
        # a guided search evaluates the variants it chooses, in its own job: the grid is not expanded
        variants = None if sweep.search is not None else variants_of(sweep)
        if variants is not None:  # a value of vary that cannot work alone: said before any job
            check_varied_values(sweep, variants, f"config: hardware_sweeps[{i}]")
        sweeps[sweep.name] = (sweep, variants)
    return sweeps


def write_search_files(
    config: dict | WorkflowConfig, folder: str | Path, write=None
) -> dict[str, str]:
    """For each hardware sweep with ``search``, the file its search job reads (its config entry
    and the config's defaults, as written), ``<folder>/<name>.search.json``; returns name ->
    path. ``write(path, data)`` writes a file (default: :func:`write_if_changed`)."""
    from zigzag.config import load_config

    config = load_config(config)
    write = write or write_if_changed
    files = {}
    for i, entry in enumerate(config.hardware_sweeps):
        if entry.search is not None:
            data = {
                "section": entry.given(),
                "defaults": config.defaults.given(),
                "source": f"config: hardware_sweeps[{i}]",
            }
            files[entry.name] = write(Path(folder) / f"{entry.name}.search.json", data)
    return files


def search_from_file(
    search_file: str | Path,
    cache: str | Path,
    output: str | Path,
    *,
    plot_format: str = "png",
    float_format: str = "%.10g",
):
    """A search sweep's job: the guided search and its tables and figures in ``output``."""
    from zigzag.sweep.api import search_sweep

    data = json.loads(Path(search_file).read_text())
    sweep = read_sweep(data["section"], data["source"], defaults=data["defaults"])
    return search_sweep(
        sweep, output, cache=cache, plot_format=plot_format, float_format=float_format
    )


def settings(sweep: Sweep) -> dict:
    """A sweep's settings as JSON-ready data (read back by :func:`sweep_from_settings`)."""
    return {
        **{k: getattr(sweep, k) for k in _SETTINGS},
        "workloads": list(sweep.workloads),
        "modes": list(sweep.modes),
        "workload_axes": [[name, list(values)] for name, values in sweep.workload_axes],
        "constraints": [c.text for c in sweep.constraints],
        "in_seconds": [c.in_seconds for c in sweep.constraints],
        "source": sweep.spec.source,
        "varied": sweep.spec.varied_names,
        "parameters": _parameters(sweep.spec),
    }


def _parameters(spec) -> list[dict]:
    """The spec's parameters as the collect job needs them (names, paths, written values, roles)."""
    return (
        [{"name": group, "role": "fragment"} for group, _ in spec.fragments]
        + [
            {"name": p.name, "path": p.path, "values": list(p.values), "role": "varied"}
            for axis in spec.axes
            for p in axis
        ]
        + [
            {"name": p.name, "path": p.path, "expression": p.expression, "role": "derived"}
            for p in spec.derived
        ]
    )


def sweep_from_settings(data: dict) -> Sweep:
    """The Sweep of :func:`settings` (its spec keeps only the source and the varied names)."""
    parameters = data.get("parameters") or [
        {"name": name, "role": "varied"} for name in data["varied"]
    ]
    axes = tuple(
        (Parameter(p["name"], p.get("path"), tuple(p.get("values") or ())),)
        for p in parameters
        if p["role"] != "derived"
    )
    derived = tuple(
        Parameter(p["name"], p.get("path"), expression=p.get("expression"))
        for p in parameters
        if p["role"] == "derived"
    )
    spec = VariantSpec(base={}, base_name="", source=data["source"], axes=axes, derived=derived)
    constraints = tuple(Constraint(t, s) for t, s in zip(data["constraints"], data["in_seconds"]))
    return Sweep(
        data["name"],
        spec,
        tuple(data["workloads"]),
        data["mapping"],
        data["spatial_mapping"],
        constraints,
        data["clock_ghz"],
        data["options"],
        data["workload_options"],
        kind=data.get("kind", "single"),
        base=data.get("base"),
        modes=tuple(data.get("modes", ())),
        layer_stacks=data.get("layer_stacks"),
        allocation_search=data.get("allocation_search"),
        workload_axes=tuple(
            (name, tuple(values)) for name, values in data.get("workload_axes", ())
        ),
        ranking=data.get("ranking"),
    )


def write_if_changed(path: Path, data: dict) -> str:
    """Write JSON only when its content changed (its time stamp then tells Snakemake what to rerun).
    Keys keep their order: the order of an accelerator's memories is its hierarchy."""
    return write_text_if_changed(path, json_text(data))


def json_text(data: dict) -> str:
    """The text of a sweep's JSON file (keys in their order)."""
    return json.dumps(data, indent=1, default=str) + "\n"


def batches(sweep: Sweep, variants: list[Variant]) -> list[list[Variant]]:
    """The variants in jobs: consecutive runs of ``batch_size`` variants. ``auto``: runs of at
    least ``ceil(n / AUTO_BATCHES)`` variants (so at most :data:`AUTO_BATCHES` jobs) and at most
    half as many again, each cut where the earliest-listed parameter changes (an array shape
    rather than a buffer size, a buffer size rather than a bandwidth): a job then starts on a new
    structure or sizes rather than ending on a few variants of them, whose candidate tables it
    would build for those few (docs/performance.md). The rows are the same however the variants
    are cut."""
    if sweep.batch_size != "auto":
        size = sweep.batch_size
        return [variants[i : i + size] for i in range(0, len(variants), size)]
    size = max(1, math.ceil(len(variants) / AUTO_BATCHES))
    jobs, start = [], 0
    while start < len(variants):
        last = min(start + size + size // 2, len(variants))
        end = min(range(min(start + size, last), last + 1), key=lambda e: (_cut(variants, e), e))
        jobs.append(variants[start:end])
        start = end
    return jobs


def _cut(variants: list[Variant], end: int) -> int:
    """How good a cut before ``variants[end]`` is, lower better: 0 at the end of the list, else
    1 + the position of the first parameter that changes there."""
    if end >= len(variants):
        return 0
    before, after = variants[end - 1].parameters, variants[end].parameters
    changed = (i for i, name in enumerate(after) if before.get(name) != after[name])
    return 1 + next(changed, len(after))


def batch_name(batch: list[Variant]) -> str:
    """A batch's name: its variant's name, or its first variant's and how many follow."""
    return batch[0].name if len(batch) == 1 else f"{batch[0].name}+{len(batch) - 1}"


def write_point_files(
    sweep: Sweep, variants: list[Variant], folder: str | Path, write=None
) -> dict[str, str]:
    """One batch file per batch of variants (``<folder>/<sweep>/<batch>.json``); returns batch name -> path.
    ``write(path, data)`` writes a file (default: :func:`write_if_changed`)."""
    write = write or write_if_changed
    folder = Path(folder) / sweep.name
    # what the variants' rows depend on (not the constraints or figures: changing those reruns
    # only the sweep's collect job)
    common = {
        **settings(sweep),
        "constraints": [],
        "in_seconds": [],
        "varied": [],
        "parameters": [],
        "ranking": None,
    }
    return {
        batch_name(batch): write(
            folder / f"{batch_name(batch)}.json",
            {
                "settings": common,
                "variants": [
                    {
                        "name": v.name,
                        "id": v.id,
                        "parameters": v.parameters,
                        "labels": v.labels,
                        "document": v.document,
                        "problem": v.problem,
                        "aliases": list(v.aliases),
                    }
                    for v in batch
                ],
            },
        )
        for batch in batches(sweep, variants)
    }


def write_sweep_settings(sweep: Sweep, folder: str | Path, write=None) -> str:
    """The sweep's settings file (``<folder>/<sweep>.json``), read by its collect job.
    ``write(path, data)`` writes it (default: :func:`write_if_changed`)."""
    return (write or write_if_changed)(Path(folder) / f"{sweep.name}.json", settings(sweep))


def evaluate_point_file(
    point_file: str | Path, cache: str | Path, output: str | Path
) -> list[dict]:
    """A batch's job: its variants' rows on every workload of the sweep, written to ``output``
    (their per-layer figures as JSON text); returns the rows."""
    data = json.loads(Path(point_file).read_text())
    sweep = sweep_from_settings(data["settings"])
    variants = [
        Variant(
            v["name"],
            v["id"],
            v["parameters"],
            v["labels"],
            v["document"],
            v["problem"],
            tuple(v["aliases"]),
        )
        for v in data["variants"]
    ]
    notes = SweepNotes()  # told once per sweep, by its collect job
    rows = evaluate_points(sweep, variants, cache, notes=notes, packed=True)
    write_sealed(output, {"rows": [detail_as_text(r) for r in rows], "notes": notes.to_dict()})
    return rows


def collect_points(
    settings_file: str | Path,
    point_results: list[str | Path],
    output: str | Path,
    *,
    plot_format: str = "png",
    float_format: str = "%.10g",
    workers: int = 1,
) -> list[dict]:
    """The sweep's job: tables and figures of all its variants' rows; the notes its batch jobs held
    (their input notes, their unrolling reductions), told once. ``workers`` processes read the
    batches (each writing its variants' per-layer files) and draw the figures."""
    data = json.loads(Path(settings_file).read_text())
    sweep = sweep_from_settings(data)
    details = Path(output) / "details"
    batches = run_pieces(
        [functools.partial(_read_batch, path, details) for path in point_results], workers
    )
    rows = [row for batch in batches for row in batch["rows"]]
    notes = SweepNotes()
    for batch in batches:
        if "notes" in batch:  # (a batch written before notes were kept has none)
            notes.merge(SweepNotes.from_dict(batch["notes"]))
    notes.tell(f"the batch jobs' logs, {Path(output) / 'logs'}")
    return collect(
        sweep, rows, output, plot_format=plot_format, float_format=float_format, workers=workers
    )


def _read_batch(path: str | Path, details: Path) -> dict:
    """A batch job's file, its rows without their per-layer figures, which are written to
    ``details`` (the variants of a batch are in no other batch)."""
    batch = read_step_file(path)
    rows, detail = split_details(batch["rows"])
    write_details(detail, details)
    return {**batch, "rows": rows}
