"""A guided search over a hardware sweep too large to enumerate, minimising energy, latency (each
summed over the sweep's workloads) and area over the sweep's grid. Two methods: ``guided`` (the
default: batches chosen by models of feasibility and of the objectives fitted on what was seen,
:mod:`zigzag.sweep.guided`) and ``nsga2`` (a genetic search with DEAP's NSGA-II selection).

The guided search asks a feasibility screen (:mod:`zigzag.sweep.guided_screen`; the budget's
``screen``) about a candidate before evaluating it, and never evaluates one it shows cannot run
(with a ``screen_charge``, each question is charged to the budget and a candidate is asked about
only when more likely to fail than a question costs; :data:`SCREEN_CHARGE` by default).

A candidate is one position per axis of the sweep (fragment groups, varied and zipped axes; see
:func:`zigzag.variants.axis_sizes`), made into its variant only when evaluated. Every evaluation
goes through the shared per-layer cache, so a search reuses what a grid, an experiment or an
earlier search computed, and a rerun computes nothing. Variants that cannot run or break a
constraint rank behind every variant that can. Seeded: all random draws come from one
``random.Random(seed)``; candidates are evaluated in a fixed order, in ``workers`` processes,
so the same seed gives the same front whatever the number of workers.

The genetic loop is the shared (mu + lambda) scheme (:mod:`zigzag.multiobjective.nsga2`):
``population`` children per generation, each a uniform crossover of two parents (probability
0.3) or a mutation of one (each gene with probability 1/genes, at least one: half the time to a
neighbouring position, else to any), a child already evaluated mutated again; ``population``
survivors chosen by ``selNSGA2``. At most ``population * (generations + 1)`` variants are evaluated.
"""

from __future__ import annotations

import contextlib
import functools
import random
from dataclasses import dataclass
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.io.tables import csv_text
from zigzag.multiobjective.nsga2 import Evaluations, Individual
from zigzag.multiobjective.nsga2 import nsga2 as nsga2_loop
from zigzag.multiobjective.pareto import non_dominated
from zigzag.sweep import tables
from zigzag.sweep.config import SearchBudget, Sweep
from zigzag.sweep.config import accelerator_identity
from zigzag.sweep.describe import split_details
from zigzag.sweep.guided import guided_search
from zigzag.sweep.guided_constraints import Broke
from zigzag.sweep.guided_screen import Screen
from zigzag.sweep.notes import SweepNotes
from zigzag.sweep.point import workload_points
from zigzag.sweep.runner import collect, point_row
from zigzag.variants import axis_sizes, variant_at

CROSSOVER_PROBABILITY = 0.3
RETRIES = 20  # mutations tried to turn a child into a candidate not yet evaluated
#: objectives of a candidate that cannot run or breaks a constraint (behind every real one)
WORST = 1e300
#: evaluations of the budget one question to the feasibility screen is charged (see search). Its
#: CPU time over an evaluation's is 0.05-0.25 on the benchmark's grids (lpf 4, cheap evaluations;
#: building and checking the variant alone is 3-4 ms); a charge of 0.25 holds the evaluations and
#: the screening within the budget there, but costs small budgets on grids mostly infeasible too
#: much (docs/performance.md), so it is off by default
SCREEN_CHARGE = 0.0


def _candidate(genes=()) -> Individual:
    """One position per axis of the sweep, with its fitness: energy, latency, area, all minimised."""
    return Individual(genes, objectives=3)


@dataclass(frozen=True)
class SearchResult:
    """What a search found: the rows of every variant it evaluated (as ``variants.csv``), its
    front (one row per variant: parameters, summed energy and latency, area), and its counts."""

    rows: list[dict]
    front: list[dict]
    evaluations: int
    grid_size: int
    generations: int


# ----- evaluation ---------------------------------------------------------------------------------


def evaluate_position(
    sweep: Sweep,
    position: tuple[int, ...],
    cache: str | Path,
    parsed: dict,
    notes: SweepNotes | None = None,
) -> list[dict]:
    """The rows (one per workload and ``workload_vary`` point, constraints applied) of the variant
    at ``position``: the search's objectives sum over all of them. ``notes``: where to hold the
    points' input notes and unrolling reductions (else they are logged as they come)."""
    variant = variant_at(sweep.spec, position, normalise=accelerator_identity)
    rows = []
    for workload in sweep.workloads:
        for changes in workload_points(sweep):
            with notes.point(variant.name) if notes is not None else contextlib.nullcontext():
                row = point_row(sweep, variant, workload, cache, workloads=parsed, changes=changes)
            rows.append(tables.check_constraints(row, sweep.constraints))
    return rows


def _position_with_notes(
    sweep: Sweep, position: tuple[int, ...], cache: str, parsed: dict
) -> tuple[list[dict], dict]:
    """The rows of the variant at ``position`` and the notes its points held (as a dict: it
    crosses from a worker process), for the search to tell once."""
    notes = SweepNotes()
    rows = evaluate_position(sweep, position, cache, parsed, notes=notes)
    return rows, notes.to_dict()


