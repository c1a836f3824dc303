"""A hardware sweep as given in the workflow config, on the command line or from Python.

:func:`read_sweep` checks one ``hardware_sweeps`` entry (see docs/reference/sweeps.md) and
returns a :class:`Sweep`: the variant spec (``zigzag.variants``), the workloads, the mapping and
how its spatial part follows the hardware, the constraints, the clock and the search options.
A ``kind: multicore`` sweep varies a multi-core accelerator instead: it has a Stream mapping,
the scheduling ``modes``, optional ``layer_stacks`` and the ``allocation_search`` budget, and
no single-core search options.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass
from typing import Any

from zigzag.errors import InputError
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.validation import validate_accelerator
from zigzag.multicore.pipeline.spec import CHOICES, MODES, search_defaults
from zigzag.multicore.pipeline.spec import SEARCH_METHODS as ALLOCATION_METHODS
from zigzag.mapping_search.options import OPTION_BY_NAME, resolve_options
from zigzag.sweep.constraints import ConstraintProblem, check_constraint
from zigzag.sweep.multicore import multicore_spec
from zigzag.tokens.workloads import check_field, check_points, is_llm_workload
from zigzag.variants import expressions
from zigzag.variants.spec import SPEC_KEYS, VariantSpec, read_spec

#: keys of a sweep besides the variant keys (``zigzag.variants.spec.SPEC_KEYS``) and search options
SWEEP_KEYS = (
    "name",
    "kind",
    "workloads",
    "mapping",
    "spatial_mapping",
    "constraints",
    "clock_ghz",
    "batch_size",
    "ranking",
    "search",
    "workload_vary",
)
KINDS = ("single", "multicore")
#: keys of a multi-core sweep only
MULTICORE_KEYS = ("modes", "layer_stacks", "allocation_search", "latency_model")
#: the allocation search of a multi-core sweep (a mapping that leaves choices): key -> default
ALLOCATION_SEARCH = search_defaults()
SPATIAL_MAPPING_MODES = ("given", "generate")
#: memory operand links of the mapping used when the spatial mapping is generated and no mapping is given
DEFAULT_LINKS = {"O": "O", "W": "I2", "I": "I1"}
_CONSTRAINT = re.compile(r"\s*(.+?)\s*(<=|>=|<|>)\s*(.+?)\s*")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Constraint:
    """``area <= 5 mm2``: the text, the parsed comparison and whether it reads times (seconds)."""

    text: str
    in_seconds: bool


#: the keys of ``search:`` in a hardware sweep (a guided search, zigzag/sweep/hardware_search.py)
SEARCH_KEYS = ("method", "population", "generations", "seed", "workers")
SEARCH_METHODS = ("guided", "nsga2")


@dataclass(frozen=True)
class SearchBudget:
    """How much a search may do: population (and children per generation), generations, seed,
    and worker processes evaluating candidates."""

    population: int = 16
    generations: int = 8
    seed: int = 0
    workers: int = 2
    #: ``guided`` (surrogate-guided batches, zigzag/sweep/guided.py) or ``nsga2`` (the genetic search)
    method: str = "guided"


def read_budget(value, source: str) -> SearchBudget:
    """Check a sweep's ``search:`` mapping (``{}`` or ``true`` for the defaults)."""
    if value is True:
        value = {}
    if not isinstance(value, dict):
        raise InputError(
            source,
            "search",
            f"{value!r} is not a mapping; write e.g. {{population: 16, generations: 8}}",
        )
    unknown = [k for k in value if k not in SEARCH_KEYS]
    if unknown:
        raise InputError(
            source, f"search.{unknown[0]}", f"unknown key; known keys: {', '.join(SEARCH_KEYS)}"
        )
    minimum = {"population": 4, "generations": 1, "workers": 1}
    method = value.get("method", "guided")
    if method not in SEARCH_METHODS:
        raise InputError(
            source, "search.method", f"{method!r} is not one of {', '.join(SEARCH_METHODS)}"
        )
    for key, number in value.items():
        if key == "method":
            continue
        if (
            isinstance(number, bool)
            or not isinstance(number, int)
            or number < minimum.get(key, -(2**63))
        ):
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
    #: a guided search's budget instead of the whole grid (see zigzag/sweep/hardware_search.py)
    search: SearchBudget | None = None
    kind: str = "single"
    base: str | None = None
    modes: tuple[str, ...] = ()
    layer_stacks: str | None = None
    allocation_search: dict | None = None
    #: workload fields varied (LLM workloads: context, batch, precision, ...): ((name, values), ...)
    workload_axes: tuple[tuple[str, tuple], ...] = ()
    #: how the report ranks variants across workloads (see :func:`read_ranking`)
    ranking: dict | None = None


