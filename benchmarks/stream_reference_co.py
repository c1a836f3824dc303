"""Run the reference Stream's constraint-optimisation allocation and record each steady state's model.

Run with the reference's interpreter (Stream ed4e12e, zigzag-dse 3.8.0, gurobipy with its pip
licence, which limits a model to 2,000 variables and constraints), from a folder laid out like
``tests/data/reference/stream`` (Stream finds core files relative to the working directory)::

    cd <copy of tests/data/reference/stream>
    PYTHONHASHSEED=0 PYTHONPATH=<stream source> <stream venv>/bin/python stream_reference_co.py \\
        '{"hardware": H, "workload": W, "mapping": M, "mode": "fused", "layer_stacks": [[0, 1, 2]]}' out.json

It calls ``stream.api.optimize_allocation_co`` unchanged. At run time it only wraps the solver
function to record, for every layer stack, the model's inputs (node ids as Stream numbers them,
``1000 * layer + sub id``; per (node, core, split) latencies; weights; dependencies; capacities;
groups; iterations) and its answer (objective value, allocation as ``(slot, core, node)``), and
the final schedule's latency and energy.
"""

from __future__ import annotations

import json
import logging
import sys
import time

import gurobipy as gp

import stream.api
import stream.opt.allocation.constraint_optimization.allocation as co

SEEN: dict = {"stacks": []}


def _record(original):
    def solve(
        latencies,
        energies,
        weights_per_id,
        dependencies,
        core_capacities,
        groups,
        possible_allocation_splits,
        N=1,
        gap=0.5,
        time_limit=600,
    ):
        record = {
            "latencies": [[n, c, k, v] for (n, c, k), v in sorted(latencies.items())],
            "energies": [[n, c, v] for (n, c), v in sorted(energies.items())],
            "weights": {str(k): v for k, v in weights_per_id.items()},
            "dependencies": sorted([list(d) for d in dependencies]),
            "capacities": dict(core_capacities),
            "groups": {str(k): list(v) for k, v in groups.items()},
            "splits": {
                str(n): {c: {str(k): v for k, v in ks.items()} for c, ks in cs.items()}
                for n, cs in possible_allocation_splits.items()
            },
            "iterations": N,
        }
        SEEN["stacks"].append(record)
        begin = time.perf_counter()
        allocation = original(
            latencies,
            energies,
            weights_per_id,
            dependencies,
            core_capacities,
            groups,
            possible_allocation_splits,
            N,
            gap=gap,
            time_limit=time_limit,
        )
        record["seconds"] = time.perf_counter() - begin
        record["objective"] = SEEN.pop("objective")
        record["status"] = SEEN.pop("status")
        record["allocation"] = [list(a) for a in allocation]
        return allocation

    return solve


def _keep_objective(original):
    def optimize(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        SEEN["objective"] = self.ObjVal if self.SolCount else None
        SEEN["status"] = int(self.Status)
        return result

    return optimize


def main() -> None:
    logging.disable(logging.CRITICAL)
    case = json.loads(sys.argv[1])
    SEEN["case"] = case
    try:
        run(case)
    finally:
        with open(sys.argv[2], "w") as handle:
            json.dump(SEEN, handle, indent=1)


def run(case: dict) -> None:
    co.constraint_allocation_optimization = _record(co.constraint_allocation_optimization)
    gp.Model.optimize = _keep_objective(gp.Model.optimize)
    begin = time.perf_counter()
    scme = stream.api.optimize_allocation_co(
        hardware=case["hardware"],
        workload=case["workload"],
        mapping=case["mapping"],
        mode=case["mode"],
        layer_stacks=[tuple(s) for s in case.get("layer_stacks") or []] or None,
        experiment_id=case.get("experiment_id", "co"),
        output_path=case.get("output_path", "outputs"),
    )
    SEEN["seconds"] = time.perf_counter() - begin
    SEEN["latency"] = scme.latency
    SEEN["energy"] = scme.energy


if __name__ == "__main__":
    main()