def objectives(rows: list[dict]) -> tuple[float, float, float]:
    """Energy and latency summed over the workloads, and area; WORST when a row did not run."""
    if not rows or any(r["status"] != "ok" or r.get("area_mm2") is None for r in rows):
        return (WORST, WORST, WORST)
    return _sums(rows)


def _sums(rows: list[dict]) -> tuple[float, float, float]:
    """Energy and latency summed over the workloads, and area."""
    return (
        sum(r["energy_pJ"] for r in rows),
        sum(r["latency_cycles"] for r in rows),
        rows[0]["area_mm2"],
    )


def measured(rows: list[dict]) -> tuple[float, float, float]:
    """:func:`objectives`, but for a variant that ran and broke a constraint its measured
    objectives, marked (:class:`~zigzag.sweep.guided_constraints.Broke`): the guided search
    learns from them where the constraints hold."""
    if (
        rows
        and any(r["status"] == "out" for r in rows)
        and all(r["status"] in ("ok", "out") for r in rows)
        and all(r.get(k) is not None for r in rows for k in ("energy_pJ", "latency_cycles"))
        and rows[0].get("area_mm2") is not None
    ):
        return Broke(_sums(rows))
    return objectives(rows)


class _Evaluations:
    """Rows of positions, memoised (``memo``), evaluated in this process or in ``workers``
    processes; their points' notes (``notes``) gathered to be told once when the search ends."""

    def __init__(self, sweep: Sweep, cache: str | Path, workers: int):
        self._held = Evaluations(
            functools.partial(_position_with_notes, sweep, cache=str(cache), parsed={}), workers
        )
        self.notes = SweepNotes()

    def __enter__(self) -> _Evaluations:
        self._held.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._held.__exit__(*exc)
        self.notes.tell()

    @property
    def memo(self) -> dict[tuple[int, ...], list[dict]]:
        """The rows of every position evaluated so far."""
        return {position: rows for position, (rows, _) in self._held.memo.items()}

    def __call__(self, positions) -> list[list[dict]]:
        new = [p for p in dict.fromkeys(map(tuple, positions)) if p not in self._held.memo]
        values = self._held(positions)
        for position in new:
            self.notes.merge(SweepNotes.from_dict(self._held.memo[position][1]))
        return [rows for rows, _ in values]


# ----- variation ----------------------------------------------------------------------------------


def _mutate(genes: list[int], sizes: tuple[int, ...], rng: random.Random) -> None:
    movable = [i for i, n in enumerate(sizes) if n > 1]
    chosen = [i for i in movable if rng.random() < 1 / len(movable)] or [rng.choice(movable)]
    for i in chosen:
        if rng.random() < 0.5:
            step = rng.choice((-1, 1))
            genes[i] = genes[i] + step if 0 <= genes[i] + step < sizes[i] else genes[i] - step
        else:
            genes[i] = rng.choice([v for v in range(sizes[i]) if v != genes[i]])


def _child(population: list[Individual], sizes, seen: set, rng: random.Random) -> Individual:
    if rng.random() < CROSSOVER_PROBABILITY:
        a, b = rng.sample(population, 2)
        child = _candidate(x if rng.random() < 0.5 else y for x, y in zip(a, b))
    else:
        child = _candidate(rng.choice(population))
        _mutate(child, sizes, rng)
    for _ in range(RETRIES):
        if tuple(child) not in seen:
            break
        _mutate(child, sizes, rng)
    seen.add(tuple(child))
    return child


def _initial(sizes, count: int, seen: set, rng: random.Random) -> list[Individual]:
    population = []
    while len(population) < count:
        candidate = _candidate(rng.randrange(n) for n in sizes)
        if tuple(candidate) in seen and len(seen) < _grid_size(sizes):
            continue
        seen.add(tuple(candidate))
        population.append(candidate)
    return population


def _grid_size(sizes) -> int:
    size = 1
    for n in sizes:
        size *= n
    return size


# ----- the search ---------------------------------------------------------------------------------


