"""Experiments from a workflow config: explicit ones and sweep grids (GeneralParameterIterator's role).

The config is read once into typed sections (:mod:`zigzag.config`); a resolved experiment is
the JSON its spec file holds (the wire format to its jobs, which read it into a frozen
:class:`zigzag.steps.specs.ExperimentSpec`)::

    {"name": ..., "workload": path, "accelerator": path, "mapping": path,
     "evaluate_all_operators": bool, "options": {every SearchOptions field}}
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_if_changed
from zigzag.io.tables import FIGURES, IDENTITY, input_id
from zigzag.mapping_search.options import OPTION_BY_NAME, resolve_options
from zigzag.steps.specs import ExperimentSpec

if TYPE_CHECKING:
    from zigzag.config import WorkflowConfig

FILE_KEYS = ("workload", "accelerator", "mapping")


def check_experiment_name(name, where: str) -> None:
    """An experiment name is a plain folder name under the results folder: letters, digits and
    ``_ . + -``, not starting with a dot (no ``.``, ``..``, hidden folder, slash or empty name)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*", name):
        raise InputError(
            "config",
            f"{where}.name",
            f"{name!r} is not a plain folder name; use letters, digits "
            "and _ . + - only, not starting with a dot",
        )


def check_input_files(experiments: list[dict]) -> None:
    """Every experiment's workload, accelerator and mapping file exists (checked before any job)."""
    for spec in map(ExperimentSpec.of, experiments):
        for key in FILE_KEYS:
            path = getattr(spec, key)
            if not Path(path).exists():
                raise InputError(
                    "config",
                    f"experiment '{spec.name}'.{key}",
                    f"file {path} does not exist; fix the path",
                )


def resolve_experiment(spec: dict, defaults: dict, where: str) -> dict:
    """One experiment with every option filled in (defaults < config defaults < experiment)."""
    merged = {**defaults, **spec}
    missing = [k for k in ("name", *FILE_KEYS) if k not in merged]
    if missing:
        raise InputError(
            "config",
            where,
            f"missing '{missing[0]}'; every experiment needs name, workload, accelerator and mapping",
        )
    check_experiment_name(merged["name"], where)
    try:
        options, workload_options = resolve_options(
            {k: v for k, v in merged.items() if k not in ("name", "parameters", *FILE_KEYS)}
        )
    except InputError as exc:
        raise InputError("config", f"{where}.{exc.where}", exc.message) from None
    experiment = {
        "name": str(merged["name"]),
        **{k: str(merged[k]) for k in FILE_KEYS},
        **workload_options,
        "options": options.to_dict(),
    }
    parameters = read_parameters(spec.get("parameters"), f"{where}.parameters")
    if parameters:
        experiment["parameters"] = parameters
    return experiment


def read_parameters(parameters, where: str) -> dict:
    """An experiment's named parameters (columns of experiments.csv): name -> number or text."""
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise InputError(
            "config", where, f"{parameters!r} is not a mapping; write e.g. {{sram_kib: 64}}"
        )
    reserved = {
        *IDENTITY,
        *FIGURES,
        *OPTION_BY_NAME,
        "layers",
        "status",
        "reason",
        "area_um2",
        "area_mm2",
    }
    for name, value in parameters.items():
        if str(name) in reserved:
            raise InputError(
                "config",
                f"{where}.{name}",
                "is a column of experiments.csv already; choose another name",
            )
        if not isinstance(value, (int, float, str, bool)):
            raise InputError("config", f"{where}.{name}", f"{value!r} is not a number or text")
    return {str(k): v for k, v in parameters.items()}


def expand_sweep(sweep: dict, where: str) -> list[dict]:
    """Every combination of a sweep's list-valued entries, named by its ``name`` pattern."""
    axes = {k: v if isinstance(v, list) else [v] for k, v in sweep.items() if k != "name"}
    pattern = sweep.get(
        "name", "-".join("{%s}" % k for k, v in sweep.items() if isinstance(v, list))
    )
    specs = []
    for values in itertools.product(*axes.values()):
        point = dict(zip(axes, values))
        labels = {k: Path(str(v)).stem if k in FILE_KEYS else v for k, v in point.items()}
        try:
            point = {k: v.format(**labels) if isinstance(v, str) else v for k, v in point.items()}
            if isinstance(
                point.get("parameters"), dict
            ):  # text parameters are patterns, as the name
                point["parameters"] = {
                    k: v.format(**labels) if isinstance(v, str) else v
                    for k, v in point["parameters"].items()
                }
            point["name"] = pattern.format(**labels)
        except KeyError as exc:
            raise InputError(
                "config", f"{where}.name", f"pattern names {exc} which the sweep does not set"
            ) from None
        specs.append(point)
    _check_distinct_names(specs, axes, pattern, where)
    return specs


