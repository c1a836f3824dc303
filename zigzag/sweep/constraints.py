"""The constraints of a sweep (``area <= 5 mm2``), checked before any variant is evaluated.

A constraint compares metrics of a row (``area``, ``energy``, ``latency``, ``edp``,
``utilization``, a column of ``variants.csv`` or a parameter of the sweep) with numbers that may
carry a unit. :func:`check_constraint` rejects, with a one-line message, a name that is none of
these (with the closest one and the list) and a unit of the wrong kind (``area <= 5 ms``).
:func:`summary` says in one line why no row of a finished sweep is ``ok``.
"""

from __future__ import annotations

import difflib
import re

from zigzag.variants import expressions

#: the short metric names a constraint may use -> the kinds of unit they may be compared with
METRICS: dict[str, tuple[str, ...]] = {
    "area": ("area",),
    "energy": ("energy",),
    "latency": ("time", "cycles"),
    "edp": (),
    "utilization": (),
}
#: the figure columns of variants.csv a constraint may name -> the kinds of unit they take, per kind of sweep
_COMMON = {
    "area_mm2": ("area",),
    "energy_pJ": ("energy",),
    "latency_cycles": ("cycles",),
    "latency_s": ("time",),
    "edp_pJ_cycles": (),
    "edp_Js": (),
    "clock_ghz": (),
}
COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "single": {
        **_COMMON,
        "mac_energy_pJ": ("energy",),
        "memory_energy_pJ": ("energy",),
        "ideal_cycles": ("cycles",),
        "computation_cycles": ("cycles",),
        "onloading_cycles": ("cycles",),
        "offloading_cycles": ("cycles",),
        "mac_utilization": (),
        "tclk_ns": (),
        "latency_ns": (),
        "layers": (),
    },
    "multicore": {
        **_COMMON,
        "dram_traffic_bits": ("size",),
        "cns": (),
        "search_front_points": (),
        "search_schedules": (),
    },
}
#: columns named after the hardware: energy of a memory (single-core), energy of a term and
#: utilisation of a core (multi-core)
_OPEN_COLUMNS = {
    "single": ((re.compile(r"\w+_energy_pJ"), ("energy",), "<memory>_energy_pJ"),),
    "multicore": (
        (re.compile(r"\w+_pJ"), ("energy",), "<term>_pJ"),
        (re.compile(r"util_core\d+"), (), "util_core<id>"),
    ),
}


class ConstraintProblem(ValueError):
    """A constraint naming something unknown or comparing a metric with a unit of another kind."""


def check_constraint(text: str, parameters: tuple[str, ...] = (), kind: str = "single") -> None:
    """Raise ConstraintProblem when ``text`` (already parsed) names an unknown metric or uses a unit
    of the wrong kind; ``parameters``: the sweep's parameter names, which constraints may use too;
    ``kind``: single or multicore (their tables have different columns)."""
    named = expressions.names(expressions.parse(text))
    kinds = {name: _kinds(name, parameters, kind) for name in named}
    for name, takes in kinds.items():
        if takes is False:
            columns = [*COLUMNS[kind], *(shown for _, _, shown in _OPEN_COLUMNS[kind])]
            close = difflib.get_close_matches(name, [*METRICS, *COLUMNS[kind], *parameters], n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConstraintProblem(
                f"'{name}' is not a metric{hint}; use {', '.join(METRICS)}, a column of variants.csv "
                f"({', '.join(columns)})"
                + (f" or a parameter ({', '.join(parameters)})" if parameters else "")
            )
    units = [u for u in re.findall(r"\d\s*([A-Za-z]+\d?)\b", text) if u in expressions.UNITS]
    metric = [name for name in named if kinds[name] is not None]
    for unit in units:
        of = expressions.UNITS[unit][0]
        wrong = [name for name in metric if of not in kinds[name]]
        if wrong and not kinds[wrong[0]]:
            raise ConstraintProblem(
                f"{wrong[0]} is a plain number, so it takes no unit ('{unit}'); remove the unit"
            )
        if wrong:
            takes = " or ".join(f"{k} ({_unit_names(k)})" for k in kinds[wrong[0]])
            raise ConstraintProblem(
                f"'{unit}' is a unit of {of} but {wrong[0]} takes a unit of {takes}; "
                f"write e.g. '{wrong[0]} <= {_EXAMPLE[kinds[wrong[0]][0]]}'"
            )


_EXAMPLE = {
    "area": "5 mm2",
    "energy": "3 uJ",
    "time": "2 ms",
    "cycles": "1e6 cycles",
    "size": "1 MiB",
}


def _unit_names(kind: str) -> str:
    return ", ".join(unit for unit, (of, _) in expressions.UNITS.items() if of == kind)


def _kinds(name: str, parameters: tuple[str, ...], kind: str):
    """The unit kinds ``name`` may be compared with (() for plain numbers, None for a parameter:
    any), or False if unknown."""
    if name in METRICS:
        return METRICS[name]
    if name in COLUMNS[kind]:
        return COLUMNS[kind][name]
    if name in parameters:
        return None
    return next(
        (kinds for pattern, kinds, _ in _OPEN_COLUMNS[kind] if pattern.fullmatch(name)), False
    )
