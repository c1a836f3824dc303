"""Stream mapping files: which cores a layer may use and how it is cut into computation nodes.

A Stream mapping file is a YAML list of entries (docs/reference/multicore-mapping.md)::

    - name: default                 # a node name, an ONNX op type (Conv, Relu, ...) or default
      core_allocation: [0, 1]       # candidate cores (default [0])
      core_allocation_is_fixed: true
      intra_core_tiling: [OY, all]  # CNs run one after another on a core (dim, factor | all)
      inter_core_tiling: [K, 4]     # groups that may go to different cores (dim, factor | *)
      spatial_mapping: {D1: [K, 32]}          # only used for cores without dataflows
      memory_operand_links: {O: O, W: I2, I: I1}  # accepted; Stream always links I->I1, W->I2, O->O

A later entry with the same name replaces an earlier one. An entry may also fix a core per
group (the seed-era form): ``core_allocation: [[0, 1], [2, 3]]`` is read as one tuple per group;
the CNs of group ``g`` then go to the first core of tuple ``g`` (see ``MappingEntry.core_of_group``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.roles import follow_cores
from zigzag.multicore.stream2_mapping import is_dict_mapping, parse_dict_mapping

TILING_PATTERN = re.compile(r"^([A-Z]+|D[0-9]+), ([0-9]+|all|\*)$")  # D<n>: Stream 2.x
SPATIAL_PATTERN = re.compile(r"^([A-Z]+), ([0-9]+)$")
HINT_PATTERN = re.compile(r"^[A-Z]+$")
OA_DIMS = ("D1", "D2", "D3", "D4")
KNOWN_FIELDS = (
    "name",
    "core_allocation",
    "core_allocation_is_fixed",
    "intra_core_tiling",
    "inter_core_tiling",
    "spatial_mapping",
    "memory_operand_links",
    "spatial_mapping_hint",
    "temporal_ordering",
)
STREAM_MEMORY_OPERAND_LINKS = {"I": "I1", "W": "I2", "O": "O"}

Tiling = tuple[tuple[str, "int | str"], ...]
"""Tiling entries ``(layer dim, factor)``; factor is an int, ``"all"`` or ``"*"``."""


@dataclass(frozen=True)
class MappingEntry:
    """One entry of a Stream mapping file, normalised (defaults filled in)."""

    name: str
    core_allocation: tuple[int, ...] = (0,)
    core_allocation_is_fixed: bool = False
    intra_core_tiling: Tiling = ()
    inter_core_tiling: Tiling = ()
    spatial_mapping: dict[str, tuple[tuple[str, int], ...]] | None = None
    group_allocation: tuple[tuple[int, ...], ...] | None = None
    memory_operand_links: dict[str, str] = field(
        default_factory=lambda: dict(STREAM_MEMORY_OPERAND_LINKS)
    )
    #: Stream 2.x fused-group tile sizes (dim, size), made factors per layer (``stream2_mapping``)
    tile_sizes: tuple[tuple[str, int], ...] = ()

    def core_of_group(self, group: int) -> int:
        """Core of the CNs of ``group`` when the allocation is fixed (Stream: list index = group id)."""
        if self.group_allocation is not None:
            return self.group_allocation[group][0]
        return self.core_allocation[group]

    @property
    def nb_fixed_groups(self) -> int:
        """How many groups a fixed allocation can place (one core, or one tuple, per group)."""
        return len(
            self.group_allocation if self.group_allocation is not None else self.core_allocation
        )

    def to_dict(self) -> dict:
        """The mapping-file form of this entry."""
        data: dict = {
            "name": self.name,
            "core_allocation": [list(g) for g in self.group_allocation]
            if self.group_allocation is not None
            else list(self.core_allocation),
            "core_allocation_is_fixed": self.core_allocation_is_fixed,
            "intra_core_tiling": [f"{d}, {f}" for d, f in self.intra_core_tiling],
            "inter_core_tiling": [f"{d}, {f}" for d, f in self.inter_core_tiling],
        }
        if self.spatial_mapping is not None:
            data["spatial_mapping"] = {
                oa: [f"{d}, {f}" for d, f in p] for oa, p in self.spatial_mapping.items()
            }
        return data


@dataclass(frozen=True)
class StreamMapping:
    """All entries of a mapping file, by name (``default`` always present)."""

    entries: dict[str, MappingEntry]
    file: str | None = None
    #: Stream 2.x ``fused_groups``: the node names or op types of each layer stack, None otherwise
    fused_groups: tuple[tuple[str, ...], ...] | None = None

    def entry_for(self, node_name: str, op_type: str) -> MappingEntry:
        """Entry of a node: by name, else by ONNX op type, else ``default``; empty tilings from ``default``."""
        default = self.entries["default"]
        entry = self.entries.get(node_name) or self.entries.get(op_type) or default
        changes = {}
        if not entry.core_allocation:
            changes["core_allocation"] = default.core_allocation
        if not entry.intra_core_tiling:
            changes["intra_core_tiling"] = default.intra_core_tiling
        if not entry.inter_core_tiling:
            changes["inter_core_tiling"] = default.inter_core_tiling
        return replace(entry, **changes) if changes else entry


def load_stream_mapping(path: str | Path, accelerator=None) -> StreamMapping:
    """Read and validate a Stream mapping YAML file; one-line ``InputError`` on any mistake.

    With ``accelerator`` (the multi-core file's path, its YAML document, or a loaded
    ``MultiCoreAccelerator``), core roles (``mesh``, ``mesh[i]``, ``compute``, ...) and tiling
    expressions (``n_cores``, ``rows``, ``cols``) are resolved against it (``zigzag.multicore.roles``)."""
    from zigzag.io.yaml_files import load_yaml  # lazy: YAML stays out of `zigzag --help`

    file = str(path)
    data = load_yaml(path)
    if is_dict_mapping(data):
        return complete_dict_mapping(_dict_mapping(data, file), accelerator)
    document = accelerator_document(accelerator)
    if document is not None:
        data = follow_cores(data, document, file=file)
    return parse_stream_mapping(data, file)


def _dict_mapping(data: dict, file: str | None) -> StreamMapping:
    """A Stream 2.x mapping's entries and fused groups (``zigzag.multicore.stream2_mapping``)."""
    entries, groups = parse_dict_mapping(data, file)
    return StreamMapping(
        {name: MappingEntry(**fields) for name, fields in entries.items()},
        file,
        fused_groups=groups,
    )


