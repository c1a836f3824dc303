"""A hardware sweep's steps: expand its variants, evaluate every variant on every workload
(:func:`evaluate_points`), write the tables and figures (:func:`collect`). The Python API
(:mod:`zigzag.sweep.api`), ``zigzag sweep`` and the workflow's separate jobs run these.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic
from zigzag.plots.units import is_size_path
from zigzag.mapping_search.batched.allocation_store import AllocationStore
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.sweep import tables
from zigzag.sweep.config import Sweep, accelerator_identity
from zigzag.sweep.describe import figure_parameters, split_details, write_description
from zigzag.sweep.forked import run_pieces
from zigzag.sweep.multicore import multicore_identity, write_multicore_files
from zigzag.sweep.notes import SweepNotes
from zigzag.sweep.point import evaluate_point, point_label, workload_points
from zigzag.variants import Variant, expand, expressions

logger = logging.getLogger(__name__)


def variants_of(sweep: Sweep) -> list[Variant]:
    """The distinct variants of a sweep, each checked by the accelerator validator (the
    multi-core loader for a multi-core sweep)."""
    if sweep.kind == "multicore":
        return expand(sweep.spec, normalise=multicore_identity(sweep.base))
    return expand(sweep.spec, normalise=accelerator_identity)


def check_varied_values(sweep: Sweep, variants: list[Variant], where: str) -> None:
    """A one-line InputError (``where``: the sweep's place in the config) for a value given under
    ``vary`` or ``zip`` that the accelerator validator refuses by itself (a size written as a word,
    a negative count, ...): a mistake in the config, said before any job, not a variant's row.
    Variants that are invalid only as a combination stay rows with status ``invalid``."""
    varied = {p.path: p.name for axis in sweep.spec.axes for p in axis if p.path}
    for variant in variants:
        if not variant.problem:
            continue
        for path, name in varied.items():
            prefix = f"{variant.name}: {path}: "
            if variant.problem.startswith(prefix):
                value = variant.parameters.get(name)
                problem = variant.problem[len(prefix) :]
                if is_size_path(path) and isinstance(value, str):
                    problem = (
                        "not a size; give bits as a number, or a size with its unit, e.g. 2MiB"
                    )
                raise InputError(
                    where, f"vary.{name}", f"the value {value!r} cannot be used: {problem}"
                )


def clock_of(sweep: Sweep, variant: Variant) -> float | None:
    """The sweep's ``clock_ghz`` for a variant (a number or an expression over its parameters); a
    multi-core sweep without one takes the clock the variant's accelerator file declares, if any."""
    if sweep.clock_ghz is None:
        declared = variant.document.get("clock_ghz") if sweep.kind == "multicore" else None
        return (
            float(declared)
            if isinstance(declared, (int, float)) and not isinstance(declared, bool)
            else None
        )
    names = {re.sub(r"\W", "_", k): v for k, v in variant.parameters.items()}

    def lookup(name: str):
        if name in names and isinstance(names[name], (int, float)):
            return names[name]
        raise expressions.ExpressionError(f"'{name}' is not a numeric parameter of the sweep")

    try:
        return float(expressions.evaluate(str(sweep.clock_ghz), lookup))
    except expressions.ExpressionError as exc:
        from zigzag.errors import InputError

        raise InputError(sweep.spec.source, "clock_ghz", str(exc)) from None


def point_row(
    sweep: Sweep,
    variant: Variant,
    workload: str,
    cache: str | Path,
    *,
    workloads: dict | None = None,
    mode: str | None = None,
    changes: dict | None = None,
    shared=None,
    packed: bool = False,
) -> dict:
    """The complete ``variants.csv`` row of a variant on a workload (in ``mode``, for a
    multi-core sweep; with the workload fields ``changes`` of a ``workload_vary`` point), before
    constraints (``packed``: see :func:`~zigzag.sweep.point.evaluate_point`)."""
    row = {
        "sweep": sweep.name,
        "variant": variant.name,
        "variant_id": variant.id,
        "workload": _stem(workload),
        **({"mode": mode} if mode else {}),
        **(
            {"workload_point": point_label(changes), **{k: _cell(v) for k, v in changes.items()}}
            if changes
            else {}
        ),
        **{k: _cell(v) for k, v in variant.parameters.items()},
    }
    figures = evaluate_point(
        sweep,
        variant,
        workload,
        cache,
        workloads=workloads,
        mode=mode,
        changes=changes,
        shared=shared,
        packed=packed,
    )
    figures = {
        k: v for k, v in figures.items() if k not in (changes or {}) or k in ("status", "reason")
    }
    row.update(figures)
    if variant.aliases:
        row["same_as"] = " ".join(variant.aliases)
    return tables.complete_row(row, clock_of(sweep, variant) if row["status"] == "ok" else None)


def _stem(workload: str) -> str:
    """A workload's name in tables: its file name without the extension(s) (``llama.llm.yaml`` -> ``llama``)."""
    name = Path(workload).name
    for suffix in (".llm.yaml", ".llm.yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(workload).stem


def _cell(value):
    """A parameter value as a table cell (lists as ``32x32``)."""
    if isinstance(value, list):
        return "x".join(map(str, value))
    return value


#: variants told to the shared candidates at a time (:meth:`SharedCandidates.expect_only`): the
#: siblings whose latencies and tables one pass may make; a larger window shares a little more,
#: but every variant's search pays for each sibling told (docs/performance.md)
SIBLING_WINDOW = 32


def evaluate_points(
    sweep: Sweep,
    variants: list[Variant],
    cache: str | Path,
    *,
    share: bool = True,
    notes: SweepNotes | None = None,
    packed: bool = False,
) -> list[dict]:
    """Rows of every (variant, workload) pair, variant by variant; parsed workloads are reused and
    (``share``) variants that differ only in memory costs share mapping candidates
    (zigzag/mapping_search/batched/shared.py: the rows are the same without it, bit for bit), those
    of one structure their allocations, and the latencies of bandwidth siblings are computed
    together (the cache is told the documents of the next
    :data:`SIBLING_WINDOW` variants before each window of them). The allocation tables are
    also kept in ``cache`` (zigzag/mapping_search/batched/allocation_store.py), so the other
    batch jobs of a structure read them instead of allocating the same candidates again.

    The points' input notes and unrolling reductions are held (:mod:`zigzag.sweep.notes`) in
    ``notes``, or, without ``notes``, told once at the end. ``packed`` (a workflow batch job): the
    layer results searched are appended to one pack of the process
    (:mod:`zigzag.mapping_search.result_packs`) instead of a file each."""
    parsed: dict = {}
    shared = SharedCandidates() if share else None
    if shared is not None:
        shared.allocations.store = AllocationStore(Path(cache))
    held = SweepNotes() if notes is None else notes
    rows = []
    points = list(
        itertools.product(sweep.workloads, workload_points(sweep), sweep.modes or (None,))
    )
    try:
        for start, variant in enumerate(variants):
            if shared is not None and start % SIBLING_WINDOW == 0:
                # the sizes and bandwidths to come: latencies computed for them in one pass
                window = variants[start : start + SIBLING_WINDOW]
                shared.expect_only(v.document for v in window if v.problem is None)
            for workload, changes, mode in points:  # the last one varies fastest
                with held.point(variant.name):
                    row = point_row(
                        sweep,
                        variant,
                        workload,
                        cache,
                        workloads=parsed,
                        mode=mode,
                        changes=changes,
                        shared=shared,
                        packed=packed,
                    )
                rows.append(row)
                logger.info(
                    "%s on %s %s: %s", variant.name, workload, point_label(changes), row["status"]
                )
    finally:  # told even when a point stops the sweep
        if notes is None:
            held.tell()
    return rows


def collect(
    sweep: Sweep,
    rows: list[dict],
    output: str | Path,
    *,
    plot_format: str = "png",
    float_format: str = "%.10g",
    workers: int = 1,
) -> list[dict]:
    """Constraints, Pareto fronts, best variants, tables and figures of a sweep's rows (the
    figures drawn by up to ``workers`` processes); returns the final rows."""
    rows, details = split_details(rows)
    if sweep.kind != "multicore":  # the figure each layer's mapping search minimised
        rows = [{**row, "opt": sweep.options.get("opt", "latency")} for row in rows]
    rows = [tables.check_constraints(row, sweep.constraints) for row in rows]
    rows = tables.mark_fronts(rows)
    output = Path(output)
    tables.write_tables(rows, output, float_format=float_format)
    write_description(sweep, details, output)
    write_figures(sweep, rows, output / "plots", plot_format, workers=workers)
    return rows


def write_figures(
    sweep: Sweep, rows: list[dict], folder: Path, plot_format: str, *, workers: int = 1
) -> dict[str, Path]:
    """The Pareto projections and one figure per parameter the user named (a derived path has
    none), drawn by up to ``workers`` processes (:mod:`zigzag.sweep.forked`), the largest first."""
    from zigzag.sweep.figures import plot_metrics_vs_parameter, plot_pareto_projections

    limits = [c.text for c in sweep.constraints]
    pieces = {
        "pareto_figure": functools.partial(
            plot_pareto_projections, rows, folder / f"pareto.{plot_format}", constraints=limits
        )
    }
    sizes = {p.name for axis in sweep.spec.axes for p in axis if is_size_path(p.path)}
    sizes |= {p.name for p in sweep.spec.derived if is_size_path(p.path)}
    for parameter in figure_parameters(sweep.spec):
        stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", parameter)
        pieces[f"vs_{parameter}"] = functools.partial(
            plot_metrics_vs_parameter,
            rows,
            parameter,
            folder / f"vs_{stem}.{plot_format}",
            size=parameter in sizes,
        )
    names = [name for name, _ in sweep.workload_axes]
    if names:
        from zigzag.plots.tokens import plot_tokens_grid, plot_tokens_vs

        for parameter in names:
            stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", parameter)
            pieces[f"tokens_vs_{parameter}"] = functools.partial(
                plot_tokens_vs,
                rows,
                parameter,
                folder / f"tokens_vs_{stem}.{plot_format}",
                series=names,
            )
            metric = "ttft_s" if any(r.get("phase") == "prefill" for r in rows) else "tpot_s"
            for (
                hardware
            ) in sweep.spec.varied_names:  # e.g. time per output token over SRAM size x context
                name = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{metric}_{hardware}_x_{parameter}")
                pieces[name] = functools.partial(
                    plot_tokens_grid,
                    rows,
                    hardware,
                    parameter,
                    folder / f"{name}.{plot_format}",
                    metric=metric,
                )
    return dict(zip(pieces, run_pieces(list(pieces.values()), workers)))


def write_variant_documents(
    variants: list[Variant], folder: Path, sweep: Sweep | None = None
) -> None:
    """Each variant's accelerator document as ``<folder>/<name>.yaml``, to inspect or reuse (a
    multi-core variant also with its mapping, ``<name>.mapping.yaml``)."""
    import yaml

    for variant in variants:
        if variant.document is not None and sweep is not None and sweep.kind == "multicore":
            try:
                write_multicore_files(sweep, variant, folder)
            except InputError as exc:  # its mapping does not fit it: the row says why
                logger.info("%s: not written (%s)", variant.name, exc)
        elif variant.document is not None:
            write_text_atomic(
                folder / f"{variant.name}.yaml", yaml.safe_dump(variant.document, sort_keys=False)
            )
