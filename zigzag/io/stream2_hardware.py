"""Stream 2.x multi-core accelerator files, read into the late-2024 form (docs/reference/multicore-accelerator.md).

A 2.x file is told from a late-2024 one by its top-level ``offchip_core_id`` or
``core_coordinates``. It differs in that

* the off-chip core is one of ``cores:`` and ``offchip_core_id`` names it; ``core_connectivity``
  entries may name it (a bus to DRAM);
* ``core_coordinates`` (core id -> [x, y]) place the cores; with no ``core_connectivity`` the cores
  one step apart are linked (a mesh);
* ``bandwidth`` is optional (then every connectivity entry gives its own) or, in newer files, a
  table of memory-port bandwidth models, which our model does not use (a warning says so);
* core files carry ``type`` (``zigzag.compute``, ``zigzag.offchip``, ``zigzag.memory``, or the bare
  words), ``operator_types``, ``operand_precision``, ``banks`` and
  ``operational_array.systolic_dimensions``.

:func:`translate_stream2` turns such a document into a late-2024 one: the off-chip core moves to
``offchip_core`` (so it gets the last id: core ids after it shift down by one and ``core_ids`` says
how), the entries naming it lose it (our off-chip link follows the DRAM's ports, as in late-2024
Stream), and the per-core extras are kept for the multi-core model (``stream2`` in the normalised
document). :func:`strip_core_extras` takes the 2.x keys out of a core document before it is
validated. Files of Stream's AMD AIE back-end get one line saying it is not supported.
"""

from __future__ import annotations

import difflib
import logging
from typing import Any

from zigzag.errors import InputError
from zigzag.io.validation.schema import Field, Invalid, check_value, describe, unknown_field

__all__ = ["is_stream2_hardware", "strip_core_extras", "translate_stream2"]

logger = logging.getLogger(__name__)

TOP_KEYS = (
    "name",
    "cores",
    "offchip_core_id",
    "core_coordinates",
    "bandwidth",
    "unit_energy_cost",
    "core_connectivity",
    "core_memory_sharing",
    "technology_node",
    "link_area",
    "router_area",
    "clock_ghz",
)
#: keys only Stream's AIE back-end reads
AIE_TOP_KEYS = ("kernel_library", "reconfiguration", "npu", "dma", "max_object_fifo_depth")
#: 2.x core types we read; the ``zigzag.`` prefix is optional
CORE_TYPES = ("compute", "offchip", "memory")
CORE_KEYS = ("type", "operator_types", "operand_precision", "banks")
#: what our model does with each 2.x-only key (named in the warning when it has no use)
UNUSED = {
    "operand_precision": "operand precisions come from the workload",
    "banks": "memory banking is not modelled",
    "systolic_dimensions": "the array is costed as ZigZag's, not systolic",
    "technology_node": "areas and energies come from the files' figures",
}


class AIENotSupported(Invalid):
    """A file of Stream's AMD AIE back-end."""


def is_stream2_hardware(data: Any) -> bool:
    """Whether a multi-core document is in Stream 2.x's format."""
    return isinstance(data, dict) and (
        "offchip_core_id" in data
        or "core_coordinates" in data
        or any(key in data for key in AIE_TOP_KEYS)
    )


def _aie(where: str) -> AIENotSupported:
    return AIENotSupported(
        where,
        "this is a file of Stream's AMD AIE back-end, which is not supported; "
        "use a zigzag.compute / zigzag.offchip accelerator",
    )


def core_type(raw: Any, where: str) -> str | None:
    """The 2.x type of a raw core document (compute, offchip or memory), None if it gives none."""
    if not isinstance(raw, dict):
        return None
    if any(key in raw for key in AIE_TOP_KEYS):
        raise _aie(where)
    if "type" not in raw:
        return None
    value = raw["type"]
    text = str(value)
    if text.startswith("aie"):
        raise _aie(f"{where}.type")
    bare = text.removeprefix("zigzag.")
    if bare not in CORE_TYPES:
        close = difflib.get_close_matches(bare, CORE_TYPES, n=1)
        hint = f" (did you mean 'zigzag.{close[0]}'?)" if close else ""
        raise Invalid(
            f"{where}.type",
            f"unknown core type {describe(value)}{hint}; use zigzag.compute, zigzag.offchip "
            "or zigzag.memory",
        )
    return bare