def accelerator_identity(document: dict, name: str) -> dict:
    """The validated, normalised form of an accelerator document (what identifies a variant)."""
    upgraded, _ = upgrade_accelerator(document, name)
    return validate_accelerator(upgraded, name)


def read_sweep(
    section: dict,
    source: str = "sweep",
    *,
    defaults: dict | None = None,
    base_document: dict | None = None,
) -> Sweep:
    """Check one sweep (config entry, CLI flags or API arguments); ``defaults``: search options
    of the config's ``defaults`` (the sweep's own options override them)."""
    if not isinstance(section, dict):
        raise InputError(
            source, None, "a hardware sweep must be a mapping with name, base, vary, workloads, ..."
        )
    name = str(section.get("name") or "")
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise InputError(
            source, "name", f"{name!r} is not a usable name; use letters, digits and _ . + - only"
        )
    where = f"{source} ({name})" if source != name else source
    section = _clock_spelling(section, where)
    kind = section.get("kind", "single")
    if kind not in KINDS:
        raise InputError(where, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    if kind == "multicore":
        return _read_multicore(section, name, where, base_document)
    known = set(SPEC_KEYS) | set(SWEEP_KEYS) | set(OPTION_BY_NAME)
    misplaced = [k for k in section if k in MULTICORE_KEYS and k not in OPTION_BY_NAME]
    if misplaced:
        raise InputError(
            where,
            misplaced[0],
            "is a key of multi-core sweeps only; add 'kind: multicore' or remove it",
        )
    unknown = [k for k in section if k not in known]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), sorted(known), n=1)
        hint = (
            f"; did you mean '{close[0]}'?"
            if close
            else f"; known keys: {', '.join(sorted(known))}"
        )
        raise InputError(where, str(unknown[0]), f"unknown key{hint}")
    spec = read_spec(section, where, base_document=base_document, normalise=accelerator_identity)
    workloads = _workloads(section, where, "ONNX or YAML")
    spatial = section.get("spatial_mapping", "given")
    if spatial not in SPATIAL_MAPPING_MODES:
        raise InputError(
            where,
            "spatial_mapping",
            f"{spatial!r} is not one of {', '.join(SPATIAL_MAPPING_MODES)}",
        )
    mapping = section.get("mapping")
    if mapping is None and spatial == "given":
        raise InputError(
            where, "mapping", "missing; give a mapping file, or spatial_mapping: generate"
        )
    option_values = {
        **(defaults or {}),
        **{k: v for k, v in section.items() if k in OPTION_BY_NAME},
    }
    try:
        options, workload_options = resolve_options(option_values)
    except InputError as exc:
        raise InputError(where, exc.where, exc.message) from None
    clock = _clock(section, where)
    batch_size = _batch_size(section, where)
    constraints = read_constraints(section.get("constraints") or [], where, _parameters(spec))
    return Sweep(
        name,
        spec,
        tuple(workloads),
        None if mapping is None else str(mapping),
        spatial,
        constraints,
        clock,
        options.to_dict(),
        workload_options,
        batch_size,
        None if section.get("search") is None else read_budget(section["search"], where),
        workload_axes=read_workload_axes(section.get("workload_vary"), workloads, where),
        ranking=read_ranking(section.get("ranking"), where),
    )


def read_workload_axes(
    value: Any, workloads: list[str], where: str
) -> tuple[tuple[str, tuple], ...]:
    """The sweep's ``workload_vary``: LLM workload fields and their values (every workload must be
    generated from a model configuration)."""
    if value is None:
        return ()

    if not isinstance(value, dict) or not value:
        raise InputError(
            where,
            "workload_vary",
            "give workload fields and their values, e.g. {context: [1024, 4096]}",
        )
    axes = []
    for key, values in value.items():
        check_field(str(key), f"{where}: workload_vary")
        if not isinstance(values, list) or not values:
            raise InputError(
                where,
                f"workload_vary.{key}",
                f"{values!r} is not a non-empty list; e.g. [1024, 4096]",
            )
        axes.append((str(key), tuple(values)))
    for i, workload in enumerate(workloads):
        if not is_llm_workload(workload):
            raise InputError(
                where,
                f"workloads[{i}]",
                f"{workload} is not generated from a model configuration "
                "(an llm: section); workload_vary needs such workloads",
            )
        check_points(workload, axes, where)
    return tuple(axes)


