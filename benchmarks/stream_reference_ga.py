"""Run the reference Stream's genetic allocation search and write its whole Pareto front as JSON.

Run with the reference's interpreter, from a folder laid out like ``tests/data/reference/stream``
(Stream finds core files relative to the working directory)::

    cd <copy of tests/data/reference/stream>
    PYTHONHASHSEED=0 PYTHONPATH=/work/ref/stream /work/ref/stream-venv/bin/python stream_reference_ga.py \\
        '{"hardware": H, "workload": W, "mapping": M, "mode": "fused", "layer_stacks": [[0, 1], [2]],
          "individuals": 16, "generations": 8, "seed": 0, "cost_lut_path": "lut.pickle"}' out.json

It calls ``stream.api.optimize_allocation_ga`` unchanged after seeding ``random`` and
``numpy.random``; the GA's ``run`` is wrapped at run time only to keep the hall of fame (the front)
it returns, and the stage to learn the gene order (``layer_groups_flexible``). Written: the front
(energy, latency, allocation as ``"layer:group" -> core``), the number of fitness evaluations, and
the seconds spent in the search (``ga_seconds``) and in the whole call (``seconds``).
"""

from __future__ import annotations

import json
import logging
import random
import sys
import tempfile
import time

import numpy as np

import stream.api
from stream.opt.allocation.genetic_algorithm.fitness_evaluator import StandardFitnessEvaluator
from stream.opt.allocation.genetic_algorithm.genetic_algorithm import GeneticAlgorithm

SEEN: dict = {"evaluations": 0}


def _record_run(original):
    def run(self):
        SEEN["genes"] = [list(lg) for lg in self.fitness_evaluator.layer_groups_flexible]
        SEEN["valid"] = [list(v) for v in self.valid_allocations]
        begin = time.perf_counter()
        pop, hof = original(self)
        SEEN["ga_seconds"] = time.perf_counter() - begin
        SEEN["front"] = [
            {
                "energy": ind.fitness.values[0],
                "latency": ind.fitness.values[1],
                "allocation": {
                    f"{lay}:{grp}": int(core) for (lay, grp), core in zip(SEEN["genes"], ind)
                },
            }
            for ind in hof
        ]
        return pop, hof

    return run


def _count(original):
    def get_fitness(self, *args, **kwargs):
        SEEN["evaluations"] += 1
        return original(self, *args, **kwargs)

    return get_fitness


def main() -> None:
    logging.disable(logging.CRITICAL)
    case = json.loads(sys.argv[1])
    GeneticAlgorithm.run = _record_run(GeneticAlgorithm.run)
    StandardFitnessEvaluator.get_fitness = _count(StandardFitnessEvaluator.get_fitness)
    random.seed(case.get("seed", 0))
    np.random.seed(case.get("seed", 0))
    with tempfile.TemporaryDirectory() as tmp:
        begin = time.perf_counter()
        scme = stream.api.optimize_allocation_ga(
            case["hardware"],
            case["workload"],
            case["mapping"],
            case["mode"],
            case.get("layer_stacks"),
            case["generations"],
            case["individuals"],
            "ga",
            case.get("output_path") or tmp,
        )
        seconds = time.perf_counter() - begin
    SEEN.update(seconds=seconds, chosen={"energy": scme.energy, "latency": scme.latency}, case=case)
    with open(sys.argv[2], "w") as handle:
        json.dump(SEEN, handle, indent=1)


if __name__ == "__main__":
    main()
