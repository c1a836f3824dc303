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
`dataflows`. Where core files are found and how each is checked: :mod:`zigzag.io.stream_cores`; the
`core_connectivity` and `core_memory_sharing` entries: :mod:`zigzag.io.stream_connectivity`.

:func:`read_multicore` returns the normalised document that
`zigzag.multicore.topology.build_multicore` turns into a model; every problem is a one-line
`InputError` naming the file, the field and the fix.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.io.stream2_hardware import is_stream2_hardware, strip_core_extras, translate_stream2
from zigzag.io.stream_connectivity import (
    check_shared_memories,
    link_bandwidth,
    link_energy,
    missing_field,
    read_connectivity,
    read_sharing,
)
from zigzag.io.stream_cores import load_core_document, resolve_core_file
from zigzag.io.stream_links import Wiring, add_bus_topology, add_mesh
from zigzag.io.validation.schema import (
    Field,
    Invalid,
    check_value,
    describe,
    expect_top,
    unknown_field,
)
from zigzag.io.yaml_files import load_yaml

__all__ = ["read_multicore", "read_multicore_document"]

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
            return load_core_document(raw, file, offchip)
        data, extras = strip_core_extras(raw, file)
        memory_only = extras["type"] == "memory"
        loaded = load_core_document(data, file, offchip or memory_only)
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
            else missing_field("name", "a name for the accelerator")
        )
        bandwidth = (
            link_bandwidth(data["bandwidth"], "bandwidth")
            if "bandwidth" in data
            else missing_field(
                "bandwidth", "the bandwidth of a core-to-core link in bits per cycle"
            )
        )
        energy = link_energy(data.get("unit_energy_cost", 0), "unit_energy_cost")
        files, pooling, simd = self._core_files(data)
        cores = [self._core(file, where) for where, file in files]
        offchip = None
        if "offchip_core" in data:
            offchip = self._core(
                _core_reference(data["offchip_core"], "offchip_core"), "offchip_core", offchip=True
            )
        sharing = read_sharing(data.get("core_memory_sharing", []), len(cores))
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
            missing_field(
                "core_connectivity", "the list of linked core pairs, e.g. ['0, 1'], or []"
            )
        read_connectivity(
            wiring, data.get("core_connectivity", []), len(cores), bandwidth, energy, sharing
        )
        check_shared_memories(sharing, cores, capacity_only=self.stream2 is not None)
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
            else missing_field("name", "a name for the accelerator")
        )
        files = (
            data.get("cores")
            if "cores" in data
            else missing_field("cores", "the list of core files")
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
        bandwidth = link_bandwidth(graph["bandwidth"], "graph.bandwidth")
        energy = link_energy(graph["unit_energy_cost"], "graph.unit_energy_cost")
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
                missing_field(
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
            missing_field("cores", "the core files by id, e.g. {0: tpu_like.yaml}, or a mesh")
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
