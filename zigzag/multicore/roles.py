"""Core roles of a multi-core accelerator file, and mappings written against them.

A multi-core mapping may name cores by role instead of by id, so that one mapping serves every
core count and is read the same by ``zigzag multicore run``, ``search``, the workflow and sweeps
(docs/reference/multicore-mapping.md)::

    - name: Conv
      core_allocation: compute       # every core but the DRAM; also mesh, pooling, simd, a core type
      core_allocation_is_fixed: true
      inter_core_tiling: [K, n_cores]   # a factor may be an expression over n_cores, rows, cols
    - name: /layer1/layer1.0/conv1/Conv
      core_allocation: mesh[3]       # one core of a role: the 4th, counted round the role's cores

The roles also name the results' per-core columns (:func:`core_labels`) and say which cores are
*compute* cores (:func:`compute_core_ids`: not the pooling, SIMD or DRAM core).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.variants import expressions

_MESH_ROLES = ("pooling_core", "simd_core")
#: ``role[i]``: the i-th core of a role, counted round its cores (i modulo their number)
_ONE_OF_ROLE = re.compile(r"^\s*(\w+)\s*\[\s*(\d+)\s*\]\s*$")


def _type_of(reference: Any) -> str:
    """A core's type: its file's name without folder and extension, or its document's name."""
    if isinstance(reference, dict):
        return str(reference.get("name", "core"))
    return Path(str(reference)).stem


def core_roles(document: dict) -> dict[str, tuple[int, ...]]:
    """Role -> core ids of a multi-core document: ``compute`` (every core but the off-chip one),
    ``mesh``, ``pooling``, ``simd`` (mesh shorthand, or the ``graph`` format's roles) and one role
    per core type (``tpu_like``: the cores made from tpu_like.yaml)."""
    types: list[str] = []
    roles: dict[str, tuple[int, ...]] = {}
    mesh = document.get("mesh")
    if isinstance(mesh, dict):
        count = int(mesh.get("rows", 0)) * int(mesh.get("cols", 0))
        listed = mesh.get("core")
        listed = listed if isinstance(listed, list) and listed else [listed]
        types = [_type_of(listed[i % len(listed)]) for i in range(count)]
        roles["mesh"] = tuple(range(count))
        for role in _MESH_ROLES:
            if role in mesh:
                roles[role.removesuffix("_core")] = (len(types),)
                types.append(_type_of(mesh[role]))
    elif isinstance(document.get("cores"), dict):
        cores = document["cores"]
        types = [_type_of(cores.get(i, cores.get(str(i)))) for i in range(len(cores))]
    elif isinstance(
        document.get("cores"), list
    ):  # the graph format: the off-chip core is a listed core
        graph = document.get("graph") or {}
        offchip = graph.get("offchip_core_id")
        listed = [c for i, c in enumerate(document["cores"]) if i != offchip]
        types = [_type_of(c) for c in listed]
        for role in ("pooling", "simd"):
            if graph.get(f"{role}_core_id") is not None:
                roles[role] = (graph[f"{role}_core_id"],)
        roles["mesh"] = tuple(
            i for i in range(len(types)) if i not in {ids[0] for ids in roles.values()}
        )
    roles["compute"] = tuple(range(len(types)))
    if isinstance(
        document.get("cores"), dict
    ):  # explicit cores: a pooling or SIMD core file gives the role
        for role in ("pooling", "simd"):
            roles[role] = tuple(i for i, kind in enumerate(types) if kind == role)
    for core, kind in enumerate(types):
        if kind not in (
            "compute",
            "mesh",
            "pooling",
            "simd",
        ):  # a structural role keeps its meaning
            roles[kind] = roles.get(kind, ()) + (core,)
    return roles


def _names(document: dict) -> dict[str, int]:
    mesh = document.get("mesh") if isinstance(document.get("mesh"), dict) else {}
    return {"rows": mesh.get("rows", 1), "cols": mesh.get("cols", 1)}


def follow_cores(mapping: Any, document: dict, *, file: str = "mapping") -> Any:
    """A copy of a multi-core mapping (a list of entries) with core roles replaced by core ids and
    tiling factors that are expressions computed (``n_cores``: the entry's number of cores;
    ``rows``, ``cols``: the mesh's). ``role[i]`` is one core of a role: its i-th, counted round
    (i modulo the role's size), so layers written ``mesh[0]``, ``mesh[1]``, ... are dealt out
    round-robin over any core count. An unknown role or a factor below 1 is a one-line InputError."""
    if not isinstance(mapping, list):
        return mapping
    roles = core_roles(document)
    result = copy.deepcopy(mapping)
    for index, entry in enumerate(result):
        if not isinstance(entry, dict):
            continue
        where = f"entry '{entry.get('name', index)}'"
        if "core_allocation" in entry:
            entry["core_allocation"] = _cores(
                entry["core_allocation"], roles, file, f"{where}.core_allocation"
            )
        cores = entry.get("core_allocation", [0])
        count = len(cores) if isinstance(cores, list) else 1
        names = {**_names(document), "n_cores": count}
        for key in ("intra_core_tiling", "inter_core_tiling"):
            if key in entry:
                entry[key] = _tiling(entry[key], names, file, f"{where}.{key}")
    return result