def _parameters(spec: VariantSpec) -> tuple[str, ...]:
    """The names a sweep's rows have a column for besides the figures: its parameters."""
    return tuple(spec.varied_names)


#: ``ranking:`` of a sweep: how the report aggregates a variant's results over the workloads
RANKING_METHODS = ("geomean", "sum")
RANKING_OBJECTIVES = ("energy", "latency", "edp", "area")


def read_ranking(value, where: str) -> dict | None:
    """Check a sweep's ``ranking`` ({method: geomean|sum, objective: energy|latency|edp|area,
    weights: {workload: number}}); None when not given."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(
            where,
            "ranking",
            f"{value!r} is not a mapping; write e.g. {{method: geomean, weights: {{resnet18: 2}}}}",
        )
    unknown = [k for k in value if k not in ("method", "objective", "weights")]
    if unknown:
        raise InputError(
            where, f"ranking.{unknown[0]}", "unknown key; known keys: method, objective, weights"
        )
    for key, allowed in (("method", RANKING_METHODS), ("objective", RANKING_OBJECTIVES)):
        if key in value and value[key] not in allowed:
            raise InputError(
                where, f"ranking.{key}", f"{value[key]!r} is not one of {', '.join(allowed)}"
            )
    weights = value.get("weights") or {}
    if not isinstance(weights, dict) or not all(
        isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights.values()
    ):
        raise InputError(
            where,
            "ranking.weights",
            "give a mapping of workload name to a number >= 0, e.g. {resnet18: 2}",
        )
    return {
        "method": value.get("method", "geomean"),
        "objective": value.get("objective", "energy"),
        "weights": {str(k): float(v) for k, v in weights.items()},
    }


def _workloads(section: dict, where: str, kinds: str) -> list[str]:
    """The sweep's ``workloads``: one file or a non-empty list of files."""
    workloads = section.get("workloads")
    if isinstance(workloads, str):
        workloads = [workloads]
    if (
        not isinstance(workloads, list)
        or not workloads
        or not all(isinstance(w, str) for w in workloads)
    ):
        raise InputError(where, "workloads", f"give a list of workload files ({kinds})")
    return workloads


def _clock_spelling(section: dict, where: str) -> dict:
    """The section with ``clock_ns`` (a clock period, the older spelling) read as ``clock_ghz``,
    with a warning: one clock name everywhere."""
    if "clock_ns" not in section:
        return section
    if section.get("clock_ghz") is not None:
        raise InputError(where, "clock_ns", "give clock_ghz only (clock_ns is its older spelling)")
    period = section["clock_ns"]
    if isinstance(period, str):
        clock: Any = f"1 / ({period})"
    elif isinstance(period, (int, float)) and not isinstance(period, bool) and period > 0:
        clock = 1.0 / period
    else:
        raise InputError(
            where, "clock_ns", f"{period!r} is not a clock period in ns; give clock_ghz, e.g. 1"
        )
    logger.warning("%s: clock_ns is read as clock_ghz = %s; write clock_ghz", where, clock)
    return {**{k: v for k, v in section.items() if k != "clock_ns"}, "clock_ghz": clock}


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
    if batch_size != "auto" and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
    ):
        raise InputError(
            where, "batch_size", f"{batch_size!r} is neither a positive whole number nor 'auto'"
        )
    return batch_size