def _check_distinct_names(specs: list[dict], axes: dict, pattern: str, where: str) -> None:
    """Two points of a sweep named alike: the pattern leaves out an axis they differ in."""
    first: dict[str, dict] = {}
    for spec in specs:
        other = first.setdefault(spec["name"], spec)
        if other is spec:
            continue
        differing = [k for k in axes if other.get(k) != spec.get(k)]
        differ = [k for k in differing if "{%s}" % k not in pattern]
        if not differing:
            raise InputError(
                "config",
                f"{where}",
                f"gives the point '{spec['name']}' twice (a value listed twice); name each value once",
            )
        if not differ:
            key = differing[0]
            raise InputError(
                "config",
                f"{where}.name",
                f"the pattern '{pattern}' names two points '{spec['name']}': their {key} differ "
                f"({other[key]}, {spec[key]}) but read alike in a name (a file by its stem); "
                "rename one of the files",
            )
        raise InputError(
            "config",
            f"{where}.name",
            f"the pattern '{pattern}' names two points '{spec['name']}' (they differ in "
            f"{', '.join(differ)}); add " + ", ".join("{%s}" % k for k in differ) + " to it",
        )


def expand_experiments(config: dict | WorkflowConfig) -> list[dict]:
    """All resolved single-core experiments of a workflow config (read once by
    :func:`zigzag.config.load_config` when a dict), names unique."""
    # read here, not at import: the jobs import this module and never read a config
    from zigzag.config import load_config
    from zigzag.config.check import NO_EXPERIMENT

    config = load_config(config)
    defaults = config.defaults.given()
    experiments = [
        resolve_experiment(spec.given(), defaults, f"experiments[{i}]")
        for i, spec in enumerate(config.experiments)
    ]
    for i, sweep in enumerate(config.sweeps):
        experiments += [
            resolve_experiment(spec, defaults, f"sweeps[{i}] ({spec['name']})")
            for spec in expand_sweep(sweep.given(), f"sweeps[{i}]")
        ]
    seen = set()
    for exp in experiments:
        if exp["name"] in seen:
            raise InputError(
                "config",
                f"experiment '{exp['name']}'",
                "name used twice; experiment names must be unique",
            )
        seen.add(exp["name"])
    if not experiments and not config.multicore_experiments and not config.hardware_sweeps:
        raise InputError("config", "experiments", NO_EXPERIMENT)
    return experiments


#: What a parsed workload depends on (the last two only with the operator model on).
WORKLOAD_KEYS = ("workload", "mapping", "evaluate_all_operators", "operators", "causal_blocks")


def workload_id(experiment: ExperimentSpec | dict) -> str:
    """Id of the experiment's parsed workload: one per (workload, mapping, workload options); the
    operator model's options count only when it is on, so ZigZag-mode ids stay as they were."""
    spec = ExperimentSpec.of(experiment)
    read = spec.workload_options
    model = (
        [read["operators"], read["causal_blocks"]]
        if read.get("operators", "zigzag") != "zigzag"
        else []
    )
    return input_id(
        f"{Path(spec.workload).stem}@{Path(spec.mapping).stem}",
        spec.workload,
        spec.mapping,
        read["evaluate_all_operators"],
        *model,
    )


def accelerator_id(experiment: ExperimentSpec | dict) -> str:
    """Id of the experiment's parsed accelerator: one per accelerator file."""
    accelerator = ExperimentSpec.of(experiment).accelerator
    return input_id(Path(accelerator).stem, accelerator)


def distinct_inputs(experiments: list[dict]) -> tuple[dict[str, dict], dict[str, str]]:
    """``({workload id: its workload, mapping and evaluate_all_operators}, {accelerator id: file})``."""
    workloads, accelerators = {}, {}
    for experiment in experiments:
        keys = (
            WORKLOAD_KEYS
            if experiment.get("operators", "zigzag") != "zigzag"
            else WORKLOAD_KEYS[:3]
        )
        workloads[workload_id(experiment)] = {k: experiment[k] for k in keys}
        accelerators[accelerator_id(experiment)] = experiment["accelerator"]
    return workloads, accelerators


def experiment_spec_text(experiment: dict) -> str:
    """The resolved experiment as its jobs read it (the content of its spec file)."""
    return json.dumps(experiment, sort_keys=True, indent=1) + "\n"


def write_experiment_spec(folder: str | Path, experiment: dict) -> str:
    """Write the resolved experiment to ``folder/<name>.json`` for its jobs to read, only if its
    content changed: the file's time stamp then tells Snakemake exactly when to rerun them."""
    return write_text_if_changed(
        Path(folder) / f"{experiment['name']}.json", experiment_spec_text(experiment)
    )
