"""A hardware sweep as given in the workflow config, on the command line or from Python.

:func:`read_sweep` reads one ``hardware_sweeps`` entry (see docs/reference/sweeps.md) into its
typed model (:class:`zigzag.config.hardware_sweeps.HardwareSweep`, the one check of its keys,
types and values) and makes the :class:`Sweep` the evaluation needs: the variant spec
(``zigzag.variants``), the workloads, the mapping and how its spatial part follows the hardware,
the constraints, the clock and the search options. What needs the files is checked here: paths
into the base accelerator, constraints over the sweep's parameters, workload points. A
``kind: multicore`` sweep varies a multi-core accelerator instead: it has a Stream mapping, the
scheduling ``modes``, optional ``layer_stacks`` and the ``allocation_search`` budget, and no
single-core search options.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from zigzag.config.check import load_section
from zigzag.config.hardware_sweeps import SEARCH, GuidedSearch, HardwareSweep
from zigzag.config.base import NAME_PATTERN
from zigzag.errors import InputError
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search.options import OPTION_BY_NAME, resolve_options
from zigzag.sweep.constraints import ConstraintProblem, check_constraint
from zigzag.sweep.multicore import multicore_spec
from zigzag.tokens.workloads import check_points, is_llm_workload
from zigzag.variants import expressions
from zigzag.variants.spec import VariantSpec, read_spec

#: memory operand links of the mapping used when the spatial mapping is generated and no mapping is given
DEFAULT_LINKS = {"O": "O", "W": "I2", "I": "I1"}
_CONSTRAINT = re.compile(r"\s*(.+?)\s*(<=|>=|<|>)\s*(.+?)\s*")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Constraint:
    """``area <= 5 mm2``: the text, the parsed comparison and whether it reads times (seconds)."""

    text: str
    in_seconds: bool


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
    #: the guided search skips the variants a feasibility screen shows cannot run
    screen: bool = True


def read_budget(value: Any, source: str) -> SearchBudget:
    """A sweep's ``search:`` (a mapping, ``{}`` or ``true`` for the defaults) as a budget."""
    if isinstance(value, SearchBudget):
        return value
    given = load_section(GuidedSearch, {} if value is True else value, f"{source}: search")
    return _budget(given)


def _budget(search: GuidedSearch) -> SearchBudget:
    return SearchBudget(
        population=int(search.population),
        generations=int(search.generations),
        seed=int(search.seed),
        workers=int(search.workers),
        method=search.method,
        screen=bool(search.screen),
    )


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
    #: how the report ranks variants across workloads: method, objective, weights
    ranking: dict | None = None


def accelerator_identity(document: dict, name: str) -> dict:
    """The validated, normalised form of an accelerator document (what identifies a variant)."""
    upgraded, _ = upgrade_accelerator(document, name)
    return validate_accelerator(upgraded, name)


def read_sweep(
    section: dict | HardwareSweep, source: str = "sweep", *, defaults: dict | None = None
) -> Sweep:
    """One sweep (config entry, CLI flags or API arguments) read into its model and made ready
    to run; ``defaults``: search options of the config's ``defaults`` (the sweep's own options
    override them)."""
    name = section.name if isinstance(section, HardwareSweep) else _name(section)
    where = f"{source} ({name})" if name and source != name else source
    if not isinstance(section, HardwareSweep):
        section = load_section(HardwareSweep, section, where)
    entry = section.given()
    clock = _clock(section, where)
    batch_size = section.batch_size if section.batch_size == "auto" else int(section.batch_size)
    ranking = None if section.ranking is None else _ranking(section.ranking.model_dump())
    workloads = _files(section.workloads)
    if section.kind == "multicore":
        spec = multicore_spec(entry, where)
        return Sweep(
            section.name,
            spec,
            workloads,
            section.mapping,
            "given",
            read_constraints(section.constraints, where, _parameters(spec), "multicore"),
            clock,
            {"latency_model": section.latency_model},
            {},
            kind="multicore",
            base=section.base,
            modes=tuple(section.modes),
            layer_stacks=section.layer_stacks,
            allocation_search=_allocation_search(section),
            batch_size=batch_size,
            ranking=ranking,
        )
    spec = read_spec(entry, where, normalise=accelerator_identity)
    option_values = {**(defaults or {}), **{k: v for k, v in entry.items() if k in OPTION_BY_NAME}}
    try:
        options, workload_options = resolve_options(option_values)
    except InputError as exc:
        raise InputError(where, exc.where, exc.message) from None
    return Sweep(
        section.name,
        spec,
        workloads,
        section.mapping,
        section.spatial_mapping,
        read_constraints(section.constraints, where, _parameters(spec)),
        clock,
        options.to_dict(),
        workload_options,
        batch_size,
        None if section.search is None else _budget(section.search),
        workload_axes=_workload_axes(section.workload_vary, workloads, where),
        ranking=ranking,
    )


def _name(section: Any) -> str | None:
    """The name of a sweep not yet read, when it is a usable one (for the place in messages)."""
    name = section.get("name") if isinstance(section, dict) else None
    return name if isinstance(name, str) and re.fullmatch(NAME_PATTERN, name) else None


def _files(value: str | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _workload_axes(
    vary: dict[str, list], workloads: tuple[str, ...], where: str
) -> tuple[tuple[str, tuple], ...]:
    """The sweep's ``workload_vary`` as axes; every workload must be generated from a model
    configuration and take every point of them."""
    axes = tuple((key, tuple(values)) for key, values in vary.items())
    if not axes:
        return ()
    for i, workload in enumerate(workloads):
        if not is_llm_workload(workload):
            raise InputError(
                where,
                f"workloads[{i}]",
                f"{workload} is not generated from a model configuration "
                "(an llm: section); workload_vary needs such workloads",
            )
        check_points(workload, list(axes), where)
    return axes


def _parameters(spec: VariantSpec) -> tuple[str, ...]:
    """The names a sweep's rows have a column for besides the figures: its parameters."""
    return tuple(spec.varied_names)


def _ranking(ranking: dict) -> dict:
    """How the report ranks the variants: method, objective and weights (as floats)."""
    return {**ranking, "weights": {str(k): float(v) for k, v in ranking["weights"].items()}}


def _clock(section: HardwareSweep, where: str) -> Any:
    """The sweep's clock in GHz: ``clock_ghz``, or ``clock_ns`` (the older spelling, a period)
    read as its inverse with a warning."""
    period = section.clock_ns
    if period is None:
        return section.clock_ghz
    clock = f"1 / ({period})" if isinstance(period, str) else 1.0 / period
    logger.warning("%s: clock_ns is read as clock_ghz = %s; write clock_ghz", where, clock)
    return clock


def _allocation_search(section: HardwareSweep) -> dict:
    """The allocation search's budget, defaults filled in; without a mapping (the automatic
    one, Stream 2.x's allocation) constraint optimisation unless the sweep says otherwise."""
    given = {} if section.allocation_search is None else section.allocation_search.given()
    if section.allocation_search is None and section.mapping is None:
        given = {"method": "co"}
    whole = ("individuals", "generations", "seed")
    return {**SEARCH, **{k: int(v) if k in whole else v for k, v in given.items()}}


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