def _read_multicore(section: dict, name: str, where: str, base_document: dict | None) -> Sweep:
    """A ``kind: multicore`` sweep (see :func:`read_sweep`)."""
    known = (
        set(SPEC_KEYS)
        | {
            "name",
            "kind",
            "workloads",
            "mapping",
            "constraints",
            "clock_ghz",
            "batch_size",
            "ranking",
        }
        | set(MULTICORE_KEYS)
    )
    unknown = [k for k in section if k not in known]
    if unknown:
        why = (
            "a single-core option, not used by multi-core sweeps"
            if unknown[0] in (*OPTION_BY_NAME, "spatial_mapping")
            else f"unknown key; known keys: {', '.join(sorted(known))}"
        )
        raise InputError(where, str(unknown[0]), f"{why}; remove it")
    spec = multicore_spec(section, where, base_document)
    workloads = _workloads(section, where, "ONNX")
    if section.get("mapping") is not None and not isinstance(section["mapping"], str):
        raise InputError(where, "mapping", "not a file name; give the multi-core mapping file")
    modes = section.get("modes", ["lbl"])
    modes = [modes] if isinstance(modes, str) else modes
    if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
        raise InputError(
            where, "modes", f"{modes!r} is not a list of {' and '.join(MODES)}; e.g. [lbl, fused]"
        )
    stacks = section.get("layer_stacks")
    if stacks is not None:
        from zigzag.multicore.tiling import parse_layer_stacks

        if not isinstance(stacks, str) or not stacks.strip():
            raise InputError(where, "layer_stacks", "give stacks of layer ids such as '0-10;11-21'")
        try:
            parse_layer_stacks(stacks)
        except InputError as exc:
            raise InputError(where, "layer_stacks", exc.message) from None
    given = section.get("allocation_search")
    if given is None and section.get("mapping") is None:  # the automatic mapping: Stream 2.x's
        given = {"method": "co"}  # allocation, constraint optimisation
    search = _allocation_search(given, where)
    latency_model = section.get(
        "latency_model", "auto"
    )  # per workload: see multicore/schedule/tokens.py
    if latency_model not in ("auto", "zigzag", "bandwidth_bound"):
        raise InputError(
            where, "latency_model", f"{latency_model!r} is not auto, zigzag or bandwidth_bound"
        )
    clock = _clock(section, where)
    constraints = read_constraints(
        section.get("constraints") or [], where, _parameters(spec), "multicore"
    )
    return Sweep(
        name,
        spec,
        tuple(workloads),
        section.get("mapping"),
        "given",
        constraints,
        clock,
        {"latency_model": latency_model},
        {},
        kind="multicore",
        base=str(section.get("base")),
        modes=tuple(modes),
        layer_stacks=stacks,
        allocation_search=search,
        batch_size=_batch_size(section, where),
        ranking=read_ranking(section.get("ranking"), where),
    )


def _allocation_search(value: Any, where: str) -> dict:
    """The allocation search's budget, defaults filled in."""
    if value is None:
        return dict(ALLOCATION_SEARCH)
    if not isinstance(value, dict):
        raise InputError(
            where,
            "allocation_search",
            "give a mapping such as {individuals: 16, generations: 8, seed: 0}",
        )
    for key, given in value.items():
        if key not in ALLOCATION_SEARCH:
            raise InputError(
                where,
                f"allocation_search.{key}",
                f"unknown key; use {', '.join(ALLOCATION_SEARCH)}",
            )
        if key == "choose":
            if given not in CHOICES:
                raise InputError(
                    where, "allocation_search.choose", f"{given!r} is not latency, energy or edp"
                )
        elif key == "method":
            if given not in ALLOCATION_METHODS:
                raise InputError(
                    where,
                    "allocation_search.method",
                    f"{given!r} is not ga (genetic search) or co (constraint optimisation)",
                )
        elif key in ("time_limit", "gap"):
            if (
                isinstance(given, bool)
                or not isinstance(given, (int, float))
                or given <= 0
                or (key == "gap" and given >= 1)
            ):
                raise InputError(
                    where,
                    f"allocation_search.{key}",
                    f"{given!r} is not a number > 0"
                    + (" and < 1" if key == "gap" else "")
                    + " (co: seconds per solve / relative gap)",
                )
        elif (
            isinstance(given, bool)
            or not isinstance(given, int)
            or given < (2 if key == "individuals" else 0)
        ):
            least = 2 if key == "individuals" else 0
            raise InputError(
                where,
                f"allocation_search.{key}",
                f"{given!r} is not a whole number of at least {least}",
            )
    return {**ALLOCATION_SEARCH, **value}


def read_constraints(
    constraints: Any, source: str, parameters: tuple[str, ...] = (), kind: str = "single"
) -> tuple[Constraint, ...]:
    """Check constraints such as ``area <= 5 mm2``, ``latency <= 2 ms``, ``energy < 3 uJ``: their
    form, their metrics (``parameters``: the sweep's parameter names, also allowed; ``kind``:
    single or multicore) and units."""
    if not isinstance(constraints, list):
        raise InputError(
            source, "constraints", f"{constraints!r} is not a list; write e.g. ['area <= 5 mm2']"
        )
    result = []
    for i, text in enumerate(constraints):
        if not isinstance(text, str) or _CONSTRAINT.fullmatch(text) is None:
            raise InputError(
                source, f"constraints[{i}]", f"{text!r} is not a comparison such as 'area <= 5 mm2'"
            )
        try:
            check_constraint(text, parameters, kind)
        except (expressions.ExpressionError, ConstraintProblem) as exc:
            raise InputError(source, f"constraints[{i}]", str(exc)) from None
        units = {
            expressions.UNITS[u][0]
            for u in re.findall(r"\d\s*([A-Za-z]+\d?)\b", text)
            if u in expressions.UNITS
        }
        result.append(Constraint(text, "time" in units))
    return tuple(result)