def search(
    sweep: Sweep,
    budget: SearchBudget,
    cache: str | Path,
    *,
    progress=None,
    screen=None,
    screen_charge: float | None = None,
) -> SearchResult:
    """NSGA-II over the sweep's grid within ``budget``; ``progress(generation, front_size)``
    is called after every generation. ``screen(position)``: False for a position the guided
    search must not evaluate, as it cannot run (by default, with ``budget.screen``, the
    feasibility screen's verdict, :class:`zigzag.sweep.guided_screen.Screen`), each question
    to it charged ``screen_charge`` evaluations of the budget (by default
    :data:`SCREEN_CHARGE` with a screen, 0 without)."""
    sizes = axis_sizes(sweep.spec)
    grid = _grid_size(sizes)
    if not any(n > 1 for n in sizes):
        raise InputError(
            sweep.spec.source, "search", "the sweep varies nothing; give vary, zip or fragments"
        )
    if budget.method == "guided":
        if screen is None and budget.screen:
            screen = Screen(sweep, cache).passes
        if screen_charge is None:
            screen_charge = SCREEN_CHARGE if screen is not None else 0.0
        return _guided(sweep, budget, cache, sizes, progress, screen, screen_charge)
    rng = random.Random(budget.seed)
    seen: set[tuple[int, ...]] = set()
    with _Evaluations(sweep, cache, budget.workers) as evaluations:
        front, generation = nsga2_loop(
            _initial(sizes, min(budget.population, grid), seen, rng),
            budget.generations,
            budget.population,
            lambda candidates: [objectives(rows) for rows in evaluations(candidates)],
            lambda population: [
                _child(population, sizes, seen, rng) for _ in range(budget.population)
            ],
            exhausted=lambda: len(seen) >= grid,
            on_generation=lambda g, f: progress(g, len(f)) if progress and g else None,
        )
        memo = evaluations.memo
    rows = [row for position in sorted(memo) for row in memo[position]]
    positions = sorted({tuple(c) for c in front if c.fitness.values[0] < WORST})
    return SearchResult(
        rows, [front_row(sweep, memo[p]) for p in positions], len(memo), grid, generation
    )


def _guided(
    sweep: Sweep, budget: SearchBudget, cache, sizes, progress, screen, screen_charge: float
) -> SearchResult:
    """The surrogate-guided search within the same budget (population x (generations + 1) evaluations)."""
    batches = []
    with _Evaluations(sweep, cache, budget.workers) as evaluations:

        def run(positions: list[tuple[int, ...]]) -> list[tuple[float, float, float]]:
            values = [measured(rows) for rows in evaluations(positions)]
            batches.append(len(positions))
            if progress and len(batches) > 1:
                progress(len(batches) - 1, len(_front_positions(evaluations.memo)))
            return values

        guided_search(
            sizes,
            run,
            budget.population * (budget.generations + 1),
            budget.population,
            budget.seed,
            screen=screen,
            screen_charge=screen_charge,
        )
        memo = evaluations.memo
    rows = [row for position in sorted(memo) for row in memo[position]]
    return SearchResult(
        rows,
        [front_row(sweep, memo[p]) for p in _front_positions(memo)],
        len(memo),
        _grid_size(sizes),
        len(batches) - 1,
    )


def _front_positions(memo: dict) -> list[tuple[int, ...]]:
    """The evaluated positions no other one dominates (energy, latency, area), sorted."""
    values = {p: objectives(rows) for p, rows in memo.items()}
    ok = {p: v for p, v in values.items() if v[0] < WORST}
    return sorted(p for p, keep in zip(ok, non_dominated(list(ok.values()))) if keep)


def front_row(sweep: Sweep, rows: list[dict]) -> dict:
    """A variant's row of the search front: identity, parameters, summed energy and latency, area."""
    keys = ("sweep", "variant", "variant_id", *sweep.spec.varied_names)
    row = {k: rows[0][k] for k in keys if k in rows[0]}
    energy, latency, area = objectives(rows)
    row.update(
        {
            "workload": "+".join(r["workload"] for r in rows),
            "status": "ok",
            "reason": "",
            "energy_pJ": energy,
            "latency_cycles": latency,
            "area_mm2": area,
        }
    )
    return row


def write_search(
    sweep: Sweep,
    result: SearchResult,
    output: str | Path,
    *,
    plot_format: str = "png",
    float_format: str = "%.10g",
) -> dict[str, Path]:
    """The search's tables and figures in ``output``: the usual sweep tables over the evaluated
    variants (variants.csv, pareto.csv, best.csv, plots/), plus ``search_front.csv`` and
    ``plots/search_front.<fmt>`` (the front over the summed objectives) and ``search.json``."""
    from zigzag.sweep.figures import plot_pareto_projections

    output = Path(output)
    collect(
        sweep,
        [dict(r) for r in result.rows],
        output,
        plot_format=plot_format,
        float_format=float_format,
    )
    front, _ = split_details([dict(r) for r in result.front])
    front = tables.mark_fronts(front)
    paths = {
        "front": output / "search_front.csv",
        "figure": output / "plots" / f"search_front.{plot_format}",
        "stats": output / "search.json",
    }
    write_text_atomic(paths["front"], csv_text(front, float_format=float_format))
    plot_pareto_projections(front, paths["figure"], constraints=[c.text for c in sweep.constraints])
    write_json_atomic(
        paths["stats"],
        {
            "evaluations": result.evaluations,
            "grid_size": result.grid_size,
            "generations": result.generations,
            "front_size": len(result.front),
        },
    )
    return paths
