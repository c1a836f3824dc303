"""The workflow's file-level steps: plan an experiment, evaluate one layer job, collect results.

* ``plan_experiment``: parse workload + mapping + accelerator, decide the accelerator each layer
  is searched on, and write one *job* per distinct layer into a content-addressed cache
  (``<cache>/jobs/<key>.json``; the key hashes everything that determines the result), plus the
  experiment's ``plan.json`` (layer -> key, input hashes, package version).
* ``evaluate_job``: search one job's layer; write ``<cache>/results/<key>.json``.
* ``collect_experiment``: per-experiment outputs from the plan and the cached results.

Identical layers (same shape, precisions, mapping entry, accelerator and options) share a key,
so they are evaluated once across layers and experiments; a job file is never rewritten.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from zigzag import __version__
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.io.loaders import accelerator_from_dict, accelerator_to_dict, load_inputs
from zigzag.mapping.entry import MappingEntry
from zigzag.search.layer_search import search_layer
from zigzag.search.network import evaluated_layers, layer_accelerators
from zigzag.search.options import SearchOptions
from zigzag.workload.layer import Layer
from zigzag.workload.workload import build_layer

#: Bump when a change to the model or the search changes results: it invalidates cached results.
MODEL_VERSION = 1


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def layer_job(layer: Layer, accelerator: Accelerator, options: SearchOptions) -> dict:
    """Everything that determines a layer's search result (nothing else)."""
    return {
        "model_version": MODEL_VERSION,
        "layer": layer.signature(),
        "accelerator": accelerator_to_dict(accelerator),
        "options": options.to_dict(),
    }


def job_key(job: dict) -> str:
    text = json.dumps(job, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def layer_from_job(job: dict) -> Layer:
    signature = job["layer"]
    entry = MappingEntry.from_dict({**signature["mapping"], "name": "default"})
    name = job.get("layer_name", "layer")
    return build_layer({**signature, "id": 0, "name": name, "operand_source": {}}, [entry])


def plan_experiment(experiment: dict, cache: str | Path, plan_path: str | Path) -> dict:
    """Write the experiment's layer jobs (if new) and its plan; returns the plan."""
    cache = Path(cache)
    options = SearchOptions(**experiment["options"])
    workload, accelerator = load_inputs(
        experiment["workload"],
        experiment["accelerator"],
        experiment["mapping"],
        evaluate_all_operators=experiment["evaluate_all_operators"],
    )
    per_layer_accelerator = layer_accelerators(workload, accelerator, options)
    layers = []
    for layer in evaluated_layers(workload, accelerator):
        job = layer_job(layer, per_layer_accelerator[layer.id], options)
        key = job_key(job)
        job_path = cache / "jobs" / f"{key}.json"
        if not job_path.exists():
            write_json_atomic(job_path, {**job, "label": experiment["name"], "layer_name": layer.name})
        layers.append({"id": layer.id, "name": layer.name, "operator_type": layer.operator_type, "key": key,
                       "spec": layer.to_spec()})
    plan = {
        "experiment": experiment,
        "inputs": {k: {"path": experiment[k], "sha256": file_digest(experiment[k])}
                   for k in ("workload", "accelerator", "mapping")},
        "package_version": __version__,
        "model_version": MODEL_VERSION,
        "layers": layers,
    }
    write_json_atomic(plan_path, plan)
    return plan


def evaluate_job(job_path: str | Path, result_path: str | Path, *, show_progress: bool | None = None) -> CostResult:
    """Search one job's layer and write its best result."""
    job = json.loads(Path(job_path).read_text())
    layer = layer_from_job(job)
    accelerator = accelerator_from_dict(job["accelerator"])
    best, stats = search_layer(layer, accelerator, SearchOptions(**job["options"]), show_progress=show_progress)
    write_json_atomic(result_path, {"result": best.to_dict(), "stats": dataclasses.asdict(stats)})
    return best


def plan_keys(plan_path: str | Path) -> list[str]:
    """The distinct job keys of a plan, in layer order."""
    plan = json.loads(Path(plan_path).read_text())
    return list(dict.fromkeys(layer["key"] for layer in plan["layers"]))


def load_plan_results(plan: dict, cache: str | Path) -> list[tuple[dict, CostResult]]:
    """(plan layer entry, its result with the layer's own id and name) in processing order."""
    cache = Path(cache)
    loaded: dict[str, CostResult] = {}
    results = []
    for entry in plan["layers"]:
        key = entry["key"]
        if key not in loaded:
            loaded[key] = CostResult.from_dict(json.loads((cache / "results" / f"{key}.json").read_text())["result"])
        results.append((entry, dataclasses.replace(loaded[key], layer_id=entry["id"], layer_name=entry["name"])))
    return results


def collect_experiment(plan_path: str | Path, cache: str | Path, out_dir: str | Path, *, float_format: str = "%.10g") -> dict:
    """Write summary.json, layers.csv, layers/<layer>.json and experiment.json; returns the summary."""
    from zigzag.cost.result import sum_results
    from zigzag.io.results import complete_json, file_stem, layer_table, summary

    out_dir = Path(out_dir)
    plan = json.loads(Path(plan_path).read_text())
    rows = load_plan_results(plan, cache)
    for entry, result in rows:
        job = json.loads((Path(cache) / "jobs" / f"{entry['key']}.json").read_text())
        layer = build_layer(entry["spec"], [MappingEntry.from_dict(entry["spec"]["mapping"])])
        details = complete_json(result, layer, accelerator_from_dict(job["accelerator"]))
        write_json_atomic(out_dir / "layers" / f"{file_stem(entry['name'])}.json", {**details, "result": result.to_dict()})
    write_text_atomic(out_dir / "layers.csv", layer_table(rows).to_csv(index=False, float_format=float_format))
    totals = {"experiment": plan["experiment"]["name"], **summary(sum_results([r for _, r in rows]), len(rows))}
    write_json_atomic(out_dir / "summary.json", totals)
    reproducible = {key: plan[key] for key in ("experiment", "inputs", "package_version", "model_version")}
    write_json_atomic(out_dir / "experiment.json", reproducible)
    return totals


def compare_experiments(summary_paths: list[str | Path], out_csv: str | Path) -> str:
    """One CSV row per experiment with its totals; returns a one-line description."""
    import pandas as pd

    rows = [json.loads(Path(p).read_text()) for p in summary_paths]
    write_text_atomic(out_csv, pd.DataFrame.from_records(rows).to_csv(index=False))
    return f"{len(rows)} experiments compared"
