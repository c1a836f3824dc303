"""The links and memory sharing of a multi-core accelerator file: its `core_connectivity` and
`core_memory_sharing` entries checked and added to a :class:`~zigzag.io.stream_links.Wiring`, and
the checks of the figures they carry (bandwidth, energy per active cycle)."""

from __future__ import annotations

import math
import re
from typing import Any

from zigzag.hardware.accelerator import Accelerator
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.stream_links import Wiring
from zigzag.io.validation.schema import Field, Invalid, check_value, describe, unknown_field

__all__ = [
    "CONNECTION_KEYS",
    "check_shared_memories",
    "link_bandwidth",
    "link_energy",
    "missing_field",
    "read_connectivity",
    "read_sharing",
]

#: the fields of a `core_connectivity` entry written as a mapping
CONNECTION_KEYS = {"type": None, "cores": None, "bandwidth": None, "unit_energy_cost": None}
_IDS = re.compile(r"\s*\d+\s*(,\s*\d+\s*)+")


def missing_field(where: str, what: str):
    key = where.rsplit(".", 1)[-1]
    raise Invalid(where, f"required field '{key}' is missing; add {key}: <{what}>")


def link_bandwidth(value: Any, where: str) -> float:
    number = check_value(value, Field("float", what="a bandwidth in bits per cycle"), where)
    if math.isnan(number) or number <= 0:
        raise Invalid(
            where, f"must be a positive number of bits per cycle, got {value}; give e.g. 32"
        )
    return number


def link_energy(value: Any, where: str) -> float:
    number = check_value(value, Field("float", what="an energy per active cycle"), where)
    if math.isnan(number) or number < 0:
        raise Invalid(
            where, f"must be zero or more, got {value}; give the energy per active cycle, e.g. 0"
        )
    return number


def _core_ids(entry: Any, where: str, count: int, kind: str) -> list[int]:
    """The core ids of a connectivity or sharing entry ('0, 1' or [0, 1])."""
    if isinstance(entry, str):
        if not _IDS.fullmatch(entry):
            raise Invalid(
                where,
                f"'{entry}' is not a list of core ids; write them separated by commas, e.g. '0, 1'",
            )
        ids = [int(part) for part in entry.split(",")]
    elif isinstance(entry, list):
        for i, core in enumerate(entry):
            check_value(core, Field("int", minimum=0, what="a core id"), f"{where}[{i}]")
        ids = list(entry)
    else:
        raise Invalid(where, f"must be core ids like '0, 1' or [0, 1], got {describe(entry)}")
    if len(ids) < 2:
        raise Invalid(
            where, f"names {len(ids)} core; a {kind} joins at least two cores, e.g. '0, 1'"
        )
    for core in ids:
        if core >= count:
            note = (
                "; the off-chip core is joined to every core automatically"
                if kind != "memory-sharing group"
                else ""
            )
            raise Invalid(
                where,
                f"core {core} does not exist (core ids are 0..{count - 1}{note}); use an existing id",
            )
    if len(set(ids)) != len(ids):
        raise Invalid(where, f"names a core twice ({entry}); list each core once")
    return ids


def read_connectivity(
    wiring: Wiring,
    entries: Any,
    count: int,
    bandwidth: float,
    energy: float,
    sharing: list[tuple[int, ...]],
) -> None:
    if not isinstance(entries, list):
        raise Invalid(
            "core_connectivity",
            f"must be a list, got {describe(entries)}; "
            "write one '- a, b' line per linked pair, or []",
        )
    for i, entry in enumerate(entries):
        where = f"core_connectivity[{i}]"
        kind, width, cost = "link", bandwidth, energy
        if isinstance(entry, dict):
            for key in entry:
                if key not in CONNECTION_KEYS:
                    raise Invalid(f"{where}.{key}", unknown_field(key, CONNECTION_KEYS))
            kind = check_value(
                entry.get("type", "link"), Field("str", choices=("link", "bus")), f"{where}.type"
            )
            if "cores" not in entry:
                missing_field(f"{where}.cores", "the core ids, e.g. [0, 1]")
            ids = _core_ids(entry["cores"], f"{where}.cores", count, kind)
            width = (
                link_bandwidth(entry["bandwidth"], f"{where}.bandwidth")
                if "bandwidth" in entry
                else bandwidth
            )
            cost = (
                link_energy(entry["unit_energy_cost"], f"{where}.unit_energy_cost")
                if "unit_energy_cost" in entry
                else energy
            )
        else:
            ids = _core_ids(entry, where, count, "link")
        if kind == "link" and len(ids) != 2:
            raise Invalid(
                where,
                f"a link joins exactly two cores but {len(ids)} are named; write a shared "
                f"bus as {{type: bus, cores: {ids}}} or one pair per line",
            )
        for group in sharing:
            both = [c for c in ids if c in group]
            if len(both) >= 2:
                raise Invalid(
                    where,
                    f"links cores {both[0]} and {both[1]}, which share memory "
                    "(core_memory_sharing); remove this link: shared memory needs none",
                )
        if kind == "bus":
            wiring.bus(ids, width, cost)
        else:
            wiring.pair(*ids, width, cost)


def read_sharing(entries: Any, count: int) -> list[tuple[int, ...]]:
    if not isinstance(entries, list):
        raise Invalid(
            "core_memory_sharing",
            f"must be a list, got {describe(entries)}; "
            "write one '- a, b' line per group of cores sharing their top memories",
        )
    groups: list[tuple[int, ...]] = []
    seen: dict[int, int] = {}
    for i, entry in enumerate(entries):
        where = f"core_memory_sharing[{i}]"
        ids = _core_ids(entry, where, count, "memory-sharing group")
        for core in ids:
            if core in seen:
                raise Invalid(
                    where,
                    f"core {core} is already in core_memory_sharing[{seen[core]}]; "
                    "merge the two groups into one",
                )
            seen[core] = i
        groups.append(tuple(ids))
    return groups


def check_shared_memories(
    sharing: list[tuple[int, ...]], cores: list[dict], capacity_only: bool = False
) -> None:
    """Cores of one sharing group must have identical top memories (they are one instance); with
    `capacity_only` (Stream 2.x's rule) equal top-memory names and capacities suffice."""
    for i, group in enumerate(sharing):
        first = _top_memories(cores[group[0]], capacity_only)
        for other in group[1:]:
            mine = _top_memories(cores[other], capacity_only)
            if mine != first:
                ours, theirs = ([name for name, _ in tops] for tops in (first, mine))
                detail = (
                    f"top memories {', '.join(ours)} vs {', '.join(theirs)}"
                    if ours != theirs
                    else "the same top memory names but different sizes, costs or ports"
                )
                raise Invalid(
                    f"core_memory_sharing[{i}]",
                    f"cores {group[0]} and {other} share memory but have "
                    f"{detail}; make their top memories identical (names included) in both core files",
                )


def _top_memories(core: dict, capacity_only: bool = False) -> list[tuple[str, Any]]:
    accelerator: Accelerator = accelerator_from_dict(core["accelerator"])
    lower = {low for low, _ in accelerator.memory_edges}
    if capacity_only:
        return [(m.name, m.size) for m in accelerator.memories if m.name not in lower]
    return [
        (m.name, (core["accelerator"]["memories"][m.name], core["memory_ports"].get(m.name)))
        for m in accelerator.memories
        if m.name not in lower
    ]
