"""A hardware sweep as given in the workflow config, on the command line or from Python.

:func:`read_sweep` checks one ``hardware_sweeps`` entry (see docs/reference/sweeps.md) and
returns a :class:`Sweep`: the variant spec (``zigzag.variants``), the workloads, the mapping and
how its spatial part follows the hardware, the constraints, the clock and the search options.
A ``kind: multicore`` sweep varies a multi-core accelerator instead: it has a Stream mapping,
the scheduling ``modes``, optional ``layer_stacks`` and the ``allocation_search`` budget, and
no single-core search options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zigzag.errors import InputError
from zigzag.search.options import OPTION_BY_NAME, resolve_options
from zigzag.variants import expressions
from zigzag.variants.spec import SPEC_KEYS, VariantSpec, read_spec

#: keys of a sweep besides the variant keys (``zigzag.variants.spec.SPEC_KEYS``) and search options
SWEEP_KEYS = ("name", "kind", "workloads", "mapping", "spatial_mapping", "constraints", "clock_ghz", "batch_size",
              "search")
KINDS = ("single", "multicore")
#: keys of a multi-core sweep only
MULTICORE_KEYS = ("modes", "layer_stacks", "allocation_search")
MODES = ("lbl", "fused")
#: the allocation search of a multi-core sweep: key -> default (a mapping that leaves choices)
ALLOCATION_SEARCH = {"individuals": 16, "generations": 8, "seed": 0, "choose": "latency"}
SPATIAL_MAPPING_MODES = ("given", "generate")
#: memory operand links of the mapping used when the spatial mapping is generated and no mapping is given
DEFAULT_LINKS = {"O": "O", "W": "I2", "I": "I1"}
_CONSTRAINT = re.compile(r"\s*(.+?)\s*(<=|>=|<|>)\s*(.+?)\s*")


@dataclass(frozen=True)
class Constraint:
    """``area <= 5 mm2``: the text, the parsed comparison and whether it reads times (seconds)."""

    text: str
    in_seconds: bool


#: the keys of ``search:`` in a hardware sweep (a guided search, zigzag/sweep/search.py)
SEARCH_KEYS = ("population", "generations", "seed", "workers")


@dataclass(frozen=True)
class SearchBudget:
    """How much a search may do: population (and children per generation), generations, seed,
    and worker processes evaluating candidates."""

    population: int = 16
    generations: int = 8
    seed: int = 0
    workers: int = 2


def read_budget(value, source: str) -> SearchBudget:
    """Check a sweep's ``search:`` mapping (``{}`` or ``true`` for the defaults)."""
    if value is True:
        value = {}
    if not isinstance(value, dict):
        raise InputError(source, "search", f"{value!r} is not a mapping; write e.g. {{population: 16, generations: 8}}")
    unknown = [k for k in value if k not in SEARCH_KEYS]
    if unknown:
        raise InputError(source, f"search.{unknown[0]}", f"unknown key; known keys: {', '.join(SEARCH_KEYS)}")
    minimum = {"population": 4, "generations": 1, "workers": 1}
    for key, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int) or number < minimum.get(key, -2**63):
            limit = f" of at least {minimum[key]}" if key in minimum else ""
            raise InputError(source, f"search.{key}", f"{number!r} is not a whole number{limit}")
    return SearchBudget(**value)


@dataclass(frozen=True)
class Sweep:
    """A checked hardware sweep, ready to expand and evaluate."""

    name: str
    spec: VariantSpec
    workloads: tuple[str, ...]
    mapping: str | None
    spatial_mapping: str
    constraints: tuple[Constraint, ...]
    clock_ghz: Any
    options: dict
    workload_options: dict
    #: variants per workflow job, or "auto" (see zigzag/sweep/workflow.py)
    batch_size: int | str = "auto"
    #: a guided search's budget instead of the whole grid (see zigzag/sweep/search.py)
    search: SearchBudget | None = None
    kind: str = "single"
    base: str | None = None
    modes: tuple[str, ...] = ()
    layer_stacks: str | None = None
    allocation_search: dict | None = None