def _cores(value: Any, roles: dict, file: str, where: str) -> Any:
    items = value if isinstance(value, list) else [value]
    result: list = []
    for item in items:
        if isinstance(item, str) and not item.strip().isdigit():
            one = _ONE_OF_ROLE.match(item)
            role = one.group(1) if one else item
            if role not in roles:
                raise InputError(
                    file,
                    where,
                    f"'{role}' is not a core role of this accelerator (roles: "
                    f"{', '.join(r for r in roles if roles[r])}); use one of them or core ids",
                )
            if not roles[role]:
                raise InputError(
                    file, where, f"this accelerator has no {role} core; change the role"
                )
            cores = roles[role]
            result += [cores[int(one.group(2)) % len(cores)]] if one else list(cores)
        elif isinstance(item, list):
            result.append(_cores(item, roles, file, where))
        else:
            result.append(item)
    return result


def _tiling(value: Any, names: dict, file: str, where: str) -> Any:
    items = value if isinstance(value, list) else [value]
    if (
        len(items) % 2 == 0
        and items
        and all(isinstance(v, (str, int)) and "," not in str(v) for v in items)
    ):
        items = [
            f"{items[i]}, {items[i + 1]}" for i in range(0, len(items), 2)
        ]  # flow style [K, 4]
    result = []
    for i, text in enumerate(items):
        dim, _, factor = str(text).partition(",")
        factor = factor.strip()
        if not factor or factor.isdigit() or factor in ("all", "*"):
            result.append(text)
            continue
        try:
            size = expressions.evaluate(factor, lambda n: _name(n, names))
        except expressions.ExpressionError as exc:
            raise InputError(file, f"{where}[{i}]", str(exc)) from None
        if not isinstance(size, int) or size < 1:
            raise InputError(
                file, f"{where}[{i}]", f"'{factor}' gives {size}, not a whole number of at least 1"
            )
        result.append(f"{dim.strip()}, {size}")
    return result


def _name(name: str, names: dict):
    if name not in names:
        raise expressions.ExpressionError(f"'{name}' is not one of {', '.join(names)}")
    return names[name]


_AUXILIARY = ("pooling", "simd")


def core_labels(document: dict) -> dict[int, str]:
    """A column-ready label per core id (not the DRAM): ``mesh_r<row>c<col>`` for a mesh core
    (the mesh is filled column by column), ``pooling``, ``simd``, else ``core<id>_<type>``."""
    roles = core_roles(document)
    mesh = document.get("mesh") if isinstance(document.get("mesh"), dict) else None
    graph = document.get("graph") if isinstance(document.get("graph"), dict) else None
    rows = int(mesh.get("rows", 1)) if mesh else int((graph or {}).get("nb_rows") or 1)
    gridded = mesh is not None or (graph is not None and graph.get("type") == "2d_mesh")
    types = {
        core: kind
        for kind, ids in roles.items()
        if kind not in ("compute", "mesh", *_AUXILIARY)
        for core in ids
    }
    labels = {}
    for core in roles["compute"]:
        if gridded and core in roles.get("mesh", ()):
            k = roles["mesh"].index(core)
            labels[core] = f"mesh_r{k % rows}c{k // rows}"
        elif any(core in roles.get(r, ()) for r in _AUXILIARY):
            labels[core] = next(r for r in _AUXILIARY if core in roles.get(r, ()))
        else:
            labels[core] = f"core{core}_{types.get(core, 'core')}"
    return labels


def compute_core_ids(document: dict) -> tuple[int, ...]:
    """The cores that carry the MAC work: every core but the DRAM, the pooling and the SIMD core
    (the ``pooling``/``simd`` roles of a mesh or ``graph`` file; in a file with explicit ``cores``,
    the cores made from a core file named ``pooling`` or ``simd``)."""
    roles = core_roles(document)
    auxiliary = set(roles.get("pooling", ())) | set(roles.get("simd", ()))
    return tuple(c for c in roles["compute"] if c not in auxiliary)