def complete_dict_mapping(mapping: StreamMapping, accelerator) -> StreamMapping:
    """A Stream 2.x mapping with core ids as ours and a ``default`` entry: the cores that run any
    operator (``zigzag.multicore.automap``), which the entries naming no cores also take."""
    from zigzag.multicore.core_kinds import general_cores
    from zigzag.multicore.hardware import MultiCoreAccelerator

    if not isinstance(accelerator, MultiCoreAccelerator):
        if accelerator is None:
            raise InputError(
                mapping.file,
                None,
                "a Stream 2.x mapping (layers: / fused_groups:) is read with its accelerator; "
                "give the accelerator too",
            )
        from zigzag.multicore.topology import load_multicore_accelerator

        accelerator = load_multicore_accelerator(getattr(accelerator, "file", accelerator))
    ids = {
        int(k): v for k, v in accelerator.document.get("stream2", {}).get("core_ids", {}).items()
    }
    compute = {c.id for c in accelerator.compute_cores}
    entries = {}
    for name, entry in mapping.entries.items():
        cores = tuple(ids.get(c, c) for c in entry.core_allocation)
        for core in cores:
            if core not in compute:
                raise InputError(
                    mapping.file,
                    f"layers '{name}'.core_allocation",
                    f"core {core} is not a compute core of {accelerator.name} "
                    f"({', '.join(map(str, sorted(compute)))}); use one of them",
                )
        groups = entry.group_allocation
        if groups is not None:
            groups = tuple(tuple(ids.get(c, c) for c in g) for g in groups)
        entries[name] = replace(entry, core_allocation=cores, group_allocation=groups)
    entries.setdefault(
        "default", MappingEntry("default", core_allocation=general_cores(accelerator))
    )
    return replace(mapping, entries=entries)


def accelerator_document(accelerator) -> dict | None:
    """The multi-core file's own YAML document (what core roles are read from), or None."""
    if accelerator is None or isinstance(accelerator, dict):
        return accelerator
    path = getattr(accelerator, "file", accelerator)
    if not path or not Path(str(path)).is_file():
        return None
    from zigzag.io.yaml_files import load_yaml

    document = load_yaml(path)
    return document if isinstance(document, dict) else None


def parse_stream_mapping(data: object, file: str | None = None, accelerator=None) -> StreamMapping:
    """Validate already-loaded mapping data (a list of dicts, or Stream 2.x's mapping, which needs
    its ``accelerator``)."""
    if is_dict_mapping(data):
        return complete_dict_mapping(_dict_mapping(data, file), accelerator)
    if not isinstance(data, list) or not data:
        raise InputError(
            file,
            None,
            "a Stream mapping file is a non-empty YAML list of entries (- name: default ...)",
        )
    entries: dict[str, MappingEntry] = {}
    for index, item in enumerate(data):
        entry = _parse_entry(item, file, f"entry {index}")
        entries[entry.name] = entry
    if "default" not in entries:
        raise InputError(
            file, None, "no entry named 'default'; add '- name: default' with a core_allocation"
        )
    return StreamMapping(entries, file)


