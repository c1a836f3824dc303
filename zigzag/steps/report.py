"""The workflow's reporting steps: per-experiment figures and the cross-experiment comparison.

* :func:`plot_experiment` reads an experiment's folder as ``collect`` left it (``plan.json`` and
  ``layers/<layer>.json``) and writes ``energy.<fmt>``, ``latency.<fmt>``, ``loop_nests.txt`` and
  ``memory_hierarchy.<fmt>``.
* :func:`plot_comparison` reads ``experiments.csv`` (one row per experiment) and writes the
  energy-latency scatter with its Pareto front, plus ``pareto.csv`` (the non-dominated rows).
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.io.atomic import write_text_atomic

#: plot formats the report steps accept (matplotlib writes them without extra packages)
PLOT_FORMATS = ("png", "svg", "pdf")

#: the files plot_experiment writes, by kind (``{fmt}`` is the plot format)
EXPERIMENT_PLOTS = {
    "energy": "energy.{fmt}",
    "latency": "latency.{fmt}",
    "loop_nests": "loop_nests.txt",
    "memory_hierarchy": "memory_hierarchy.{fmt}",
}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(str(path), "", "file not found (run the experiment's collect step first)") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"line {exc.lineno}", f"not valid JSON: {exc.msg}") from None


def _file_stem(layer_name: str) -> str:
    from zigzag.io.results import file_stem

    return file_stem(layer_name)


def load_experiment_layers(experiment_dir: str | Path) -> list[tuple[dict, CostResult]]:
    """``(layer JSON, its result)`` per layer of a collected experiment, in processing order.

    The order is the plan's when ``plan.json`` is there; otherwise the layer files sorted by
    their result's layer id.
    """
    experiment_dir = Path(experiment_dir)
    layers_dir = experiment_dir / "layers"
    plan_path = experiment_dir / "plan.json"
    if not plan_path.exists() and not layers_dir.is_dir():
        raise InputError(str(experiment_dir), "", "no plan.json or layers/ folder: not an experiment's results "
                                                  "folder (run its collect step first)")
    if plan_path.exists():
        plan = _read_json(plan_path)
        paths = list(dict.fromkeys(layers_dir / f"{_file_stem(entry['name'])}.json" for entry in plan["layers"]))
    else:
        paths = sorted(layers_dir.glob("*.json"))
    rows = []
    for path in paths:
        data = _read_json(path)
        if "result" not in data:
            raise InputError(str(path), "", "no 'result' entry (not a per-layer file written by collect)")
        rows.append((data, CostResult.from_dict(data["result"])))
    if not plan_path.exists():
        rows.sort(key=lambda row: row[1].layer_id)
    if not rows:
        raise InputError(str(layers_dir), "", "no layer results found")
    return rows


def _layer_operand_order(experiment_dir: Path) -> dict[str, list[str]]:
    """Layer name -> layer operands in the mapping's memory_operand_links order (from the plan)."""
    plan_path = experiment_dir / "plan.json"
    if not plan_path.exists():
        return {}
    order = {}
    for entry in _read_json(plan_path)["layers"]:
        links = (entry.get("spec") or {}).get("mapping", {}).get("memory_operand_links")
        if links:
            order[entry["name"]] = list(links)
    return order


def experiment_accelerator(experiment_dir: str | Path, cache: str | Path | None = None) -> Accelerator:
    """The accelerator an experiment ran on.

    The exact accelerator of the first layer job in ``cache`` when it is there and the
    experiment did not trim the accelerator per layer (data locality); otherwise the
    experiment's accelerator file named in its plan.
    """
    from zigzag.io.loaders import accelerator_from_dict, load_accelerator

    experiment_dir = Path(experiment_dir)
    plan = _read_json(experiment_dir / "plan.json")
    experiment = plan.get("experiment", {})
    trimmed = experiment.get("options", {}).get("exploit_data_locality", False)
    if cache is not None and plan.get("layers") and not trimmed:
        job = Path(cache) / "jobs" / f"{plan['layers'][0]['key']}.json"
        if job.exists():
            return accelerator_from_dict(_read_json(job)["accelerator"])
    path = experiment.get("accelerator")
    if not path or not Path(path).exists():
        raise InputError(str(experiment_dir / "plan.json"), "experiment.accelerator",
                         f"accelerator file {path!r} not found and no cached layer job to read it from")
    return load_accelerator(path)


def _check_format(plot_format: str) -> str:
    fmt = plot_format.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise InputError("", "plot format", f"'{plot_format}' is not one of {', '.join(PLOT_FORMATS)}")
    return fmt


def plot_experiment(experiment_dir: str | Path, out_dir: str | Path, plot_format: str = "png", *,
                    cache: str | Path | None = None) -> dict[str, Path]:
    """Write an experiment's figures and loop nests into ``out_dir``; returns {kind: path}."""
    from zigzag import plots

    fmt = _check_format(plot_format)
    experiment_dir, out_dir = Path(experiment_dir), Path(out_dir)
    rows = load_experiment_layers(experiment_dir)
    results = [result for _, result in rows]
    name = experiment_dir.name
    outputs = {kind: out_dir / pattern.format(fmt=fmt) for kind, pattern in EXPERIMENT_PLOTS.items()}

    accelerator_name = results[0].accelerator_name
    plots.plot_energy_breakdown(results, outputs["energy"],
                                title=f"{name}: energy per layer on {accelerator_name}")
    plots.plot_latency_breakdown(results, outputs["latency"],
                                 title=f"{name}: latency per layer on {accelerator_name}")
    order = _layer_operand_order(experiment_dir)
    text = "".join(plots.loop_nest_text(result, order.get(result.layer_name)) for result in results)
    write_text_atomic(outputs["loop_nests"], text)
    plots.plot_memory_hierarchy(experiment_accelerator(experiment_dir, cache), outputs["memory_hierarchy"])
    return outputs


def plot_comparison(experiments_csv: str | Path, out_path: str | Path,
                    pareto_csv: str | Path | None = None) -> str:
    """Energy-latency comparison of all experiments and their Pareto front.

    Writes the figure to ``out_path`` and the non-dominated experiments to ``pareto_csv``
    (default: ``pareto.csv`` beside ``experiments_csv``). Returns a one-line description.
    """
    import pandas as pd

    from zigzag import plots

    experiments_csv = Path(experiments_csv)
    try:
        table = pd.read_csv(experiments_csv)
    except FileNotFoundError:
        raise InputError(str(experiments_csv), "", "file not found") from None
    missing = [c for c in ("experiment", "energy", "latency") if c not in table.columns]
    if missing:
        raise InputError(str(experiments_csv), "header", f"missing column(s) {', '.join(missing)}")
    pareto_csv = Path(pareto_csv) if pareto_csv is not None else experiments_csv.parent / "pareto.csv"
    front = plots.pareto_front(table)
    write_text_atomic(pareto_csv, front.to_csv(index=False))
    plots.plot_experiments_comparison(table, out_path)
    names = ", ".join(str(n) for n in front["experiment"])
    return f"{len(table)} experiments, Pareto front: {names}"
