"""Reading and validating a multi-core accelerator file (Stream's YAML format, plus a mesh shorthand).

The top file names its cores and how they are joined::

    name: tpu_like_quad_core
    cores: {0: tpu_like.yaml, 1: tpu_like.yaml, 2: pooling.yaml}   # ids 0..N-1, one core file each
    offchip_core: offchip.yaml          # optional DRAM pseudo-core, gets id N
    bandwidth: 32                       # bits/cycle of every core-to-core link
    unit_energy_cost: 0                 # energy per cycle a link is active (default 0)
    core_connectivity:                  # required, may be []
      - 0, 1                            # a link pair (one link per direction)
      - {cores: [1, 2], bandwidth: 64, unit_energy_cost: 0.1}   # a pair with its own figures
      - {type: bus, cores: [0, 1, 2], bandwidth: 128}           # one link shared by all of them
    core_memory_sharing: [0, 1]         # optional: these cores share their top memories

or, instead of `cores`, the mesh shorthand (then `core_connectivity` is optional and its entries
add links or override mesh links)::

    mesh: {rows: 2, cols: 2, core: tpu_like.yaml, pooling_core: pooling.yaml, simd_core: simd.yaml}

A mesh's `core` may also be a list of core files, given to the mesh positions in turn (core id
order): `core: [tpu_like.yaml, eyeriss_like.yaml]` alternates the two. Wherever a core file name
is expected, the core's document itself (a mapping) may be given instead (hardware sweeps write
the cores they vary that way, see docs/reference/sweeps.md).

Each core file is a single-core ZigZag accelerator (either memory format) with optional
`dataflows`. Where core files are found: see :func:`resolve_core_file`.

:func:`read_multicore` returns the normalised document that
`zigzag.multicore.topology.build_multicore` turns into a model; every problem is a one-line
`InputError` naming the file, the field and the fix.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.memory_costs import resolve_memory_costs
from zigzag.io.stream2_hardware import is_stream2_hardware, strip_core_extras, translate_stream2
from zigzag.io.stream_links import Wiring, add_bus_topology, add_mesh
from zigzag.io.validation import validate_accelerator
from zigzag.io.validation.schema import (
    Field,
    Invalid,
    check_value,
    describe,
    expect_top,
    unknown_field,
)
from zigzag.io.yaml_files import load_yaml

__all__ = ["read_multicore", "read_multicore_document", "resolve_core_file"]

_TOP_KEYS = (
    "name",
    "cores",
    "offchip_core",
    "bandwidth",
    "unit_energy_cost",
    "core_connectivity",
    "core_memory_sharing",
    "mesh",
    "link_area",
    "router_area",
    "clock_ghz",
)
_MESH = Field(
    "dict",
    what="rows, cols and core, e.g. {rows: 2, cols: 2, core: tpu_like.yaml}",
    keys={
        "rows": Field("int", required=True, minimum=1, what="number of rows of the mesh"),
        "cols": Field("int", required=True, minimum=1, what="number of columns of the mesh"),
        "core": Field(
            "str", required=True, what="the core file every mesh core uses, e.g. tpu_like.yaml"
        ),
        "pooling_core": Field("str", what="core file of a pooling core linked to every mesh core"),
        "simd_core": Field("str", what="core file of a SIMD core linked to every mesh core"),
    },
)
_GRAPH_TOP_KEYS = ("name", "cores", "graph")
_CORE_ROLE = Field(
    "int", nullable=True, default=None, minimum=0, what="a position in the cores list"
)
_GRAPH = Field(
    "dict",
    what="type, nb_rows, nb_cols, bandwidth, ...",
    keys={
        "type": Field("str", required=True, choices=("2d_mesh", "bus"), what="2d_mesh or bus"),
        "nb_rows": Field("int", minimum=1, what="number of rows of the mesh"),
        "nb_cols": Field("int", minimum=1, what="number of columns of the mesh"),
        "bandwidth": Field(
            "float", required=True, what="bandwidth of every link in bits per cycle"
        ),
        "unit_energy_cost": Field(
            "float", default=0, minimum=0, what="an energy per active cycle, e.g. 0"
        ),
        "pooling_core_id": _CORE_ROLE,
        "simd_core_id": _CORE_ROLE,
        "offchip_core_id": _CORE_ROLE,
    },
)
_CONNECTION_KEYS = {"type": None, "cores": None, "bandwidth": None, "unit_energy_cost": None}
_IDS = re.compile(r"\s*\d+\s*(,\s*\d+\s*)+")


def read_multicore(path: str | Path, cwd: str | Path | None = None) -> dict[str, Any]:
    """The validated, normalised document of a multi-core accelerator file (see the module doc)."""
    file = str(path)
    data = load_yaml(path)
    try:
        return _Reader(Path(path), Path(cwd) if cwd is not None else Path.cwd()).read(data)
    except Invalid as problem:
        raise InputError(file, problem.where, problem.message) from None


def read_multicore_document(
    data: Any, home: str | Path, cwd: str | Path | None = None
) -> dict[str, Any]:
    """:func:`read_multicore` of an already-loaded document; core file names are found as if the
    document were the file ``home``."""
    try:
        return _Reader(Path(home), Path(cwd) if cwd is not None else Path.cwd()).read(data)
    except Invalid as problem:
        raise InputError(str(home), problem.where, problem.message) from None


def _core_reference(value: Any, where: str) -> Any:
    """A core file name, or a core document given in place (a mapping)."""
    if isinstance(value, dict):
        return value
    return check_value(value, Field("str", what="a core file name, e.g. tpu_like.yaml"), where)


class _Reader:
    def __init__(self, path: Path, cwd: Path):
        self.path = path
        self.cwd = cwd
        self.loaded: dict[tuple[Path | int, bool], dict] = {}
        self.mesh: dict = {}
        self.stream2: dict | None = (
            None  # what only a Stream 2.x file has (zigzag.io.stream2_hardware)
        )
        self.extras: dict[Any, dict] = {}  # 2.x core keys, by loaded-core key

    def read(self, data: Any) -> dict[str, Any]:
        if is_stream2_hardware(data):
            data, self.stream2 = translate_stream2(data, self._raw_core)
            self.stream2["cores"] = {}
        document = self._read(data)
        if self.stream2 is not None:
            document["stream2"] = self.stream2
        return document

    def _raw_core(self, reference: Any, where: str) -> Any:
        """The raw document a 2.x core reference names (None if not found: reported later)."""
        if isinstance(reference, dict):
            return reference
        path = resolve_core_file(str(reference), self.path, self.cwd)
        return load_yaml(path) if path is not None else None

    def _load(self, raw: Any, file: str, offchip: bool, key: Any, where: str) -> dict[str, Any]:
        """A core document validated; a 2.x core's own keys set aside first (kept by `where`)."""
        if self.stream2 is None:
            return _load_core_document(raw, file, offchip)
        data, extras = strip_core_extras(raw, file)
        memory_only = extras["type"] == "memory"
        loaded = _load_core_document(data, file, offchip or memory_only)
        self.extras[key] = extras
        return loaded

    def _record(self, key: Any, where: str) -> None:
        if self.stream2 is not None and where.startswith("cores."):
            self.stream2["cores"][where.split(".", 1)[1]] = self.extras.get(key, {})

    def _read(self, data: Any) -> dict[str, Any]:
        expect_top(data, "dict", "a mapping with name, cores, bandwidth and core_connectivity")
        if "graph" in data:
            return self._read_graph_format(data)
        for key in data:
            if key not in _TOP_KEYS:
                raise Invalid(str(key), unknown_field(key, dict.fromkeys(_TOP_KEYS)))
        name = (
            check_value(data.get("name"), Field("str", what="the accelerator name"), "name")
            if "name" in data
            else _missing("name", "a name for the accelerator")
        )
        bandwidth = (
            _bandwidth(data["bandwidth"], "bandwidth")
            if "bandwidth" in data
            else _missing("bandwidth", "the bandwidth of a core-to-core link in bits per cycle")
        )
        energy = _energy(data.get("unit_energy_cost", 0), "unit_energy_cost")
        files, pooling, simd = self._core_files(data)
        cores = [self._core(file, where) for where, file in files]
        offchip = None
        if "offchip_core" in data:
            offchip = self._core(
                _core_reference(data["offchip_core"], "offchip_core"), "offchip_core", offchip=True
            )
        sharing = _sharing(data.get("core_memory_sharing", []), len(cores))
        wiring = Wiring({core: g[0] for g in reversed(sharing) for core in g})
        if "mesh" in data:
            mesh = self.mesh
            add_mesh(
                wiring,
                list(range(mesh["rows"] * mesh["cols"])),
                mesh["rows"],
                mesh["cols"],
                bandwidth,
                energy,
                pooling,
                simd,
            )
        elif "core_connectivity" not in data:
            _missing("core_connectivity", "the list of linked core pairs, e.g. ['0, 1'], or []")
        _connectivity(
            wiring, data.get("core_connectivity", []), len(cores), bandwidth, energy, sharing
        )
        _check_shared_memories(sharing, cores, capacity_only=self.stream2 is not None)
        document = _document(name, bandwidth, energy, cores, offchip, wiring, sharing)
        for key in ("link_area", "router_area"):
            document[key] = _area(data.get(key, 0), key)
        if "clock_ghz" in data:
            document["clock_ghz"] = _clock(data["clock_ghz"])
        return document

    def _read_graph_format(self, data: dict) -> dict[str, Any]:
        """Stream's mid-2024 format: `cores` a list (id = position) and a `graph` block."""
        for key in data:
            if key not in _GRAPH_TOP_KEYS:
                raise Invalid(
                    str(key),
                    unknown_field(key, dict.fromkeys(_GRAPH_TOP_KEYS))
                    + " (this file uses the `graph:` format, which has only name, cores and graph)",
                )
        name = (
            check_value(data.get("name"), Field("str", what="the accelerator name"), "name")
            if "name" in data
            else _missing("name", "a name for the accelerator")
        )
        files = (
            data.get("cores") if "cores" in data else _missing("cores", "the list of core files")
        )
        files = check_value(
            files,
            Field(
                "list",
                min_len=1,
                what="the list of core files, e.g. [tpu_like.yaml]",
                item=Field("str", what="a core file name"),
            ),
            "cores",
        )
        graph = check_value(data["graph"], _GRAPH, "graph")
        bandwidth = _bandwidth(graph["bandwidth"], "graph.bandwidth")
        energy = _energy(graph["unit_energy_cost"], "graph.unit_energy_cost")
        special = {}
        for role in ("pooling_core_id", "simd_core_id", "offchip_core_id"):
            index = graph[role]
            if index is not None and index >= len(files):
                raise Invalid(
                    f"graph.{role}",
                    f"{index} is not a position in cores (0..{len(files) - 1}); "
                    "give the position of that core in the cores list",
                )
            if index is not None and index in special.values():
                raise Invalid(
                    f"graph.{role}",
                    f"core {index} already has another role; give each role its own core",
                )
            special[role] = index
        offchip_id = special["offchip_core_id"]
        if offchip_id is not None and offchip_id != len(files) - 1:
            raise Invalid(
                "graph.offchip_core_id",
                f"is {offchip_id} but the off-chip core must be the last entry "
                f"of cores ({len(files) - 1}); move it to the end of the list",
            )
        regular = [i for i in range(len(files)) if i not in special.values()]
        compute = [i for i in range(len(files)) if i != offchip_id]
        if graph["type"] == "2d_mesh":
            rows, cols = graph.get("nb_rows"), graph.get("nb_cols")
            if rows is None or cols is None:
                _missing(
                    "graph.nb_rows" if rows is None else "graph.nb_cols", "the size of the mesh"
                )
            if rows * cols != len(regular):
                raise Invalid(
                    "graph",
                    f"nb_rows x nb_cols is {rows * cols} but {len(regular)} cores are left for "
                    "the mesh (the others are pooling, SIMD or off-chip); make them equal",
                )
        cores = [self._core(files[i], f"cores[{i}]") for i in compute]
        offchip = (
            None
            if offchip_id is None
            else self._core(files[offchip_id], f"cores[{offchip_id}]", offchip=True)
        )
        wiring = Wiring()
        pooling, simd = special["pooling_core_id"], special["simd_core_id"]
        if graph["type"] == "bus":
            add_bus_topology(wiring, regular, bandwidth, energy, pooling, simd)
        else:
            add_mesh(
                wiring,
                regular,
                graph["nb_rows"],
                graph["nb_cols"],
                bandwidth,
                energy,
                pooling,
                simd,
            )
        return _document(name, bandwidth, energy, cores, offchip, wiring, [])

    def _core_files(
        self, data: dict
    ) -> tuple[list[tuple[str, str | dict]], int | None, int | None]:
        """(where, file name or core document) per core id, and the ids of a mesh's pooling and SIMD cores."""
        if "mesh" in data:
            if "cores" in data:
                raise Invalid(
                    "mesh",
                    "is given together with cores; give either cores (and core_connectivity) "
                    "or mesh, not both",
                )
            given = data["mesh"]
            references = dict(given) if isinstance(given, dict) else {}
            # the core references (names, documents or a list for `core`) are checked one by one below
            stand_ins = {
                key: "core" for key in ("core", "pooling_core", "simd_core") if key in references
            }
            mesh = self.mesh = check_value(
                {**references, **stand_ins} if references else given, _MESH, "mesh"
            )
            turns = isinstance(references["core"], list)
            count = mesh["rows"] * mesh["cols"]
            if turns:
                listed = references["core"]
                if not listed:
                    raise Invalid("mesh.core", "the list of core files is empty; give at least one")
                files = [
                    (
                        f"mesh.core[{i % len(listed)}]",
                        _core_reference(listed[i % len(listed)], f"mesh.core[{i % len(listed)}]"),
                    )
                    for i in range(count)
                ]
            else:
                files = [("mesh.core", _core_reference(references["core"], "mesh.core"))] * count
            pooling = simd = None
            if "pooling_core" in mesh:
                pooling = len(files)
                files.append(
                    (
                        "mesh.pooling_core",
                        _core_reference(references["pooling_core"], "mesh.pooling_core"),
                    )
                )
            if "simd_core" in mesh:
                simd = len(files)
                files.append(
                    ("mesh.simd_core", _core_reference(references["simd_core"], "mesh.simd_core"))
                )
            return files, pooling, simd
        if "cores" not in data:
            _missing("cores", "the core files by id, e.g. {0: tpu_like.yaml}, or a mesh")
        cores = data["cores"]
        if not isinstance(cores, dict) or not cores:
            got = "nothing" if cores == {} else describe(cores)
            raise Invalid(
                "cores",
                f"must be a non-empty mapping of core id to core file, got {got}; "
                "write indented '0: core_file.yaml' lines",
            )
        for key, value in cores.items():
            if isinstance(key, bool) or not isinstance(key, int) or key < 0:
                raise Invalid(
                    f"cores.{key}",
                    f"core id {describe(key)} is not a whole number >= 0; "
                    "number the cores 0, 1, 2, ...",
                )
            _core_reference(value, f"cores.{key}")
        missing = sorted(set(range(len(cores))) - set(cores))
        if missing:
            raise Invalid(
                "cores",
                f"core ids must be 0..{len(cores) - 1} without gaps, but {missing[0]} is "
                f"missing (ids given: {', '.join(map(str, sorted(cores)))}); renumber the cores",
            )
        return [(f"cores.{i}", cores[i]) for i in range(len(cores))], None, None

    def _core(self, name: str | dict, where: str, offchip: bool = False) -> dict[str, Any]:
        if isinstance(name, dict):
            file = f"{self.path} ({where})"
            key = (id(name), offchip)  # one document given for several cores (a mesh) is read once
            if key not in self.loaded:
                try:
                    self.loaded[key] = self._load(name, file, offchip, key, where)
                except InputError as error:
                    raise InputError(
                        str(self.path),
                        f"{where}.{error.where}" if error.where else where,
                        error.message,
                    ) from None
            self._record(key, where)
            return dict(self.loaded[key], file=file)
        path = resolve_core_file(name, self.path, self.cwd)
        if path is None:
            raise Invalid(
                where,
                f"core file '{name}' not found (looked next to this file, in its cores/ "
                "folder, under the working directory and Stream's stream/inputs/**/hardware "
                "folders); fix the name or give a path relative to this file's folder",
            )
        key = (path.resolve(), offchip)
        if key not in self.loaded:
            try:
                self.loaded[key] = self._load(load_yaml(path), str(path), offchip, key, where)
            except InputError as error:
                raise InputError(
                    error.file,
                    error.where,
                    f"{error.message} (core file of {where} in {self.path})",
                ) from None
        self._record(key, where)
        return dict(self.loaded[key], file=str(path))


