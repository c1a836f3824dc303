"""A hardware sweep given by ``zigzag sweep``'s flags (or ``--config FILE --name NAME``), as the
``hardware_sweeps`` entry it stands for; its errors named by flag (``--vary``) rather than key."""

from __future__ import annotations

import argparse
import re

from zigzag.errors import InputError


def _assignment(text: str, flag: str) -> tuple[str, str]:
    if "=" not in text:
        raise InputError(flag, text, "write PATH=VALUE, e.g. 'memories.sb.size=[32KiB,64KiB]'")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _list(text: str, flag: str, key: str):
    from zigzag.io.yaml_files import parse_yaml

    try:
        return parse_yaml(text, flag)
    except InputError as err:
        raise InputError(
            flag, key, f"'{text}' is not a list ({err.message}); write e.g. [32KiB,64KiB]"
        ) from None


def sweep_from_args(args: argparse.Namespace) -> dict:
    """The sweep entry (as in the config's ``hardware_sweeps``) the flags describe."""
    if args.config:
        return _config_entry(args.config, args.name)
    if not args.base:
        raise InputError(
            "zigzag sweep", "--base", "missing; give the accelerator file to vary (or --config)"
        )
    section: dict = {
        "name": args.name or "sweep",
        "base": args.base,
        "workloads": args.workload or [],
    }
    section["params"] = dict(_assignment(t, "--param") for t in args.param)
    section["vary"] = {
        k: _list(v, "--vary", k) for k, v in (_assignment(t, "--vary") for t in args.vary)
    }
    section["zip"] = [
        {k: _list(v, "--zip", k) for k, v in (_assignment(p, "--zip") for p in group.split(";"))}
        for group in args.zip
    ]
    section["derive"] = dict(_assignment(t, "--derive") for t in args.derive)
    if args.workload_vary:
        section["workload_vary"] = {
            k: _list(v, "--workload-vary", k)
            for k, v in (_assignment(t, "--workload-vary") for t in args.workload_vary)
        }
    if args.mapping:
        section["mapping"] = args.mapping
    if args.spatial_mapping:
        section["spatial_mapping"] = args.spatial_mapping
    if args.constraint:
        section["constraints"] = list(args.constraint)
    if args.clock_ghz is not None:
        section["clock_ghz"] = args.clock_ghz
    if args.name_format:
        section["name_format"] = args.name_format
    if args.multicore:
        section["kind"] = "multicore"
        section["modes"] = args.mode or ["lbl"]
        if args.layer_stacks is not None:
            section["layer_stacks"] = args.layer_stacks
        seed = args.allocation_seed if args.allocation_seed is not None else args.search_seed
        args.search_seed = None  # the seed of a multi-core sweep is its allocation search's
        budget = {
            "method": args.allocation_method,
            "individuals": args.allocation_individuals,
            "generations": args.allocation_generations,
            "seed": seed,
        }
        if any(v is not None for v in budget.values()):
            section["allocation_search"] = {k: v for k, v in budget.items() if v is not None}
    elif (
        args.mode
        or args.layer_stacks is not None
        or args.allocation_individuals is not None
        or args.allocation_method is not None
        or args.allocation_generations is not None
        or args.allocation_seed is not None
    ):
        raise InputError(
            "zigzag sweep",
            "--mode/--layer-stacks/--allocation-*",
            "are for multi-core sweeps; add --multicore",
        )
    return section


#: the flag of each key of a sweep given by flags
_FLAGS = {
    "constraints": "--constraint",
    "vary": "--vary",
    "derive": "--derive",
    "params": "--param",
    "zip": "--zip",
    "clock_ghz": "--clock-ghz",
    "name_format": "--name-format",
    "base": "--base",
    "workloads": "--workload",
    "mapping": "--mapping",
    "modes": "--mode",
    "layer_stacks": "--layer-stacks",
    "search": "--search",
    "allocation_search": "--allocation-*",
    "name": "--name",
}


def as_flag(exc: InputError) -> InputError:
    """An error about a sweep given by flags, naming the flag (``--constraint``) instead of the key."""
    key = re.match(r"[A-Za-z_]+", exc.where or "")
    flag = _FLAGS.get(key.group(0)) if key else None
    if flag is None:
        return exc
    rest = re.sub(r"^\[(\d+)\]", lambda m: f"#{int(m.group(1)) + 1}", exc.where[key.end() :])
    return InputError("zigzag sweep", f"{flag} {rest.lstrip('.')}".strip(), exc.message)


def with_search_flags(section: dict, args: argparse.Namespace) -> dict:
    """The sweep with the ``--search``/``--population``/... flags over its own ``search``."""
    budget = {
        key: getattr(args, f"search_{key}", None)
        for key in ("method", "population", "generations", "seed", "workers", "screen")
        if getattr(args, f"search_{key}", None) is not None
    }
    if not (args.search or budget):
        return section
    own = section.get("search") if isinstance(section.get("search"), dict) else {}
    return {**section, "search": {**own, **budget}}


def _config_entry(path: str, name: str | None) -> dict:
    from zigzag.io.yaml_files import load_yaml

    config = load_yaml(path)
    sweeps = config.get("hardware_sweeps") if isinstance(config, dict) else None
    if not sweeps:
        raise InputError(path, "hardware_sweeps", "no hardware sweep in this config")
    names = [s.get("name") for s in sweeps if isinstance(s, dict)]
    if name is None and len(sweeps) == 1:
        entry = sweeps[0]
    elif name not in names:
        raise InputError(
            path,
            "hardware_sweeps",
            f"no sweep named {name!r}; give --name with one of {', '.join(map(str, names))}",
        )
    else:
        entry = sweeps[names.index(name)]
    if entry.get("kind") == "multicore":  # the config's defaults are single-core search options
        return entry
    return {**(config.get("defaults") or {}), **entry}
