#!/usr/bin/env python3
"""Our allocation search's front against many runs of Stream's genetic algorithm.

Stream's GA is unseeded, so one recorded run says little about the next. This script replays it
as docs/models/multi-core.md#allocation-search describes — DEAP's ``eaMuPlusLambda`` (mu = individuals / 2, lambda =
individuals, crossover 0.3, mutation 0.7), ``cxOrdered`` above 10 genes, its point-or-swap
mutation, ``selNSGA2``, a ``ParetoFront`` — on *our* fitness, which equals Stream's on every
point of the recorded fronts (checked here first), with ``random`` seeded 0, 1, ... per run.
Replay ``s`` is compared with the recorded run seeded ``s``
(``tests/data/stream/reference_ga_front_<mode>*.json``, which seeded ``random`` the same way).
Then our search (same budget, ``--seeds``) runs and the script prints, per seed, our front and
how many replayed Stream fronts dominate at least one of its points, and the best points Stream
reached over all replays.

Case: ResNet-18 on the TPU-like quad core with the flexible mapping, ``lbl`` and ``fused``
(stacks ``0-10;11-21``), as ``bench_allocation.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from deap import algorithms, base, tools

from zigzag.multicore.allocation import dominated_share, nsga2

from bench_allocation import REPO, build

RECORDED = REPO / "tests" / "data" / "stream"


class _Fitness(base.Fitness):
    weights = (-1.0, -1.0)


class _Individual(list):
    def __init__(self, cores=()):
        super().__init__(cores)
        self.fitness = _Fitness()


def stream_ga_front(
    problem, individuals: int, generations: int, seed: int, memo: dict
) -> list[tuple[float, float]]:
    """The front of one replay of Stream's GA (docs/models/multi-core.md#allocation-search) seeded ``seed``, on ``problem``'s fitness."""
    valid = [g.cores for g in problem.genes]
    size = len(valid)

    def evaluate(ind):
        key = tuple(ind)
        if key not in memo:
            memo[key] = problem.fitness(key)
        return memo[key]

    def mutate(ind):
        if random.random() < 0.75:
            for k in range(size):
                if random.random() < 1 / size:
                    ind[k] = random.choice(sorted(set(valid[k]) - {ind[k]}))
        else:
            i, j = random.sample(range(size), 2)
            ind[i], ind[j] = ind[j], ind[i]
        return (ind,)

    toolbox = base.Toolbox()
    toolbox.register("evaluate", evaluate)
    toolbox.register("mate", tools.cxOrdered if size > 10 else tools.cxTwoPoint)
    toolbox.register("mutate", mutate)
    toolbox.register("select", tools.selNSGA2)
    random.seed(seed)
    population = [_Individual(random.choice(cores) for cores in valid) for _ in range(individuals)]
    front = tools.ParetoFront()
    algorithms.eaMuPlusLambda(
        population,
        toolbox,
        mu=individuals // 2,
        lambda_=individuals,
        cxpb=0.3,
        mutpb=0.7,
        ngen=generations,
        halloffame=front,
        verbose=False,
    )
    return [tuple(ind.fitness.values) for ind in front]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="lbl,fused")
    parser.add_argument(
        "--replays", type=int, default=20, help="replays of Stream's GA (seeds 0..n-1)"
    )
    parser.add_argument("--seeds", default="0", help="our search's seeds, comma-separated")
    parser.add_argument("--individuals", type=int, default=16)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument(
        "--cache", default=str(REPO / "results" / ".cache"), help="cost-table cache"
    )
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores)")
    for mode in args.modes.split(","):
        problem = build(mode, args.cache).problem
        recorded = [
            json.loads(path.read_text())
            for path in sorted(RECORDED.glob(f"reference_ga_front_{mode}*.json"))
        ]
        for point in (p for run in recorded for p in run["front"]):
            cores = [point["allocation"][f"{g.layer}:{g.group}"] for g in problem.genes]
            if problem.fitness(cores) != (point["energy"], point["latency"]):
                raise SystemExit(
                    f"[{mode}] our fitness differs from Stream's on a recorded point; "
                    "replays would mean nothing"
                )
        memo: dict = {}
        begin = time.perf_counter()
        replays = [
            stream_ga_front(problem, args.individuals, args.generations, s, memo)
            for s in range(args.replays)
        ]
        print(
            f"[{mode}] {args.replays} replays of Stream's GA in {time.perf_counter() - begin:.0f} s"
        )
        for run in recorded:
            seed = run["case"]["seed"]
            if seed < len(replays):
                same = sorted(replays[seed]) == sorted(
                    (p["energy"], p["latency"]) for p in run["front"]
                )
                print(
                    f"[{mode}] replay {seed} {'equals' if same else 'differs from'} the recorded run seeded {seed}"
                )
        best_energy = min(min(r) for r in replays)
        best_latency = min(min(r, key=lambda p: p[1]) for r in replays)
        print(
            f"[{mode}] Stream over all replays: lowest energy {best_energy[0]:.6g} pJ ({best_energy[1]:.6g} cycles), "
            f"lowest latency {best_latency[1]:.6g} cycles ({best_latency[0]:.6g} pJ)"
        )
        for seed in (int(s) for s in args.seeds.split(",")):
            front, stats = nsga2(problem, args.individuals, args.generations, seed=seed)
            ours = [(p.energy, p.latency) for p in front]
            beaten = sum(dominated_share(ours, r) > 0 for r in replays)
            print(
                f"[{mode}] ours, seed {seed}: {stats.evaluations} schedules, front "
                + ", ".join(f"({e:.6g}, {lat:.6g})" for e, lat in sorted(set(ours)))
                + f"; replays dominating one of its points: {beaten} of {len(replays)}"
            )


if __name__ == "__main__":
    main()
