"""Experiments from a workflow config: explicit ones and sweep grids (GeneralParameterIterator's role).

A resolved experiment is a plain dict::

    {"name": ..., "workload": path, "accelerator": path, "mapping": path,
     "evaluate_all_operators": bool, "options": {every SearchOptions field}}
"""

from __future__ import annotations

import itertools
from pathlib import Path

from zigzag.errors import InputError
from zigzag.search.options import resolve_options

FILE_KEYS = ("workload", "accelerator", "mapping")


def resolve_experiment(spec: dict, defaults: dict, where: str) -> dict:
    """One experiment with every option filled in (defaults < config defaults < experiment)."""
    merged = {**defaults, **spec}
    missing = [k for k in ("name", *FILE_KEYS) if k not in merged]
    if missing:
        raise InputError("config", where, f"missing '{missing[0]}'; every experiment needs name, workload, accelerator and mapping")
    try:
        options, workload_options = resolve_options({k: v for k, v in merged.items() if k not in ("name", *FILE_KEYS)})
    except InputError as exc:
        raise InputError("config", f"{where}.{exc.where}", exc.message) from None
    return {
        "name": str(merged["name"]),
        **{k: str(merged[k]) for k in FILE_KEYS},
        **workload_options,
        "options": options.to_dict(),
    }


def expand_sweep(sweep: dict, where: str) -> list[dict]:
    """Every combination of a sweep's list-valued entries, named by its ``name`` pattern."""
    axes = {k: v if isinstance(v, list) else [v] for k, v in sweep.items() if k != "name"}
    pattern = sweep.get("name", "-".join("{%s}" % k for k, v in sweep.items() if isinstance(v, list)))
    specs = []
    for values in itertools.product(*axes.values()):
        point = dict(zip(axes, values))
        labels = {k: Path(str(v)).stem if k in FILE_KEYS else v for k, v in point.items()}
        try:
            point = {k: v.format(**labels) if isinstance(v, str) else v for k, v in point.items()}
            point["name"] = pattern.format(**labels)
        except KeyError as exc:
            raise InputError("config", f"{where}.name", f"pattern names {exc} which the sweep does not set") from None
        specs.append(point)
    return specs


def expand_experiments(config: dict) -> list[dict]:
    """All resolved experiments of a workflow config, names unique."""
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
            raise InputError("config", f"experiment '{exp['name']}'", "name used twice; experiment names must be unique")
        seen.add(exp["name"])
    if not experiments:
        raise InputError("config", "experiments", "no experiment defined; add an entry under 'experiments' or 'sweeps'")
    return experiments
