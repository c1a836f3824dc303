"""The guided hardware search against the full grids it searches: hypervolume share per seed.

Usage:  python benchmarks/bench_hw_search.py [--spaces infeasible168 alexnet200 ...] [--seeds 0 1 ... 9]
                                             [--methods guided nsga2] [--workers 2] [--grids DIR]
                                             [--subgrids N] [--subgrid-draw D] [--no-screen]
                                             [--scalar-screen] [--screen-charge C]

The spaces (benchmarks/hw_search_spaces.py) are sweeps of the TPU-like example of different shapes:
the AlexNet space the first search was tuned on, one with a large infeasible region (buffers too small
for MobileNetV2), one with a structural parameter (a memory level present or absent), one over two
workloads at once, and the spaces added to check the search on what it was not built on (a
transformer block, a depthwise-heavy network with structural axes, most of a grid infeasible, a
small budget). Each grid is evaluated whole (in ``--workers`` processes), or read from ``--grids``
where an earlier run stored it (keyed by a hash of the space's definition and the files it reads;
``--fresh`` evaluates again), then searched once per seed and method with the space's budget,
``population x (generations + 1)`` evaluations (at most 20 % of the grid), through
``zigzag.sweep.hardware_search.search`` reading the grid's rows. Printed per space, method and seed:
evaluations (share of the grid), infeasible ones among them, the front size, and the hypervolume
of the search's front as a share of the grid front's (the searches read the grid's evaluated
rows, so their seconds are the search's own work). Objectives are scaled to [0, 1] between the
grid's best and worst variant that runs; the reference point is 1.1 in each. The last lines say
whether the target is met: every seed of the guided search at least 95 % with at most 20 % of the
grid's evaluations, on every space.

The guided search asks the feasibility screen (``zigzag.sweep.guided_screen``; ``--no-screen``:
without it) about each variant before it evaluates it. Per space the benchmark first screens the
whole grid and checks it against the grid's rows (a rejected variant that ran would be printed as
SCREEN WRONG; with ``--scalar-screen`` it is screened again with the scalar allocator alone, the
screen before its batched walk, and a verdict that differs is printed), then prints per seed the
variants the search asked the screen about and the screen's CPU seconds as evaluation-equivalents
(over the CPU seconds of one evaluation, measured on three runnable variants evaluated afresh),
and the evaluations with and without that cost: ``cold``, each search with an empty store of
verdicts (its first search over these structures), and ``kept``, the same variants screened with
the verdicts the space's earlier seeds left in the store (``zigzag.sweep.guided_store``: seed 0
starts empty), as later searches over the same structures pay, and per question (the largest of
the seeds). ``--screen-charge C`` charges each question to the screen C evaluations of the
search's budget (by default ``zigzag.sweep.hardware_search.SCREEN_CHARGE``), so the evaluations it
prints are fewer than the budget where it screened; the sub-grid searches charge theirs the same.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hw_search_spaces import REPO, SPACES  # noqa: E402

TARGET_SHARE = 0.95
TARGET_BUDGET = 0.20
_SWEEP = None


def _init(section: dict) -> None:
    global _SWEEP
    logging.disable(logging.WARNING)
    from zigzag.sweep import read_sweep

    _SWEEP = read_sweep(section)


def _evaluate(job: tuple) -> list[dict]:
    from zigzag.sweep.hardware_search import evaluate_position

    position, cache = job
    return evaluate_position(_SWEEP, position, cache, {})


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()[0]:.2f}"


def _key(section: dict) -> str:
    """A hash of the space's definition and of the files it reads (hardware, mapping, workloads)."""
    text = json.dumps(section, sort_keys=True).replace(str(REPO), "")
    digest = hashlib.sha256(text.encode())
    for path in sorted({section["base"], section["mapping"], *section["workloads"]}):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def grid_rows(name: str, section: dict, positions: list, workers: int, store: Path, fresh: bool):
    """Each position's rows: read from ``store`` when an earlier run kept this grid, else evaluated."""
    path = store / f"{name}-{_key(section)}.json"
    if path.exists() and not fresh:
        kept = json.loads(path.read_text())
        return {tuple(p): rows for p, rows in kept}, None
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ProcessPoolExecutor(workers, initializer=_init, initargs=(section,)) as pool,
    ):
        jobs = [(p, str(Path(tmp) / "cache")) for p in positions]
        rows = dict(zip(positions, pool.map(_evaluate, jobs, chunksize=1)))
    seconds = time.perf_counter() - started
    store.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([[list(p), r] for p, r in rows.items()], default=str))
    return rows, seconds