def resolve_core_file(
    name: str, top_file: str | Path, cwd: str | Path | None = None
) -> Path | None:
    """Where a core file named in `top_file` is, or None.

    Tried in this order, first hit wins: (1) relative to the top file's folder, then its `cores/`
    subfolder; (2) Stream's own rule from the working directory: a name with a `/` as a path
    relative to it, a bare name searched (in sorted order) in the folders under `stream/inputs/`
    whose path contains `hardware`; (3) Stream's rule from each folder above the top file. An
    absolute path is used as given. A name without `.yaml`/`.yml` also matches `<name>.yaml`.
    """
    names = [name] if name.endswith((".yaml", ".yml")) else [name, f"{name}.yaml"]
    if Path(name).is_absolute():
        return next((Path(n) for n in names if Path(n).is_file()), None)
    top_dir = Path(top_file).parent
    for folder in (top_dir, top_dir / "cores"):
        for candidate in names:
            if (folder / candidate).is_file():
                return folder / candidate
    for base in (Path(cwd) if cwd is not None else Path.cwd(), *top_dir.parents):
        found = _stream_rule(names, base)
        if found is not None:
            return found
    return None


def _stream_rule(names: list[str], base: Path) -> Path | None:
    for candidate in names:
        if "/" in candidate:
            if (base / candidate).is_file():
                return base / candidate
            continue
        inputs = base / "stream" / "inputs"
        if not inputs.is_dir():
            continue
        for root, dirs, files in os.walk(inputs):
            dirs.sort()
            if "hardware" in root and candidate in files:
                return Path(root) / candidate
    return None