def read_sweep(section: dict, source: str = "sweep", *, defaults: dict | None = None,
               base_document: dict | None = None) -> Sweep:
    """Check one sweep (config entry, CLI flags or API arguments); ``defaults``: search options
    of the config's ``defaults`` (the sweep's own options override them)."""
    if not isinstance(section, dict):
        raise InputError(source, None, "a hardware sweep must be a mapping with name, base, vary, workloads, ...")
    name = str(section.get("name") or "")
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise InputError(source, "name", f"{name!r} is not a usable name; use letters, digits and _ . + - only")
    where = f"{source} ({name})" if source != name else source
    kind = section.get("kind", "single")
    if kind not in KINDS:
        raise InputError(where, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    if kind == "multicore":
        return _read_multicore(section, name, where, base_document)
    known = set(SPEC_KEYS) | set(SWEEP_KEYS) | set(OPTION_BY_NAME)
    misplaced = [k for k in section if k in MULTICORE_KEYS]
    if misplaced:
        raise InputError(where, misplaced[0], "is a key of multi-core sweeps only; add 'kind: multicore' or remove it")
    unknown = [k for k in section if k not in known]
    if unknown:
        import difflib

        close = difflib.get_close_matches(str(unknown[0]), sorted(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(sorted(known))}"
        raise InputError(where, str(unknown[0]), f"unknown key{hint}")
    from zigzag.sweep.runner import accelerator_identity

    spec = read_spec(section, where, base_document=base_document, normalise=accelerator_identity)
    workloads = _workloads(section, where, "ONNX or YAML")
    spatial = section.get("spatial_mapping", "given")
    if spatial not in SPATIAL_MAPPING_MODES:
        raise InputError(where, "spatial_mapping", f"{spatial!r} is not one of {', '.join(SPATIAL_MAPPING_MODES)}")
    mapping = section.get("mapping")
    if mapping is None and spatial == "given":
        raise InputError(where, "mapping", "missing; give a mapping file, or spatial_mapping: generate")
    option_values = {**(defaults or {}), **{k: v for k, v in section.items() if k in OPTION_BY_NAME}}
    try:
        options, workload_options = resolve_options(option_values)
    except InputError as exc:
        raise InputError(where, exc.where, exc.message) from None
    clock = _clock(section, where)
    batch_size = _batch_size(section, where)
    return Sweep(name, spec, tuple(workloads), None if mapping is None else str(mapping), spatial,
                 read_constraints(section.get("constraints") or [], where), clock, options.to_dict(),
                 workload_options, batch_size,
                 None if section.get("search") is None else read_budget(section["search"], where))


def _workloads(section: dict, where: str, kinds: str) -> list[str]:
    """The sweep's ``workloads``: one file or a non-empty list of files."""
    workloads = section.get("workloads")
    if isinstance(workloads, str):
        workloads = [workloads]
    if not isinstance(workloads, list) or not workloads or not all(isinstance(w, str) for w in workloads):
        raise InputError(where, "workloads", f"give a list of workload files ({kinds})")
    return workloads


def _clock(section: dict, where: str) -> Any:
    """The sweep's ``clock_ghz``: a number or an expression over its parameters (checked to parse)."""
    clock = section.get("clock_ghz")
    if clock is not None:
        try:
            expressions.parse(str(clock))
        except expressions.ExpressionError as exc:
            raise InputError(where, "clock_ghz", str(exc)) from None
    return clock


def _batch_size(section: dict, where: str) -> int | str:
    batch_size = section.get("batch_size", "auto")
    if batch_size != "auto" and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise InputError(where, "batch_size", f"{batch_size!r} is neither a positive whole number nor 'auto'")
    return batch_size


def _read_multicore(section: dict, name: str, where: str, base_document: dict | None) -> Sweep:
    """A ``kind: multicore`` sweep (see :func:`read_sweep`)."""
    from zigzag.sweep.multicore import multicore_spec

    known = set(SPEC_KEYS) | {"name", "kind", "workloads", "mapping", "constraints", "clock_ghz", "batch_size"} \
        | set(MULTICORE_KEYS)
    unknown = [k for k in section if k not in known]
    if unknown:
        why = "a single-core option, not used by multi-core sweeps" if unknown[0] in (*OPTION_BY_NAME, "spatial_mapping") \
            else f"unknown key; known keys: {', '.join(sorted(known))}"
        raise InputError(where, str(unknown[0]), f"{why}; remove it")
    spec = multicore_spec(section, where, base_document)
    workloads = _workloads(section, where, "ONNX")
    if not isinstance(section.get("mapping"), str):
        raise InputError(where, "mapping", "missing; give the multi-core (Stream) mapping file")
    modes = section.get("modes", ["lbl"])
    modes = [modes] if isinstance(modes, str) else modes
    if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
        raise InputError(where, "modes", f"{modes!r} is not a list of {' and '.join(MODES)}; e.g. [lbl, fused]")
    stacks = section.get("layer_stacks")
    if stacks is not None:
        from zigzag.stream.tiling import parse_layer_stacks

        if not isinstance(stacks, str) or not stacks.strip():
            raise InputError(where, "layer_stacks", "give stacks of layer ids such as '0-10;11-21'")
        try:
            parse_layer_stacks(stacks)
        except InputError as exc:
            raise InputError(where, "layer_stacks", exc.message) from None
    search = _allocation_search(section.get("allocation_search"), where)
    clock = _clock(section, where)
    return Sweep(name, spec, tuple(workloads), section["mapping"], "given",
                 read_constraints(section.get("constraints") or [], where), clock, {}, {}, kind="multicore",
                 base=str(section.get("base")), modes=tuple(modes),
                 layer_stacks=stacks, allocation_search=search, batch_size=_batch_size(section, where))


def _allocation_search(value: Any, where: str) -> dict:
    """The allocation search's budget, defaults filled in."""
    if value is None:
        return dict(ALLOCATION_SEARCH)
    if not isinstance(value, dict):
        raise InputError(where, "allocation_search", "give a mapping such as {individuals: 16, generations: 8, seed: 0}")
    for key, given in value.items():
        if key not in ALLOCATION_SEARCH:
            raise InputError(where, f"allocation_search.{key}", f"unknown key; use {', '.join(ALLOCATION_SEARCH)}")
        if key == "choose":
            if given not in ("latency", "energy", "edp"):
                raise InputError(where, "allocation_search.choose", f"{given!r} is not latency, energy or edp")
        elif isinstance(given, bool) or not isinstance(given, int) or given < (2 if key == "individuals" else 0):
            least = 2 if key == "individuals" else 0
            raise InputError(where, f"allocation_search.{key}", f"{given!r} is not a whole number of at least {least}")
    return {**ALLOCATION_SEARCH, **value}


def read_constraints(constraints: Any, source: str) -> tuple[Constraint, ...]:
    """Check constraints such as ``area <= 5 mm2``, ``latency <= 2 ms``, ``energy < 3 uJ``."""
    if not isinstance(constraints, list):
        raise InputError(source, "constraints", f"{constraints!r} is not a list; write e.g. ['area <= 5 mm2']")
    result = []
    for i, text in enumerate(constraints):
        if not isinstance(text, str) or _CONSTRAINT.fullmatch(text) is None:
            raise InputError(source, f"constraints[{i}]", f"{text!r} is not a comparison such as 'area <= 5 mm2'")
        try:
            expressions.parse(text)
        except expressions.ExpressionError as exc:
            raise InputError(source, f"constraints[{i}]", str(exc)) from None
        units = {expressions.UNITS[u][0] for u in re.findall(r"\d\s*([A-Za-z]+\d?)\b", text) if u in expressions.UNITS}
        result.append(Constraint(text, "time" in units))
    return tuple(result)
