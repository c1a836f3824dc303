"""Experiments from a workflow config: explicit ones and sweep grids (GeneralParameterIterator's role).

A resolved experiment is a plain dict::

    {"name": ..., "workload": path, "accelerator": path, "mapping": path,
     "evaluate_all_operators": bool, "options": {every SearchOptions field}}
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_if_changed
from zigzag.io.tables import FIGURES, IDENTITY, input_id
from zigzag.search.options import OPTION_BY_NAME, resolve_options
from zigzag.steps.config_keys import check_unknown_keys

FILE_KEYS = ("workload", "accelerator", "mapping")
#: the workflow config's JSON schema (Snakefile validates against it too)
CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


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
    for experiment in experiments:
        for key in FILE_KEYS:
            if not Path(experiment[key]).exists():
                raise InputError(
                    "config",
                    f"experiment '{experiment['name']}'.{key}",
                    f"file {experiment[key]} does not exist; fix the path",
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


def validate_config(
    config: dict, schema_path: str | Path = CONFIG_SCHEMA, *, passed_dir: str | Path | None = None
) -> None:
    """Check a workflow config against its JSON schema; the first problem as a one-line InputError.
    Unknown keys come first, named by their place and the closest known key (see
    :mod:`zigzag.steps.config_keys`).

    ``passed_dir``: a folder remembering the configs that passed (a file named by a hash of the
    config and the schema), so an unchanged config is not checked again at every ``snakemake``
    start (importing jsonschema alone takes 60 ms)."""
    schema_text = Path(schema_path).read_text()
    key = hashlib.sha256(
        f"{json.dumps(config, sort_keys=True, default=str)}\0{schema_text}".encode()
    ).hexdigest()[:32]
    stamp = Path(passed_dir) / key if passed_dir is not None else None
    if stamp is not None and stamp.exists():
        return
    from zigzag.io.yaml_files import load_yaml

    schema = load_yaml(schema_path)
    check_unknown_keys(config, schema)
    import jsonschema

    errors = jsonschema.Draft202012Validator(schema).iter_errors(config)
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        raise InputError(
            "config", _config_path(error.absolute_path) or "top level", _config_message(error)
        )
    if stamp is not None:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()


def _config_path(path) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if text else str(key)
    return text


def _config_message(error) -> str:
    """What is wrong with one config value and how to fix it, in a line."""
    value = error.instance
    if error.validator == "enum":
        return f"{value!r} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f"'{missing}' is missing; add {missing}: ..."
    if error.validator == "type":
        kind = error.validator_value
        kind = " or ".join(kind) if isinstance(kind, list) else str(kind)
        article = "an" if kind[:1] in "aeiou" else "a"
        return f"{value!r} is not of type {kind}; give {article} {kind}"
    if error.validator == "pattern":
        return f"{value!r} does not match {error.validator_value}; use letters, digits and _ . + - only"
    if error.validator == "anyOf" and not error.absolute_path:
        return "no experiment defined; add an entry under 'experiments', 'sweeps', 'multicore_experiments' or 'hardware_sweeps'"
    if error.validator == "minItems":
        return "the list is empty; give at least one entry"
    if error.validator == "oneOf":
        return f"{value!r} is neither a file path nor a non-empty list of file paths; give one of those"
    return " ".join(error.message.split())


def expand_experiments(config: dict, *, passed_dir: str | Path | None = None) -> list[dict]:
    """All resolved experiments of a workflow config (checked against its schema, see
    :func:`validate_config` for ``passed_dir``), names unique."""
    validate_config(config, passed_dir=passed_dir)
    defaults = config.get("defaults") or {}
    experiments = [
        resolve_experiment(spec, defaults, f"experiments[{i}]")
        for i, spec in enumerate(config.get("experiments") or [])
    ]
    for i, sweep in enumerate(config.get("sweeps") or []):
        experiments += [
            resolve_experiment(spec, defaults, f"sweeps[{i}] ({spec['name']})")
            for spec in expand_sweep(sweep, f"sweeps[{i}]")
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
    if (
        not experiments
        and not config.get("multicore_experiments")
        and not config.get("stream_experiments")  # its alias
        and not config.get("hardware_sweeps")
    ):
        raise InputError(
            "config",
            "experiments",
            "no experiment defined; add an entry under 'experiments', 'sweeps', 'multicore_experiments' or 'hardware_sweeps'",
        )
    return experiments


#: What a parsed workload depends on (the last two only with the operator model on).
WORKLOAD_KEYS = ("workload", "mapping", "evaluate_all_operators", "operators", "causal_blocks")


def workload_id(experiment: dict) -> str:
    """Id of the experiment's parsed workload: one per (workload, mapping, workload options); the
    operator model's options count only when it is on, so ZigZag-mode ids stay as they were."""
    model = (
        [experiment["operators"], experiment["causal_blocks"]]
        if experiment.get("operators", "zigzag") != "zigzag"
        else []
    )
    return input_id(
        f"{Path(experiment['workload']).stem}@{Path(experiment['mapping']).stem}",
        experiment["workload"],
        experiment["mapping"],
        experiment["evaluate_all_operators"],
        *model,
    )


def accelerator_id(experiment: dict) -> str:
    """Id of the experiment's parsed accelerator: one per accelerator file."""
    return input_id(Path(experiment["accelerator"]).stem, experiment["accelerator"])


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


def read_experiment_spec(path: str | Path) -> dict:
    """The resolved experiment written by :func:`write_experiment_spec`."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(
            path, None, "experiment file not found (it is written by the Snakefile)"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
