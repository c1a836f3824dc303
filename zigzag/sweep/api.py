"""The Python API of hardware sweeps: :func:`run_sweep` (every variant) and :func:`search_sweep`
(the guided search over the sweep's grid), both writing a sweep's tables and figures."""

from __future__ import annotations

from pathlib import Path

from zigzag.sweep.config import SearchBudget, Sweep, read_budget, read_sweep
from zigzag.sweep.runner import collect, evaluate_points, variants_of, write_variant_documents
from zigzag.sweep.hardware_search import search, write_search


def run_sweep(
    sweep: dict | Sweep,
    output: str | Path,
    *,
    cache: str | Path | None = None,
    defaults: dict | None = None,
    plot_format: str = "png",
) -> list[dict]:
    """Run a hardware sweep and write ``variants.csv``, ``pareto.csv``, ``best.csv`` and the
    figures (``plots/``) into ``output``; returns the rows of ``variants.csv``.

    ``sweep``: a sweep as in the config's ``hardware_sweeps`` (a dict with name, base, vary,
    zip, derive, fragments, workloads, mapping, constraints, options; see
    docs/reference/sweeps.md). ``cache``: the per-layer result cache (default
    ``<output>/.cache``; give the workflow's to share its results). A sweep with ``search``
    runs the guided search (:func:`search_sweep`) and returns the rows it evaluated.
    """
    if not isinstance(sweep, Sweep):
        sweep = read_sweep({"name": "sweep", **sweep}, "sweep", defaults=defaults)
    output = Path(output)
    cache = Path(cache) if cache is not None else output / ".cache"
    if sweep.search is not None:
        return search_sweep(sweep, output, cache=cache, plot_format=plot_format).rows
    variants = variants_of(sweep)
    rows = collect(sweep, evaluate_points(sweep, variants, cache), output, plot_format=plot_format)
    write_variant_documents(variants, output / "variants", sweep)
    return rows


def search_sweep(
    sweep: dict | Sweep,
    output: str | Path,
    *,
    cache: str | Path | None = None,
    budget=None,
    defaults: dict | None = None,
    plot_format: str = "png",
    float_format: str = "%.10g",
    progress=None,
):
    """Run a guided search (NSGA-II over energy, latency and area; see zigzag/sweep/hardware_search.py) over
    a sweep's grid instead of every variant, write its tables and figures (those of
    :func:`run_sweep` over the variants it evaluated, plus ``search_front.csv``,
    ``plots/search_front.<fmt>`` and ``search.json``) and return its
    :class:`~zigzag.sweep.hardware_search.SearchResult`. ``budget``: a SearchBudget or a dict
    (population, generations, seed, workers), default the sweep's ``search``."""
    if not isinstance(sweep, Sweep):
        sweep = read_sweep({"name": "sweep", **sweep}, "sweep", defaults=defaults)
    if budget is not None and not isinstance(budget, SearchBudget):
        budget = read_budget(budget, sweep.spec.source)
    budget = budget or sweep.search or SearchBudget()
    output = Path(output)
    cache = Path(cache) if cache is not None else output / ".cache"
    result = search(sweep, budget, cache, progress=progress)
    write_search(sweep, result, output, plot_format=plot_format, float_format=float_format)
    return result