def _load_core_document(raw: Any, file: str, offchip: bool) -> dict[str, Any]:
    """A core document (named ``file`` in messages) validated and normalised."""
    data, widths = upgrade_accelerator(raw, file)
    array = data.get("operational_array") if isinstance(data, dict) else None
    if offchip and isinstance(array, dict):
        # The off-chip core computes nothing: only its array's dimensions matter (its memories serve
        # them); zero sizes, zero precisions and missing MAC figures are accepted.
        sizes = array.get("sizes")
        plain = isinstance(sizes, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in sizes
        )
        stand_in = {
            "dimensions": array.get("dimensions"),
            "unit_energy": 0,
            "unit_area": 0,
            "sizes": [max(v, 1) for v in sizes] if plain else sizes,
        }
        document = validate_accelerator(dict(data, operational_array=stand_in), file)
        document["operational_array"]["sizes"] = list(sizes)
    else:
        document = validate_accelerator(data, file)
    document = resolve_memory_costs(document, file)
    _check_dataflows(document, file)
    if not offchip:
        _check_no_offchip_memory(document, file)
    accelerator = accelerator_from_dict(document)
    if offchip and not accelerator.hierarchy("O"):
        raise InputError(
            file,
            "memories",
            "the off-chip core has no memory holding O (its DRAM); "
            "add O to the operands of its memory",
        )
    return {"accelerator": document, "memory_ports": {name: vars(w) for name, w in widths.items()}}


