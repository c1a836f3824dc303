"""Stream 2.x mapping files (a mapping, not a list), read into our mapping entries.

::

    layers:                                   # per node name or ONNX op type
      - name: Conv
        core_allocation: [[0, 1, 2, 3]]       # one list: candidate cores; several: one core list per group
        inter_core_tiling: [[{dim: D6, split: 4}]]
        kernel: ...                           # an AIE kernel: not used (warning)
    fused_groups:                             # layer stacks, in workload order
      - name: Group_0
        layers: [Conv, Relu, MaxPool]         # node names or op types
        intra_core_tiling: [{dim: /maxpool/MaxPool.D2, tile: 1}]   # <layer>.<dim>, tile size
    runtime_args: ...                         # not used (warning)

``D0 ... Dn`` are Stream 2.x's generic loop dimensions: the n-th loop of the layer in 2.x's own
order, resolved per layer by :func:`resolve_generic_dims` (our names, ``K``, ``OY``, ..., are
accepted too). A tile size ``t`` along a loop of size ``s`` becomes ``ceil(s / t)`` computation
nodes along it. Layers no entry names are mapped automatically (``zigzag.multicore.automap``).
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from dataclasses import replace

from zigzag.errors import InputError

logger = logging.getLogger(__name__)

GENERIC = re.compile(r"^D(\d+)$")
TOP_KEYS = ("layers", "fused_groups", "runtime_args")
LAYER_KEYS = ("name", "core_allocation", "inter_core_tiling", "intra_core_tiling", "kernel")
GROUP_KEYS = ("name", "layers", "intra_core_tiling")
#: Stream 2.x's loop order per operator (its ONNX parsers' iteration spaces), in our loop names
_CONV = ("B", "OX", "OY", "FX", "FY", "C", "K", "G")
_POOL = ("B", "K", "OY", "OX", "FY", "FX")
GENERIC_ORDER = {
    "Conv": _CONV,
    "MaxPool": _POOL,
    "AveragePool": _POOL,
    "GlobalAveragePool": _POOL,
    "GlobalMaxPool": _POOL,
    "Gemm": ("D", "C", "K"),
}
_BATCH = ("B", "H")


def is_dict_mapping(data: object) -> bool:
    """Whether loaded mapping data is in Stream 2.x's form: a mapping with ``layers``,
    ``fused_groups`` or ``runtime_args`` (or a near spelling of one)."""
    return isinstance(data, dict) and any(
        difflib.get_close_matches(str(key), TOP_KEYS, n=1, cutoff=0.8) for key in data
    )


def generic_order(op_type: str, sizes: dict[str, int]) -> tuple[str, ...] | None:
    """Our loop names in Stream 2.x's order for a layer, or None if we do not know its order."""
    if op_type in GENERIC_ORDER:
        return GENERIC_ORDER[op_type]
    if op_type == "MatMul":  # (batch..., rows, columns, contraction)
        return (*(d for d in _BATCH if d in sizes), "D", "K", "C")
    if set(sizes) <= {"B", "H", "D", "K"}:  # element-wise: the output's axes
        return tuple(d for d in ("B", "H", "D", "K") if d in sizes)
    return None


def is_generic(entry) -> bool:
    """Whether an entry names Stream 2.x loops (D0..Dn) or tile sizes."""
    return bool(entry.tile_sizes) or any(
        GENERIC.match(str(d)) for d, _ in entry.inter_core_tiling + entry.intra_core_tiling
    )


def resolve_generic_dims(entry, op_type: str, sizes: dict[str, int], file, where: str):
    """``entry`` with its D0..Dn loops named as the layer's and its tile sizes as factors."""
    if not is_generic(entry):
        return entry

    def name(dim: str) -> str:
        match = GENERIC.match(dim)
        if match is None:
            found = dim
        else:
            order = generic_order(op_type, sizes)
            if order is None:
                raise InputError(
                    file,
                    where,
                    f"dimension {dim}: Stream 2.x's loop order of {op_type} is not known to us; "
                    f"name the loop instead ({', '.join(sizes)})",
                )
            index = int(match.group(1))
            found = order[index] if index < len(order) else None
        if found not in sizes:
            raise InputError(
                file,
                where,
                f"dimension {dim} does not exist in this {op_type} layer (its loops: "
                f"{', '.join(f'{d}={s}' for d, s in sizes.items())}); use one of them",
            )
        return found

    intra = [(name(d), f) for d, f in entry.intra_core_tiling]
    for dim, tile in entry.tile_sizes:
        ours = name(dim)
        intra = [(d, f) for d, f in intra if d != ours]
        intra.append((ours, math.ceil(sizes[ours] / tile)))
    return replace(
        entry,
        inter_core_tiling=tuple((name(d), f) for d, f in entry.inter_core_tiling),
        intra_core_tiling=tuple(intra),
        tile_sizes=(),
    )


