"""The workflow's steps called as functions, in rule order, without Snakemake."""

from __future__ import annotations

from pathlib import Path

from support import reference_input


def gemm_experiment(name: str, accelerator: str, **options) -> dict:
    """An experiment of the reference's gemm layer on one of its gemm accelerators."""
    return {
        "name": name,
        "workload": reference_input("workload", "gemm_layer.yaml"),
        "accelerator": reference_input("hardware", f"{accelerator}.yaml"),
        "mapping": reference_input("mapping", f"{accelerator}.yaml"),
        "lpf_limit": 3,
        **options,
    }


def run_steps(config: dict, results: Path) -> Path:
    """Every step of the workflow, as functions, in rule order, as the Snakefile's rules call them
    (no Snakemake)."""
    from zigzag.steps.experiments import accelerator_id, expand_experiments, workload_id
    from zigzag.steps.parse import parse_accelerator, parse_workload
    from zigzag.steps.pipeline import (
        compare_experiments,
        evaluate_chunk,
        plan_chunks,
        save_experiment,
        split_layers,
        sum_experiment,
    )

    cache = results / ".cache"
    folders = []
    for experiment in expand_experiments(config):
        workload = cache / "parsed" / "workloads" / f"{workload_id(experiment)}.json"
        accelerator = cache / "parsed" / "accelerators" / f"{accelerator_id(experiment)}.json"
        parse_workload(
            experiment["workload"],
            experiment["mapping"],
            workload,
            operators=experiment["operators"],
            causal_blocks=experiment["causal_blocks"],
        )
        parse_accelerator(experiment["accelerator"], accelerator)
        folder = results / experiment["name"]
        split_layers(experiment, workload, accelerator, cache, folder / "plan.json")
        for chunk in plan_chunks(folder / "plan.json"):
            evaluate_chunk(folder / "plan.json", cache, chunk, cache / "chunks" / f"{chunk}.json")
        sum_experiment(folder / "plan.json", cache, folder / "results.json")
        save_experiment(folder / "results.json", cache, folder)
        folders.append(folder)
    compare_experiments(folders, results)
    return results