def _parse_entry(item: object, file: str | None, where: str) -> MappingEntry:
    if not isinstance(item, dict):
        raise InputError(file, where, "each entry must be a mapping with at least a 'name' field")
    unknown = [k for k in item if k not in KNOWN_FIELDS]
    if unknown:
        raise InputError(
            file,
            f"{where}.{unknown[0]}",
            f"unknown field; allowed fields are {', '.join(KNOWN_FIELDS)}",
        )
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(
            file,
            f"{where}.name",
            "missing or not a string; give the node name, op type or 'default'",
        )
    where = f"entry '{name}'"
    cores, groups = _core_allocation(
        item.get("core_allocation", [0]), file, f"{where}.core_allocation"
    )
    fixed = item.get("core_allocation_is_fixed", False)
    if not isinstance(fixed, bool):
        raise InputError(
            file, f"{where}.core_allocation_is_fixed", f"{fixed!r} is not true or false"
        )
    links = item.get("memory_operand_links")
    if links is not None and (not isinstance(links, dict) or set(links) != {"O", "W", "I"}):
        raise InputError(
            file, f"{where}.memory_operand_links", "must map exactly O, W and I to memory operands"
        )
    return MappingEntry(
        name=name,
        core_allocation=cores,
        core_allocation_is_fixed=fixed,
        intra_core_tiling=_tiling(
            item.get("intra_core_tiling", []), file, f"{where}.intra_core_tiling"
        ),
        inter_core_tiling=_tiling(
            item.get("inter_core_tiling", []), file, f"{where}.inter_core_tiling"
        ),
        spatial_mapping=_spatial(item.get("spatial_mapping"), file, f"{where}.spatial_mapping"),
        group_allocation=groups,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _core_allocation(
    value: object, file, where
) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...] | None]:
    if isinstance(value, list) and value and all(isinstance(v, (list, tuple)) for v in value):
        groups = []
        for i, group in enumerate(value):
            if not group or not all(_is_int(c) and c >= 0 for c in group):
                raise InputError(
                    file,
                    f"{where}[{i}]",
                    "a per-group allocation must list core ids (integers >= 0)",
                )
            groups.append(tuple(group))
        flat = tuple(dict.fromkeys(c for g in groups for c in g))
        return flat, tuple(groups)

    def role(item: object) -> bool:
        return isinstance(item, str) and not item.strip().isdigit()

    if role(value) or (isinstance(value, list) and any(role(c) for c in value)):
        raise InputError(
            file,
            where,
            f"{value!r} names core roles, which are read from the multi-core accelerator; "
            "load this mapping with its accelerator (zigzag multicore run/search, the workflow and sweeps "
            "do) or write core ids, e.g. [0, 1]",
        )
    if not isinstance(value, list) or not value or not all(_is_int(c) and c >= 0 for c in value):
        raise InputError(
            file,
            where,
            f"{value!r} is not a list of core ids; write e.g. [0, 1] (or one list per group: [[0], [1]])",
        )
    return tuple(value), None


def _tiling(value: object, file, where) -> Tiling:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise InputError(
            file, where, "must be a list of 'DIM, factor' strings, e.g. [OY, all] or ['K, 4']"
        )
    # A flow-style [OY, all] reads as two strings: join such pairs back together.
    if (
        len(value) % 2 == 0
        and value
        and all(isinstance(v, (str, int)) and "," not in str(v) for v in value)
    ):
        value = [f"{value[i]}, {value[i + 1]}" for i in range(0, len(value), 2)]
    result = []
    for i, text in enumerate(value):
        match = TILING_PATTERN.match(str(text))
        if not match:
            raise InputError(
                file,
                f"{where}[{i}]",
                f"{text!r} is not 'DIM, factor' (upper-case dim, factor an integer, all or *)",
            )
        dim, factor = match.groups()
        if factor not in ("all", "*"):
            factor = int(factor)
            if factor < 1:
                raise InputError(file, f"{where}[{i}]", "the tiling factor must be at least 1")
        result.append((dim, factor))
    return tuple(result)


def _spatial(value: object, file, where) -> dict[str, tuple[tuple[str, int], ...]] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(
            file, where, "must map array dimensions D1..D4 to lists of 'DIM, size' strings"
        )
    result = {}
    for oa, items in value.items():
        if oa not in OA_DIMS:
            raise InputError(file, f"{where}.{oa}", "unknown array dimension; use D1, D2, D3 or D4")
        pairs = []
        for text in items if isinstance(items, list) else [items]:
            match = SPATIAL_PATTERN.match(str(text))
            if not match:
                raise InputError(
                    file, f"{where}.{oa}", f"{text!r} is not 'DIM, size' (e.g. 'K, 32')"
                )
            pairs.append((match.group(1), int(match.group(2))))
        result[oa] = tuple(pairs)
    return result
