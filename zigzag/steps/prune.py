"""``zigzag cache prune --configfile CONFIG [--dry-run]``: remove the cache entries no experiment of
a workflow config refers to (docs/reference/results.md#pruning-the-cache).

An entry is referred to when a plan of one of the config's experiments lists its key (the layer
jobs of ``results/<name>/plan.json``, the cost entries of ``results/multicore/<name>/cost_plan.json``).
Hardware sweeps record no plan: while the config has ``hardware_sweeps``, no layer result is
removed, nor the allocation tables their batch jobs share (``<cache>/allocations/``, a speed cache
only sweeps read) or the guided search's screen verdicts (``<cache>/screen/``); without sweeps,
those go too. Run the workflow first, so that the plans are
those of the config as it is now.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.sealed import DamagedFile, read_sealed
from zigzag.mapping_search.result_store import STORE_FILES

#: (folder under the cache, its files' suffix): what one layer result or one cost entry leaves
LAYER_FILES = STORE_FILES
COST_FILES = (
    ("multicore-cost/jobs", ".json"),
    ("multicore-cost/entries", ".json"),
    ("logs/multicore-cost", ".log"),
    ("benchmarks/multicore_costs", ".tsv"),
)


def _plan_keys(path: Path) -> set[str]:
    """The layer-job keys of an experiment's plan (none when it is missing or damaged)."""
    try:
        return {layer["key"] for layer in read_sealed(path).get("layers", [])}
    except (OSError, DamagedFile):
        return set()


def _cost_keys(path: Path) -> set[str]:
    """The cost-entry keys of a multi-core experiment's cost plan (none when it is unreadable)."""
    try:
        return set(json.loads(path.read_text()).get("keys", []))
    except (OSError, ValueError, AttributeError):
        return set()


def unreferenced(config: dict) -> list[Path]:
    """The cache files of ``config``'s cache folder that none of its experiments refers to."""
    from zigzag.config import load_config
    from zigzag.steps.experiments import expand_experiments
    from zigzag.steps.multicore import resolve_multicore_experiments

    config = load_config(config)  # read once, the typed sections handed on
    results = Path(config.results)
    cache = Path(config.cache if config.cache is not None else results / ".cache")
    layer_keys: set[str] = set()
    for experiment in expand_experiments(config):
        layer_keys |= _plan_keys(results / experiment["name"] / "plan.json")
    cost_keys: set[str] = set()
    for name in resolve_multicore_experiments(config):
        cost_keys |= _cost_keys(results / "multicore" / name / "cost_plan.json")
    stale = []
    groups = [(COST_FILES, cost_keys)]
    if not config.hardware_sweeps:  # a sweep's results are listed by no plan
        groups.append((LAYER_FILES, layer_keys))
    for files, kept in groups:
        for folder, suffix in files:
            for path in sorted((cache / folder).glob(f"*{suffix}")):
                key = path.name[: -len(suffix)]
                if key in kept or not all(c in "0123456789abcdef" for c in key):
                    continue
                stale.append(path)
    if not config.hardware_sweeps:
        from zigzag.mapping_search.batched.allocation_store import FOLDER as ALLOCATIONS
        from zigzag.sweep.guided_store import FOLDER as SCREEN

        stale += sorted(p for p in (cache / ALLOCATIONS).glob("*/*") if p.is_file())
        stale += _stale_packs(cache, layer_keys)
        stale += sorted((cache / SCREEN).glob("*.json"))
    return stale


def _stale_packs(cache: Path, kept: set[str]) -> list[Path]:
    """The packed layer results (a sweep batch job's, ``zigzag/mapping_search/result_packs.py``)
    none of whose keys is in ``kept``, each with its key list."""
    from zigzag.mapping_search.result_packs import KEYS, PACK, pack_files

    stale = []
    for pack, keys in pack_files(str(cache / "results")):
        if not keys & kept:
            stale += [Path(pack), Path(pack[: -len(PACK)] + KEYS)]
    return [p for p in stale if p.exists()]


def cmd_prune(args: argparse.Namespace) -> int:
    from zigzag.io.yaml_files import load_yaml
    from zigzag.mapping_search.batched.allocation_store import FOLDER as ALLOCATIONS

    config = load_yaml(args.configfile)
    if not isinstance(config, dict):
        raise InputError(args.configfile, None, "not a workflow config (a mapping of keys)")
    stale = unreferenced(config)
    size = sum(p.stat().st_size for p in stale)
    for path in stale:
        if args.dry_run:
            if not args.quiet:
                print(path)
        else:
            path.unlink(missing_ok=True)
            if path.parent.parent.name == ALLOCATIONS and not any(path.parent.iterdir()):
                path.parent.rmdir()  # a problem's folder, emptied
    verb = "would remove" if args.dry_run else "removed"
    print(
        f"{verb} {len(stale)} cache files ({size / 1e6:.1f} MB) no experiment of {args.configfile} refers to"
    )
    return 0


def add_cache_command(sub) -> None:
    """The ``zigzag cache`` command (``prune``)."""
    cache = sub.add_parser("cache", help="manage the workflow's content-keyed cache")
    actions = cache.add_subparsers(dest="action", required=True)
    prune = actions.add_parser(
        "prune",
        help="remove the cache entries no experiment of a config refers to",
        description="Remove the layer results and cost-table entries (with their lock, job, log "
        "and benchmark files) that no plan of the config's experiments lists (no layer result "
        "while the config has hardware_sweeps). Run the workflow first.",
    )
    prune.add_argument("--configfile", required=True, help="the workflow config (e.g. config.yaml)")
    prune.add_argument(
        "--dry-run", "-n", action="store_true", help="list the files, remove nothing"
    )
    from zigzag.command_options import add_quiet

    add_quiet(prune)
    prune.set_defaults(func=cmd_prune)