#: memory names that say off-chip (DRAM, DDR, HBM, "offchip"), as whole words of the name
_OFFCHIP_NAME = re.compile(
    r"(?<![a-z])(dram|lpddr\d*|ddr\d*|hbm\d*|off_?chip)(?![a-z])", re.IGNORECASE
)


def _check_no_offchip_memory(document: dict, file: str) -> None:
    """Refuse a compute core holding an off-chip memory: it would become that core's on-chip top
    memory (Stream takes it so, silently); DRAM belongs in the accelerator's `offchip_core` file."""
    for name in document["memories"]:
        if _OFFCHIP_NAME.search(name):
            raise InputError(
                file,
                f"memories.{name}",
                "an off-chip memory inside a compute core would be its "
                "on-chip top memory; remove it here and describe DRAM in the multi-core file's "
                "offchip_core file",
            )


def _check_dataflows(document: dict, file: str) -> None:
    dims = document["operational_array"]["dimensions"]
    for dim in document.get("dataflows") or {}:
        if dim not in dims:
            raise InputError(
                file,
                f"dataflows.{dim}",
                f"the operational array has no dimension {dim} "
                f"(it has {', '.join(dims)}); remove it or rename it",
            )


def _missing(where: str, what: str):
    key = where.rsplit(".", 1)[-1]
    raise Invalid(where, f"required field '{key}' is missing; add {key}: <{what}>")