def parse_dict_mapping(data: dict, file: str | None) -> tuple[dict[str, dict], tuple]:
    """The entries (by name, as ``MappingEntry`` fields) and fused groups of a 2.x mapping."""
    _known(data, TOP_KEYS, file, "")
    unused = [key for key in ("runtime_args",) if key in data]
    layers = data.get("layers", [])
    if not isinstance(layers, list):
        raise InputError(file, "layers", "must be a list of entries (- name: Conv ...)")
    entries: dict[str, dict] = {}
    for index, item in enumerate(layers):
        entry, kernel = _layer(item, file, f"layers[{index}]")
        entries[entry["name"]] = entry
        if kernel and "kernel" not in unused:
            unused.append("kernel")
    groups = []
    for index, item in enumerate(data.get("fused_groups", []) or []):
        where = f"fused_groups[{index}]"
        if not isinstance(item, dict):
            raise InputError(file, where, "must be a mapping with layers and intra_core_tiling")
        _known(item, GROUP_KEYS, file, f"{where}.")
        members = item.get("layers")
        if (
            not isinstance(members, list)
            or not members
            or not all(isinstance(m, str) for m in members)
        ):
            raise InputError(file, f"{where}.layers", "must list node names or op types")
        groups.append(tuple(members))
        for i, tiling in enumerate(item.get("intra_core_tiling", []) or []):
            layer, dim, tile = _tile(tiling, file, f"{where}.intra_core_tiling[{i}]")
            entry = entries.setdefault(layer, {"name": layer, "core_allocation": ()})
            entry["tile_sizes"] = (*entry.get("tile_sizes", ()), (dim, tile))
    if unused:
        logger.warning(
            "%s: %s not used (our model has no AIE kernels or runtime arguments)",
            file or "<mapping>",
            ", ".join(unused),
        )
    return entries, tuple(groups)


def _known(item: dict, keys: tuple[str, ...], file, prefix: str) -> None:
    for key in item:
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InputError(
                file,
                f"{prefix}{key}",
                f"unknown field{hint}; allowed fields: {', '.join(keys)}; remove it or fix its spelling",
            )


def _layer(item: object, file, where: str) -> tuple[dict, bool]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise InputError(
            file, where, "each entry is a mapping with a name (a node name or op type)"
        )
    _known(item, LAYER_KEYS, file, f"{where}.")
    where = f"layers '{item['name']}'"
    cores, groups = _allocation(item.get("core_allocation"), file, f"{where}.core_allocation")
    tiling = item.get("inter_core_tiling", []) or []
    if not isinstance(tiling, list):
        raise InputError(
            file, f"{where}.inter_core_tiling", "must be a list, e.g. [[{dim: D6, split: 4}]]"
        )
    if tiling and all(isinstance(t, list) for t in tiling):
        if len(tiling) > 1:
            raise InputError(
                file,
                f"{where}.inter_core_tiling",
                "gives several tilings; keep one ([[{dim: D6, split: 4}]])",
            )
        tiling = tiling[0]
    inter = tuple(_split(t, file, f"{where}.inter_core_tiling[{i}]") for i, t in enumerate(tiling))
    intra = tuple(
        _split(t, file, f"{where}.intra_core_tiling[{i}]")
        for i, t in enumerate(item.get("intra_core_tiling", []) or [])
    )
    splits = math.prod(f for _, f in inter)
    entry = {
        "name": item["name"],
        "core_allocation": cores,
        # one core per group: the cores listed, in order, take the groups of the split
        "core_allocation_is_fixed": groups is not None or len(cores) == 1 or splits == len(cores),
        "inter_core_tiling": inter,
        "intra_core_tiling": intra,
        "group_allocation": groups,
    }
    return entry, "kernel" in item


def _allocation(value: object, file, where: str):
    def ids(items) -> bool:
        return (
            isinstance(items, list)
            and items
            and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in items)
        )

    if value is None:
        return (), None
    if ids(value):
        return tuple(value), None
    if isinstance(value, list) and value and all(ids(v) for v in value):
        if len(value) == 1:
            return tuple(value[0]), None
        groups = tuple(tuple(v) for v in value)
        return tuple(dict.fromkeys(c for g in groups for c in g)), groups
    raise InputError(file, where, f"{value!r} is not core ids; write e.g. [[0, 1, 2, 3]]")


def _split(item: object, file, where: str) -> tuple[str, int]:
    if not isinstance(item, dict) or set(item) - {"dim", "split"} or "dim" not in item:
        raise InputError(file, where, "must be {dim: D<n>, split: <count>}")
    split = item.get("split", 1)
    if not isinstance(split, int) or isinstance(split, bool) or split < 1:
        raise InputError(file, f"{where}.split", f"{split!r} is not a whole number >= 1")
    return str(item["dim"]), split


def _tile(item: object, file, where: str) -> tuple[str, str, int]:
    if not isinstance(item, dict) or set(item) - {"dim", "tile"} or "dim" not in item:
        raise InputError(file, where, "must be {dim: <layer>.D<n>, tile: <size>}")
    layer, _, dim = str(item["dim"]).rpartition(".")
    if not layer or not dim:
        raise InputError(
            file, f"{where}.dim", f"{item['dim']!r} is not <layer>.<dim>, e.g. Conv.D2"
        )
    tile = item.get("tile", 1)
    if not isinstance(tile, int) or isinstance(tile, bool) or tile < 1:
        raise InputError(file, f"{where}.tile", f"{tile!r} is not a whole number >= 1")
    return layer, dim, tile