def strip_core_extras(raw: Any, file: str) -> tuple[Any, dict[str, Any]]:
    """A core document without its 2.x keys, and those keys' values (a copy; ``raw`` is kept)."""
    if not isinstance(raw, dict):
        return raw, {}
    try:
        kind = core_type(raw, "")
    except Invalid as problem:
        raise InputError(file, problem.where.lstrip("."), problem.message) from None
    from zigzag.io.validation.accelerator_fields import ACCELERATOR

    known = list(ACCELERATOR.keys or ())
    for key in raw:
        if key not in known and key not in CORE_KEYS:
            close = difflib.get_close_matches(str(key), CORE_KEYS, n=1)
            if close:
                raise InputError(file, str(key), unknown_field(key, dict.fromkeys(CORE_KEYS)))
    data = {k: v for k, v in raw.items() if k not in CORE_KEYS}
    extras: dict[str, Any] = {"type": kind}
    for key in CORE_KEYS[1:]:
        if key in raw:
            extras[key] = raw[key]
    array = data.get("operational_array")
    if isinstance(array, dict) and "systolic_dimensions" in array:
        extras["systolic_dimensions"] = array["systolic_dimensions"]
        data["operational_array"] = {k: v for k, v in array.items() if k != "systolic_dimensions"}
    types = extras.get("operator_types")
    if types is not None and (
        not isinstance(types, list) or not all(isinstance(t, str) for t in types)
    ):
        raise InputError(
            file, "operator_types", "must be a list of ONNX operator names, e.g. [Conv, Gemm]"
        )
    return data, extras


def translate_stream2(data: dict, load_core) -> tuple[dict, dict[str, Any]]:
    """The late-2024 form of a 2.x document, and what only 2.x has (``stream2``).

    ``load_core(reference, where)`` returns the raw document of a core file reference (to read
    its ``type``). Problems raise :class:`Invalid`.
    """
    for key in data:
        if key in AIE_TOP_KEYS:
            raise _aie(str(key))
        if key not in TOP_KEYS:
            raise Invalid(str(key), unknown_field(key, dict.fromkeys(TOP_KEYS)))
    cores = data.get("cores")
    if not isinstance(cores, dict) or not cores:
        raise Invalid("cores", "must be a non-empty mapping of core id to core file")
    for key in cores:
        if not isinstance(key, int) or isinstance(key, bool) or key < 0:
            raise Invalid(f"cores.{key}", "core ids are whole numbers >= 0; number them 0, 1, ...")
    types = {
        cid: core_type(load_core(ref, f"cores.{cid}"), f"cores.{cid}") for cid, ref in cores.items()
    }
    offchip = _offchip_id(data, cores, types)
    kept = [cid for cid in sorted(cores) if cid != offchip]
    ids = {old: new for new, old in enumerate(kept)}
    if offchip is not None:
        ids[offchip] = len(kept)
    out: dict[str, Any] = {"name": data.get("name", "")} if "name" in data else {}
    out["cores"] = {ids[cid]: cores[cid] for cid in kept}
    if offchip is not None:
        out["offchip_core"] = cores[offchip]
    bandwidth = _global_bandwidth(data.get("bandwidth"))
    connectivity = data.get("core_connectivity")
    coordinates = _coordinates(data.get("core_coordinates"), cores)
    if connectivity is None or connectivity == []:
        connectivity = _mesh_from_coordinates(coordinates, kept, bandwidth)
    out["core_connectivity"] = _connectivity(connectivity, ids, offchip, bandwidth, len(cores))
    out["bandwidth"] = bandwidth if bandwidth is not None else _any_bandwidth(out)
    for key in ("unit_energy_cost", "link_area", "router_area", "clock_ghz"):
        if key in data:
            out[key] = data[key]
    if "core_memory_sharing" in data:
        out["core_memory_sharing"] = _sharing(data["core_memory_sharing"], ids, offchip)
    extras = {
        "core_ids": {str(old): new for old, new in ids.items()},
        "coordinates": {str(ids[c]): xy for c, xy in coordinates.items()},
        "core_types": {str(ids[c]): t or "compute" for c, t in types.items()},
    }
    unused = [key for key in ("technology_node",) if key in data]
    if isinstance(data.get("bandwidth"), dict):
        unused.append("bandwidth")
    if unused:
        logger.warning(
            "%s: %s not used by our model (%s)",
            data.get("name", "accelerator"),
            ", ".join(unused),
            "; ".join(
                UNUSED.get(k, "memory-port bandwidth models are not modelled") for k in unused
            ),
        )
    return out, extras


def _offchip_id(data: dict, cores: dict, types: dict) -> int | None:
    if "offchip_core_id" not in data:
        typed = [cid for cid, t in types.items() if t == "offchip"]
        if len(typed) > 1:
            raise Invalid("cores", f"cores {typed} are all of type offchip; keep one")
        return typed[0] if typed else None
    value = data["offchip_core_id"]
    if not isinstance(value, int) or isinstance(value, bool) or value not in cores:
        raise Invalid(
            "offchip_core_id",
            f"{describe(value)} is not a core id of cores ({', '.join(map(str, sorted(cores)))}); "
            "give the id of the DRAM core",
        )
    if types.get(value) not in (None, "offchip"):
        raise Invalid(
            "offchip_core_id",
            f"core {value} is of type {types[value]}, not offchip; name the DRAM core",
        )
    return value