def _bandwidth(value: Any, where: str) -> float:
    number = check_value(value, Field("float", what="a bandwidth in bits per cycle"), where)
    if math.isnan(number) or number <= 0:
        raise Invalid(
            where, f"must be a positive number of bits per cycle, got {value}; give e.g. 32"
        )
    return number


def _area(value: Any, where: str) -> float:
    number = check_value(value, Field("float", what="an area in um2"), where)
    if math.isnan(number) or number < 0:
        raise Invalid(where, f"must be zero or more, got {value}; give the area in um2, e.g. 0")
    return number


def _clock(value: Any) -> float:
    number = check_value(value, Field("float", what="a clock frequency in GHz"), "clock_ghz")
    if math.isnan(number) or number <= 0:
        raise Invalid("clock_ghz", f"must be a positive frequency in GHz, got {value}; give e.g. 1")
    return number


def _energy(value: Any, where: str) -> float:
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


def _document(
    name: str,
    bandwidth: float,
    energy: float,
    cores: list[dict],
    offchip: dict | None,
    wiring: Wiring,
    sharing: list[tuple[int, ...]],
) -> dict[str, Any]:
    return {
        "name": name,
        "bandwidth": bandwidth,
        "unit_energy_cost": energy,
        "cores": cores,
        "offchip_core": offchip,
        "links": wiring.links,
        "edges": wiring.edges,
        "core_memory_sharing": [list(g) for g in sharing],
    }


def _connectivity(
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
                if key not in _CONNECTION_KEYS:
                    raise Invalid(f"{where}.{key}", unknown_field(key, _CONNECTION_KEYS))
            kind = check_value(
                entry.get("type", "link"), Field("str", choices=("link", "bus")), f"{where}.type"
            )
            if "cores" not in entry:
                _missing(f"{where}.cores", "the core ids, e.g. [0, 1]")
            ids = _core_ids(entry["cores"], f"{where}.cores", count, kind)
            width = (
                _bandwidth(entry["bandwidth"], f"{where}.bandwidth")
                if "bandwidth" in entry
                else bandwidth
            )
            cost = (
                _energy(entry["unit_energy_cost"], f"{where}.unit_energy_cost")
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


def _sharing(entries: Any, count: int) -> list[tuple[int, ...]]:
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


def _check_shared_memories(
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
