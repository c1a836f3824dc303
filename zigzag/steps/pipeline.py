"""The workflow's per-experiment steps after parsing, in the order of ZigZag's stage list.

* :func:`split_layers` (ZigZag's WorkloadStage): from the parsed workload and accelerator,
  decide the accelerator each layer is searched on (trimmed per layer with data locality); write
  the experiment's *jobs* (one per distinct layer, ``zigzag.mapping_search.jobs``) and its ``plan.json``
  (layer -> key, the keys not in the result store yet and the chunks sharing them, inputs'
  SHA-256, versions).
* :func:`evaluate_chunk`: one chunk of those keys searched into the result store
  (:mod:`zigzag.mapping_search.result_store`; chunks: :mod:`zigzag.steps.chunks`).
* :func:`sum_experiment` (SumStage): the cached per-layer results in processing order and the
  network totals, in one ``results.json``.
* :func:`save_experiment` (the save stages): ``summary.json``, the tables, per-layer JSON and
  ``experiment.json``.
* :func:`compare_experiments`: the cross-experiment tables.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from pathlib import Path

from zigzag import __version__
from zigzag.cost.json_forms import complete_json
from zigzag.cost.result import CostResult, sum_results
from zigzag.errors import InputError
from zigzag.io import tables
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.io.run_files import file_stem, summary, write_run_folder
from zigzag.io.sealed import read_step_file, write_sealed
from zigzag.io.validation import check_mapping_fits_accelerator, oversized_unrollings
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.capacity import check_capacity
from zigzag.mapping_search.jobs import MODEL_VERSION, job_key, layer_job
from zigzag.mapping_search.network import NetworkResult
from zigzag.mapping_search.result_store import ResultStore
from zigzag.steps.chunks import chunk_keys, chunk_names, planned_chunks
from zigzag.steps.failures import failure_in
from zigzag.steps.parse import parsed_layers, parsed_workload, read_parsed
from zigzag.steps.specs import ExperimentSpec, experiment_of
from zigzag.tokens import per_token_figures
from zigzag.tokens.columns import bound_columns
from zigzag.workload.workload import build_layer
from zigzag.mapping_search.network import plan_network


def split_layers(
    experiment: ExperimentSpec | dict,
    workload_file: str | Path,
    accelerator_file: str | Path,
    cache: str | Path | None,
    plan_path: str | Path,
    jobs_path: str | Path | None = None,
) -> dict:
    """Write the experiment's layer jobs (to ``jobs_path``, default :func:`jobs_file`; none
    without a cache), then its plan; returns the plan."""
    experiment = ExperimentSpec.of(experiment)
    workload_doc, accelerator_doc = read_parsed(workload_file), read_parsed(accelerator_file)
    inherited = failure_in(workload_doc) or failure_in(accelerator_doc)
    if inherited is not None:  # parsing failed: pass its record on (and plan no jobs)
        plan = {"experiment": experiment.to_dict(), "failed": inherited}
        if cache is not None:
            write_sealed(jobs_path or jobs_file(cache, experiment.name), {"jobs": {}})
        write_sealed(plan_path, plan)
        return plan
    check_mapping_fits_accelerator(
        workload_doc["mapping_entries"], accelerator_doc["data"], workload_doc["mapping"]["path"]
    )
    # unrollings larger than the array are cut down (as in ZigZag): said once, kept as notes
    cut_down = [
        f"{workload_doc['mapping']['path']}: {note}"
        for note in oversized_unrollings(workload_doc["mapping_entries"], accelerator_doc["data"])
    ]
    for note in cut_down:
        logging.getLogger(__name__).warning(note)
    accelerator = accelerator_from_dict(accelerator_doc["data"])
    inference = workload_doc.get("inference")
    # a latency model left auto: bandwidth_bound for an LLM step (recorded in the plan's experiment)
    options = experiment.options.resolved(bool(inference))
    experiment = dataclasses.replace(experiment, options=options)
    if options.exploit_data_locality:  # the graph decides each layer's trimmed accelerator
        workload = parsed_workload(workload_doc)
        layers = workload.layers
        network = plan_network(layers, accelerator, options, workload=workload)
    else:
        layers = parsed_layers(workload_doc)
        network = plan_network(layers, accelerator, options)
    if inference:  # the whole step must fit the memories holding it
        check_capacity(
            layers,
            network.accelerators,
            inference,
            source=f"experiment '{experiment.name}': accelerator '{accelerator.name}'",
        )
    entries, jobs = [], {}
    for layer, layer_accelerator in network.layers:
        job = layer_job(layer, layer_accelerator, options)
        key = job_key(job)
        jobs.setdefault(key, {**job, "label": experiment.name, "layer_name": layer.name})
        entries.append(
            {
                "id": layer.id,
                "name": layer.name,
                "operator_type": layer.operator_type,
                "key": key,
                "spec": layer.to_spec(),
            }
        )
    note = network.note
    uncosted = list(network.uncosted)
    plan = {
        "experiment": experiment.to_dict(),
        # the user's accelerator name: with data locality each layer's job holds a trimmed copy
        # named '<name>-removing-nouse-mem' (as ZigZag names it), which the tables do not show
        "inputs": {
            "workload": workload_doc["workload"],
            "accelerator": {**accelerator_doc["accelerator"], "name": accelerator.name},
            "mapping": workload_doc["mapping"],
        },
        "package_version": __version__,
        "model_version": MODEL_VERSION,
        "notes": workload_doc.get("notes", []) + cut_down + ([note] if note else []),
        "layers": entries,
        "uncosted": uncosted,
    }
    if workload_doc.get("inference"):  # an LLM step: its per-token figures are computed by save
        plan["inference"] = workload_doc["inference"]
    if cache is not None:  # the jobs first: a plan on disk means its jobs are there
        store = ResultStore(Path(cache))
        plan["to_compute"] = [key for key in jobs if store.read(key) is None]
        plan["chunks"] = planned_chunks(len(plan["to_compute"]))
        write_sealed(jobs_path or jobs_file(cache, experiment.name), {"jobs": jobs})
    write_sealed(plan_path, plan)
    return plan


def jobs_file(cache: str | Path, name: str) -> Path:
    """Where the cache keeps the layer jobs of experiment ``name`` (key -> job)."""
    return Path(cache) / "layer-jobs" / f"{name}.json"


def read_jobs(cache: str | Path, name: str) -> dict[str, dict]:
    """The layer jobs of experiment ``name`` (key -> job)."""
    return read_step_file(jobs_file(cache, name))["jobs"]


def evaluate_chunk(
    plan_path: str | Path, cache: str | Path, chunk: str, output: str | Path
) -> dict:
    """Search chunk ``chunk`` (``"{i}of{n}"``) of the plan's keys not stored yet into the result
    store; write ``output`` (the chunk's keys, those searched here, those no mapping fits);
    returns its content. A layer no mapping fits is stored as a failure record and said in one
    ``error:`` line naming the experiment; the step itself succeeds."""
    plan = read_step_file(plan_path)
    keys = chunk_keys(plan.get("to_compute", []), chunk)
    jobs = read_jobs(cache, experiment_of(plan).name) if keys else {}
    store = ResultStore(Path(cache))
    searched, failed = [], []
    for key in keys:
        data, now = store.evaluate(key, jobs[key], jobs[key].get("label"))
        if now:
            searched.append(key)
        if failure_in(data):
            failed.append(key)
            if now:  # said once, where it was found, as the error line of a failed step
                print(f"error: {data['failed']['reason']}", file=sys.stderr)
    document = {"keys": keys, "searched": searched, "failed": failed}
    write_sealed(output, document)
    return document


def stored_result(store: ResultStore, key: str, job: dict) -> dict:
    """The checked data of a layer's stored result; one that is missing or damaged is said in
    one warning naming it, never used, and computed again from its job."""
    data = store.read(key)
    if data is None:
        logging.getLogger(__name__).warning(
            "%s is missing or damaged; computed again from its job", store.path(key)
        )
        data, _ = store.evaluate(key, job, job.get("label"))
    return data


def plan_keys(plan_path: str | Path) -> list[str]:
    """The distinct job keys of a plan, in layer order."""
    plan = read_step_file(plan_path)
    return list(dict.fromkeys(layer["key"] for layer in plan.get("layers", [])))


def load_plan_results(plan: dict, cache: str | Path) -> list:
    """(plan layer entry, its result with the layer's own id and name and the user's accelerator
    name) in processing order."""
    store = ResultStore(Path(cache))
    jobs = read_jobs(cache, experiment_of(plan).name)
    user_accelerator = plan["inputs"]["accelerator"].get(
        "name"
    )  # absent from plans of older versions
    names = {"accelerator_name": user_accelerator} if user_accelerator else {}
    loaded = {}
    results = []
    for entry in plan["layers"]:
        key = entry["key"]
        if key not in loaded:
            data = stored_result(store, key, jobs[key])
            loaded[key] = CostResult.from_dict(data["result"])
        result = dataclasses.replace(
            loaded[key], layer_id=entry["id"], layer_name=entry["name"], **names
        )
        results.append((entry, result))
    return results


def sum_experiment(plan_path: str | Path, cache: str | Path, out_path: str | Path) -> dict:
    """Gather the experiment's layer results and their network sum into ``results.json``; an
    experiment whose parsing, split or a layer failed gets the (first) failure record instead."""
    plan = read_step_file(plan_path)
    name = experiment_of(plan).name
    failed = plan.get("failed")
    if failed is None:
        store, jobs = ResultStore(Path(cache)), read_jobs(cache, name)
        failed = next(
            filter(None, (failure_in(stored_result(store, k, jobs[k])) for k in jobs)), None
        )
    if failed is not None:
        document = {
            "experiment": plan["experiment"],
            "failed": failed,
            "total": {"experiment": name, "failed": failed},
        }
        write_sealed(out_path, document)
        return document["total"]
    rows = load_plan_results(plan, cache)
    total = sum_results([result for _, result in rows])
    document = {
        **{key: plan[key] for key in ("experiment", "inputs", "package_version", "model_version")},
        "total": {
            "experiment": name,
            **summary(total, len(rows), plan.get("uncosted", [])),
        },
        "notes": plan.get("notes", []),
        "layers": [{**entry, "result": result.to_dict()} for entry, result in rows],
    }
    if plan.get("inference"):
        document["inference"] = plan["inference"]
    write_sealed(out_path, document)
    return document["total"]


def read_results(path: str | Path) -> tuple[dict, list]:
    """A ``results.json`` and its (layer entry, CostResult) pairs."""
    try:
        document = read_step_file(path)
    except FileNotFoundError:
        raise InputError(
            str(path), "", "file not found (run the experiment's sum step first)"
        ) from None
    return document, [
        (entry, CostResult.from_dict(entry["result"])) for entry in document.get("layers", [])
    ]


def save_failed_experiment(document: dict, out_dir: Path) -> dict:
    """The outputs of ``save`` for an experiment that did not run: its row (status ``failed``,
    the reason), empty layer tables, and its summary and experiment files with the failure."""
    experiment = document["experiment"]  # its JSON form, as the tables read it
    row = tables.failed_experiment_row(experiment, document["failed"])
    tables.write_csv(out_dir / "summary.csv", [row])
    for name in ("layers.csv", "memory_levels.csv"):
        write_text_atomic(out_dir / name, "")
    write_text_atomic(
        out_dir / "layers.html",
        tables.html_table(
            [], f"{experiment_of(document).name}: not run ({document['failed']['reason']})"
        ),
    )
    (out_dir / "layers").mkdir(parents=True, exist_ok=True)
    summary = document["total"]
    write_json_atomic(out_dir / "summary.json", summary)
    write_json_atomic(
        out_dir / "experiment.json", {"experiment": experiment, "failed": document["failed"]}
    )
    return summary


def save_experiment(
    results_path: str | Path, cache: str | Path, out_dir: str | Path, *, float_format: str = "%.10g"
) -> dict:
    """Write summary.json, summary.csv, layers.csv (and its HTML view), memory_levels.csv,
    layers/<layer>.json and experiment.json from ``results.json``; returns the summary."""
    out_dir = Path(out_dir)
    document, rows = read_results(results_path)
    if "failed" in document:
        return save_failed_experiment(document, out_dir)
    experiment = experiment_of(document)
    accelerators, layers = {}, []
    jobs = read_jobs(cache, experiment.name) if rows else {}
    for entry, result in rows:
        if entry["key"] not in accelerators:
            accelerators[entry["key"]] = accelerator_from_dict(jobs[entry["key"]]["accelerator"])
        layer = build_layer(entry["spec"], [MappingEntry.from_dict(entry["spec"]["mapping"])])
        layers.append((layer, accelerators[entry["key"]]))
        details = complete_json(result, layer, accelerators[entry["key"]])
        write_json_atomic(
            out_dir / "layers" / f"{file_stem(entry['name'])}.json",
            {**details, "result": entry["result"]},
        )
    results = [result for _, result in rows]
    area_unit = next((a.area_unit for a in accelerators.values()), None)
    row = tables.experiment_row(
        document["experiment"],
        results,
        sum_results(results),
        area_unit,
        document["total"].get("uncosted_layers", []),
    )
    figures = _per_token(document, layers, results) if document.get("inference") else None
    per_token = None if figures is None else figures.to_dict()
    if figures is not None:
        row.update({k: per_token[k] for k in tables.TOKEN_COLUMNS})
        row["dram_bound_ratio"] = per_token["dram"]["ratio"] if per_token["dram"] else None
        row.update(bound_columns(figures))
    tables.write_csv(out_dir / "summary.csv", [row], float_format=float_format)
    summary = {
        **document["total"],
        "edp": row["edp_pJ_cycles"],
        "area": row["area_um2"],
        **({"inference": document["inference"], "per_token": per_token} if per_token else {}),
    }
    layer_rows = write_run_folder(
        out_dir, rows, summary, notes=document.get("notes", []), float_format=float_format
    )
    write_text_atomic(
        out_dir / "layers.html", tables.html_table(layer_rows, f"{experiment.name}: layers")
    )
    ident = tables.identity(document["experiment"], row["accelerator"])
    tables.write_csv(
        out_dir / "memory_levels.csv",
        tables.memory_level_rows(ident, rows, accelerators),
        float_format=float_format,
    )
    reproducible = {
        key: document[key] for key in ("experiment", "inputs", "package_version", "model_version")
    }
    write_json_atomic(out_dir / "experiment.json", reproducible)
    return {**summary, "notes": document.get("notes", [])}


def _per_token(document: dict, layers: list, results: list):
    """The per-token figures of an LLM step's experiment (docs/models/per-token.md; in cycles: the
    workflow's experiments have no clock)."""
    pairs = [(layer, result) for (layer, _), result in zip(layers, results)]
    network = NetworkResult(
        pairs,
        sum_results(results),
        {layer.id: acc for layer, acc in layers},
        document["total"].get("uncosted_layers", []),
        inference=document["inference"],
        latency_model=experiment_of(document).options.latency_model,
    )
    return per_token_figures(network)


def compare_experiments(experiment_dirs: list[str | Path], out_dir: str | Path) -> str:
    """``experiments.csv`` (and its HTML view), ``layers.csv`` and ``memory_levels.csv`` of all
    experiments (the saved per-experiment tables, concatenated); returns a one-line description."""
    out_dir = Path(out_dir)
    summaries, layers, levels = [], [], []
    for folder in map(Path, experiment_dirs):
        summaries.append(tables.read_csv(folder / "summary.csv")[0])
    for line in tables.distinct_accelerator_names(summaries):
        logging.getLogger(__name__).warning(line)
    for folder, row in zip(map(Path, experiment_dirs), summaries):
        if row.get("status", "ok") != "ok":  # did not run: no layer tables
            continue
        ident = {key: row[key] for key in tables.IDENTITY}
        layers.append((ident, tables.read_csv(folder / "layers.csv")))
        levels.append(({}, tables.read_csv(folder / "memory_levels.csv")))
    tables.write_csv(out_dir / "experiments.csv", summaries)
    write_text_atomic(out_dir / "experiments.html", tables.html_table(summaries, "Experiments"))
    tables.write_csv(out_dir / "layers.csv", tables.concatenated(layers))
    tables.write_csv(out_dir / "memory_levels.csv", tables.concatenated(levels))
    failed = sum(row.get("status", "ok") != "ok" for row in summaries)
    return f"{len(summaries)} experiments compared" + (f" ({failed} did not run)" if failed else "")


def plan_chunks(plan_path: str | Path) -> list[str]:
    """The names of a plan's chunks (``1of2``, ...; none when every layer is stored already)."""
    return chunk_names(read_step_file(plan_path).get("chunks", 0))