def _global_bandwidth(value: Any) -> float | None:
    if value is None or isinstance(value, dict):
        return None  # a table of memory-port models: not a link bandwidth
    return check_value(value, Field("float", what="a bandwidth in bits per cycle"), "bandwidth")


def _any_bandwidth(out: dict) -> float:
    """A stand-in for the late-2024 reader's required global bandwidth: never used when every
    connectivity entry has its own."""
    for entry in out["core_connectivity"]:
        if isinstance(entry, dict) and "bandwidth" in entry:
            return entry["bandwidth"]
    return 1.0


def _coordinates(value: Any, cores: dict) -> dict[int, list[int]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid("core_coordinates", "must map core ids to [x, y], e.g. {0: [0, 0]}")
    out = {}
    for key, xy in value.items():
        if key not in cores:
            raise Invalid(f"core_coordinates.{key}", f"core {key} is not in cores; use a core id")
        if (
            not isinstance(xy, list)
            or len(xy) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in xy)
        ):
            raise Invalid(f"core_coordinates.{key}", f"{describe(xy)} is not [x, y] (two integers)")
        out[key] = list(xy)
    return out


def _mesh_from_coordinates(
    coordinates: dict[int, list[int]], kept: list[int], bandwidth: float | None
) -> list:
    """Links between the compute cores one step apart (what coordinates alone describe)."""
    if not coordinates:
        raise Invalid(
            "core_connectivity",
            "required field 'core_connectivity' is missing; add the linked core pairs "
            "(or core_coordinates for a mesh)",
        )
    if bandwidth is None:
        raise Invalid(
            "bandwidth",
            "a mesh from core_coordinates needs a bandwidth; add bandwidth: <bits/cycle>",
        )
    placed = [c for c in kept if c in coordinates]
    return [
        [a, b]
        for i, a in enumerate(placed)
        for b in placed[i + 1 :]
        if sum(abs(p - q) for p, q in zip(coordinates[a], coordinates[b])) == 1
    ]


def _connectivity(
    entries: Any, ids: dict[int, int], offchip: int | None, bandwidth: float | None, count: int
) -> list:
    if not isinstance(entries, list):
        raise Invalid("core_connectivity", f"must be a list, got {describe(entries)}")
    out = []
    for i, entry in enumerate(entries):
        where = f"core_connectivity[{i}]"
        body = dict(entry) if isinstance(entry, dict) else {"cores": entry}
        members = body.get("cores")
        if isinstance(members, str):
            members = [part.strip() for part in members.split(",")]
            members = [int(p) if p.isdigit() else p for p in members]
        if not isinstance(members, list):
            raise Invalid(f"{where}.cores", "must list core ids, e.g. [0, 1]")
        for core in members:
            if core not in ids:
                raise Invalid(
                    f"{where}.cores",
                    f"core {describe(core)} is not in cores (0..{count - 1}); use an existing id",
                )
        if "bandwidth" not in body and bandwidth is None:
            raise Invalid(
                f"{where}.bandwidth",
                "required: the file has no global bandwidth; add bandwidth: <bits/cycle>",
            )
        on_chip = [ids[c] for c in members if c != offchip]
        if len(on_chip) < 2:
            continue  # a link to DRAM: our off-chip link follows the DRAM's ports
        if body.get("type", "link") == "link" and len(on_chip) != 2:
            raise Invalid(where, f"a link joins two cores, not {len(on_chip)}; use type: bus")
        body["cores"] = on_chip
        out.append(body)
    return out


def _sharing(entries: Any, ids: dict[int, int], offchip: int | None) -> list:
    if not isinstance(entries, list):
        raise Invalid("core_memory_sharing", f"must be a list, got {describe(entries)}")
    out = []
    for i, entry in enumerate(entries):
        members = entry
        if isinstance(entry, str):
            members = [int(p) if p.strip().isdigit() else p for p in entry.split(",")]
        if not isinstance(members, list):
            raise Invalid(f"core_memory_sharing[{i}]", "must list core ids, e.g. [0, 1]")
        for core in members:
            if core not in ids or core == offchip:
                raise Invalid(
                    f"core_memory_sharing[{i}]",
                    f"core {describe(core)} is not an on-chip core; use on-chip core ids",
                )
        out.append([ids[c] for c in members])
    return out