def _subgrid_check(
    label: str,
    rows: dict,
    seeds: list,
    index: int,
    draw: int = 0,
    excluded=frozenset(),
    charge: float | None = None,
) -> float:
    """The guided search (``guided_search`` on the stored objectives) on a random sub-grid of a
    grid: each axis keeps two thirds or more of its values, chosen with ``random.Random(index)``
    (draw 0) or ``random.Random(f"{draw}/{index}")`` (another draw of sub-grids);
    batches of 4, 5, 6 or 8 (fewer when two would not fit) within 20 % of the sub-grid; the grid
    positions in ``excluded`` (the feasibility screen's verdicts over the grid) are rejected by
    the sub-grid search's screen too; a variant out of the sweep's constraints is told with its
    measured objectives (``hardware_search.measured``), as the search is; each question to the
    screen is charged ``charge`` evaluations of the budget (by default the search's,
    ``hardware_search.SCREEN_CHARGE``). Prints and returns the worst seed."""
    import math
    import random

    from zigzag.sweep.guided import INFEASIBLE, guided_search
    from zigzag.sweep.guided_constraints import Broke
    from zigzag.sweep.hypervolume import hypervolume, normalised
    from zigzag.sweep.hardware_search import SCREEN_CHARGE, measured, objectives

    values = {p: tuple(min(v, INFEASIBLE) for v in objectives(r)) for p, r in rows.items()}
    outcomes = {p: measured(r) for p, r in rows.items()}  # what the search is told
    sizes = [max(p[a] for p in values) + 1 for a in range(len(next(iter(values))))]
    rng = random.Random(index if draw == 0 else f"{draw}/{index}")
    keep = [sorted(rng.sample(range(n), rng.randint(max(1, (2 * n + 2) // 3), n))) for n in sizes]
    sub = {
        q: values[tuple(k[i] for k, i in zip(keep, q))]
        for q in itertools.product(*(range(len(k)) for k in keep))
    }
    told = {q: outcomes[tuple(k[i] for k, i in zip(keep, q))] for q in sub}
    shape = tuple(len(k) for k in keep)
    asked = []

    def screen(q) -> bool:  # the whole grid's verdicts, read
        asked.append(q)
        return tuple(k[i] for k, i in zip(keep, q)) not in excluded

    batch = min(rng.choice([4, 5, 6, 8]), math.prod(shape) // 10)  # two batches or more
    budget = math.prod(shape) // 5 // batch * batch
    ok = [v for v in sub.values() if v[0] < INFEASIBLE]
    lower = [min(v[i] for v in ok) for i in range(3)]
    upper = [max(v[i] for v in ok) for i in range(3)]
    reference = (1.1, 1.1, 1.1)
    whole = hypervolume(normalised(ok, lower, upper), reference)
    shares = []
    for seed in seeds:
        found = guided_search(
            shape,
            lambda ps: [told[p] if isinstance(told[p], Broke) else sub[p] for p in ps],
            budget,
            batch,
            seed,
            screen=screen if excluded else None,
            screen_charge=(SCREEN_CHARGE if charge is None else charge) if excluded else 0.0,
        )
        mine = [v for v in found.values() if v[0] < INFEASIBLE]
        shares.append(hypervolume(normalised(mine, lower, upper), reference) / whole)
    print(
        f"  sub-grid {label} {shape} ({len(sub) - len(ok)} of {len(sub)} cannot run; "
        f"{len(asked) / len(seeds):.1f} screened per seed), "
        f"{budget} evaluations in batches of {batch}: "
        + ", ".join(f"{100 * s:.1f}" for s in shares)
    )
    return min(shares)


def screen_check(
    sweep, rows: dict, positions: list, evaluate_position, scalar: bool = False
) -> tuple:
    """The feasibility screen over the whole grid: the positions it rejects, checked against the
    grid (every one must have failed there), its CPU seconds, and the CPU seconds of one
    evaluation (the mean of three runnable variants, each evaluated afresh in this process after
    a fourth has paid the one-time costs). With ``scalar``, the grid is screened again with the
    scalar allocator alone (``ZIGZAG_EVAL=scalar``, the screen before its batched walk), whose
    verdicts must be the same."""
    import random

    from zigzag.sweep.guided_screen import Screen
    from zigzag.sweep.hardware_search import WORST, objectives

    screen = Screen(sweep)
    rejected = screen.failing(positions)
    failed = {p for p, r in rows.items() if objectives(r)[0] >= WORST}
    wrong = sorted(rejected - failed)
    runnable = sorted(set(rows) - failed)
    sample = random.Random(0).sample(runnable, min(4, len(runnable)))
    with tempfile.TemporaryDirectory() as tmp:
        evaluate_position(sweep, sample[0], str(Path(tmp) / "warm"), {})  # one-time costs
        started = time.process_time()
        for p in sample[1:]:
            evaluate_position(sweep, p, str(Path(tmp) / f"cache{p}"), {})
        per_evaluation = (time.process_time() - started) / max(len(sample) - 1, 1)
    print(
        f"  screen of the whole grid: rejects {len(rejected)} of the {len(failed)} variants that "
        f"cannot run ({len(failed) - len(rejected & failed)} failures it cannot see), "
        f"{len(wrong)} runnable ones wrongly; {screen.seconds:.2f} CPU s = "
        f"{screen.seconds / per_evaluation:.1f} evaluations of {per_evaluation:.2f} CPU s "
        "(the search screens only the variants it is about to pick)"
    )
    if wrong:
        print(f"  SCREEN WRONG on {wrong[:5]}")
    if scalar:
        from unittest import mock

        with mock.patch.dict(os.environ, {"ZIGZAG_EVAL": "scalar"}):
            alone = Screen(sweep)
            differ = [p for p in positions if alone.reason(p) != screen.reason(p)]
        print(
            f"  the scalar allocator's screen: {alone.seconds:.2f} CPU s = "
            f"{alone.seconds / per_evaluation:.1f} evaluations, verdicts "
            + (f"DIFFER on {differ[:5]} ({len(differ)})" if differ else "the same")
        )
        wrong = wrong or differ
    return rejected, per_evaluation, bool(wrong)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spaces", nargs="+", default=list(SPACES), choices=list(SPACES))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument(
        "--methods", nargs="+", default=["guided", "nsga2"], choices=["guided", "nsga2"]
    )
    parser.add_argument("--workers", type=int, default=2)
    default_store = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument(
        "--grids",
        type=Path,
        default=default_store / "zigzag-flow" / "hw_search_grids",
        help="folder keeping the evaluated grids between runs",
    )
    parser.add_argument("--fresh", action="store_true", help="evaluate the grids again")
    parser.add_argument(
        "--subgrids",
        type=int,
        default=0,
        help="also search this many random sub-grids of each grid (a held-out check, guided only)",
    )
    parser.add_argument(
        "--subgrid-draw",
        type=int,
        default=0,
        help="which draw of random sub-grids (0: the first; another number: a fresh set)",
    )
    parser.add_argument(
        "--no-screen",
        action="store_true",
        help="search without the feasibility screen (zigzag/sweep/guided_screen.py)",
    )
    parser.add_argument(
        "--scalar-screen",
        action="store_true",
        help="also screen each whole grid with the scalar allocator alone (ZIGZAG_EVAL=scalar) "
        "and compare the verdicts",
    )
    parser.add_argument(
        "--screen-charge",
        type=float,
        default=None,
        help="evaluations of the budget one question to the screen costs (default: the search's, "
        "zigzag.sweep.hardware_search.SCREEN_CHARGE)",
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    import zigzag.sweep.hardware_search as searching
    from zigzag.sweep import read_sweep
    from zigzag.sweep.config import read_budget
    from zigzag.sweep.guided_screen import Screen
    from zigzag.sweep.hypervolume import hypervolume, normalised
    from zigzag.sweep.hardware_search import WORST, objectives
    from zigzag.variants import axis_sizes

    print(f"machine: {os.cpu_count()} cores; {_uptime()}")
    summary, held, screens = [], [], []
    evaluate_position = searching.evaluate_position
    for name in args.spaces:
        section, budget = SPACES[name]
        sweep = read_sweep(section)
        positions = list(itertools.product(*(range(n) for n in axis_sizes(sweep.spec))))
        searching.evaluate_position = evaluate_position  # the grid itself is evaluated for real
        rows, seconds = grid_rows(name, section, positions, args.workers, args.grids, args.fresh)
        grid = [objectives(r) for r in rows.values()]
        ok = [p for p in grid if p[0] < WORST]
        excluded, per_evaluation = set(), 0.0
        if not args.no_screen:
            excluded, per_evaluation, wrong = screen_check(
                sweep, rows, positions, evaluate_position, args.scalar_screen
            )
            screens.append((name, wrong))
        # the searches read the grid's rows: what is compared is the choice of variants, not their evaluation
        searching.evaluate_position = lambda sweep, position, cache, parsed, rows=rows, notes=None: (
            rows[tuple(position)]
        )
        lower = [min(p[i] for p in ok) for i in range(3)]
        upper = [max(p[i] for p in ok) for i in range(3)]
        reference = (1.1, 1.1, 1.1)
        grid_hv = hypervolume(normalised(ok, lower, upper), reference)
        evaluations = budget["population"] * (budget["generations"] + 1)
        how = "read from --grids" if seconds is None else f"evaluated in {seconds:.1f} s"
        print(
            f"\n{name}: {len(positions)} variants ({len(positions) - len(ok)} infeasible), axes "
            f"{axis_sizes(sweep.spec)}, grid {how}; budget {evaluations} evaluations "
            f"({100 * evaluations / len(positions):.1f} %), population {budget['population']}"
        )
        if seconds is not None:
            print(f"  {_uptime()}")
        print(
            f"{'method':>7} {'seed':>4} {'evals':>5} {'infeasible':>10} {'front':>5} {'hv share':>8} "
            f"{'seconds':>7} {'screened':>8} {'screen, evaluations: cold':>25} {'kept':>5}"
        )
        kept_store = tempfile.TemporaryDirectory()  # verdicts kept across this space's seeds
        for method in args.methods:
            shares, spent, costs, kept_costs, per_question = [], [], [], [], []
            for seed in args.seeds:
                started = time.perf_counter()
                fresh_store = tempfile.TemporaryDirectory()
                screen = Screen(sweep, fresh_store.name)  # an empty store: its cost is the search's
                asked = []

                def passes(position, screen=screen, asked=asked):
                    asked.append(position)
                    return screen.passes(position)

                given = {**budget, "seed": seed, "method": method, "workers": 1}
                result = searching.search(
                    sweep,
                    read_budget({**given, "screen": not args.no_screen}, name),
                    "unused",
                    screen=None if args.no_screen else passes,
                    screen_charge=args.screen_charge,
                )
                took = time.perf_counter() - started
                fresh_store.cleanup()
                cost = screen.seconds / per_evaluation if per_evaluation else 0.0
                kept = Screen(sweep, kept_store.name)  # the same variants, verdicts kept
                assert [kept.passes(p) for p in asked] == [screen.passes(p) for p in asked]
                kept_cost = kept.seconds / per_evaluation if per_evaluation else 0.0
                kept_costs.append(kept_cost)
                if asked:
                    per_question.append((cost / len(asked), kept_cost / len(asked)))
                points = [
                    (r["energy_pJ"], r["latency_cycles"], r["area_mm2"]) for r in result.front
                ]
                share = hypervolume(normalised(points, lower, upper), reference) / grid_hv
                shares.append(share)
                spent.append(result.evaluations / len(positions))
                costs.append(cost)
                failed = len({r["variant"] for r in result.rows if r["status"] != "ok"})
                print(
                    f"{method:>7} {seed:>4} {result.evaluations:>5} {failed:>10} {len(result.front):>5} "
                    f"{100 * share:>7.1f}% {took:>7.1f} {len(asked):>8} {cost:>25.2f} "
                    f"{kept_cost:>5.2f}"
                )
            print(f"  {method} per seed: " + ", ".join(f"{100 * s:.1f}" for s in shares))
            total = max(e + c / len(positions) for e, c in zip(spent, costs))
            # after the first search (seed 0 starts with an empty store)
            later = list(zip(spent, kept_costs))[1:] or list(zip(spent, kept_costs))
            total_kept = max(e + c / len(positions) for e, c in later)
            summary.append((name, method, shares, max(spent), total, total_kept))
            if not args.no_screen and method == "guided":
                print(
                    f"  {method}: at most {100 * max(spent):.1f} % of the grid's evaluations, "
                    f"{100 * max(s * len(positions) + c for s, c in zip(spent, costs)) / len(positions):.1f} % "
                    "with the screen's CPU counted as evaluations (at most "
                    f"{max(costs):.1f} evaluations), {100 * total_kept:.1f} % with the verdicts "
                    f"earlier seeds kept (at most {max(c for _, c in later):.1f}, seeds after the first)"
                )
                if per_question:
                    print(
                        "  screen per question, evaluations: cold at most "
                        f"{max(c for c, _ in per_question):.3f} (mean "
                        f"{sum(c for c, _ in per_question) / len(per_question):.3f}), kept at most "
                        f"{max(k for _, k in per_question[1:] or per_question):.3f} (seeds after "
                        "the first)"
                    )
        kept_store.cleanup()
        for index in range(args.subgrids):
            label = f"{name}/{args.subgrid_draw}/{index}"
            held.append(
                _subgrid_check(
                    label, rows, args.seeds, index, args.subgrid_draw, excluded, args.screen_charge
                )
            )
    print(
        "\nspace, method: hypervolume share over the seeds (min, mean), largest share of the grid"
    )
    for name, method, shares, spent, _, _ in summary:
        print(
            f"  {name:>18} {method:>7}: min {100 * min(shares):.1f} %, "
            f"mean {100 * sum(shares) / len(shares):.1f} %, evaluations <= {100 * spent:.1f} %"
        )
    guided = [(n, s, e) for n, m, s, e, _, _ in summary if m == "guided"]
    if guided:
        met = all(min(s) >= TARGET_SHARE and e <= TARGET_BUDGET for _, s, e in guided)
        print(
            f"target (guided, every seed >= {100 * TARGET_SHARE:.0f} % with <= "
            f"{100 * TARGET_BUDGET:.0f} % of the grid, every space): {'MET' if met else 'NOT MET'}"
        )
        if not args.no_screen:
            for label, at in (
                ("an empty store", 4),
                ("the verdicts earlier seeds kept (seeds after the first)", 5),
            ):
                totals = [row[at] for row in summary if row[1] == "guided"]
                counted = all(
                    min(row[2]) >= TARGET_SHARE and row[at] <= TARGET_BUDGET
                    for row in summary
                    if row[1] == "guided"
                )
                print(
                    f"  with the screen's CPU counted as evaluations, {label}: "
                    + ("MET" if counted else "NOT MET")
                    + f" (at most {100 * max(totals):.1f} % of the grid)"
                )
        for n, s, e in guided:
            if min(s) < TARGET_SHARE or e > TARGET_BUDGET:
                print(f"  missed on {n}: min {100 * min(s):.1f} %, evaluations {100 * e:.1f} %")
    if held:
        print(
            f"sub-grids (held-out check): worst seed {100 * min(held):.1f} %, mean of the worst "
            f"seeds {100 * sum(held) / len(held):.1f} %, {sum(h < TARGET_SHARE for h in held)} "
            f"of {len(held)} with a seed under {100 * TARGET_SHARE:.0f} %"
        )
    if screens:
        wrong = [n for n, w in screens if w]
        print(
            "feasibility screen over every grid: wrongly rejected a runnable variant"
            + (" or differed from the scalar allocator's" if args.scalar_screen else "")
            + ": "
            + (f"YES on {', '.join(wrong)}" if wrong else "never")
        )
    print(f"machine now: {_uptime()}")


if __name__ == "__main__":
    sys.exit(main())
