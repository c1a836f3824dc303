"""Building a :class:`MultiCoreAccelerator` from its normalised document.

The normalised document (made and validated by `zigzag.io.stream_hardware`; plain data, JSON-able)::

    {"name": "quad", "bandwidth": 32, "unit_energy_cost": 0,
     "cores": [{"file": ".../tpu_like.yaml", "accelerator": {<normalised core>},
                "memory_ports": {"sram_2MB": {"r_bw": 2048, ...}}}, ...],   # core id = position
     "offchip_core": {<same>} or None,                                     # gets id len(cores)
     "links": [{"sender": 0, "receiver": 1, "bandwidth": 32, "unit_energy_cost": 0,
                "bidirectional": False}, ...],                             # "Any" for a bus end
     "edges": [[0, 1, <link index>], ...],
     "core_memory_sharing": [[0, 1], ...]}

`edges` are directed core-to-core graph edges in the order they were made. A later edge between
the same two cores replaces the earlier one's link and keeps its place (as in a networkx graph):
that is how a per-link override works. Off-chip edges come last: one link shared by all cores in
both directions when the DRAM (the off-chip core's first memory holding `O`) has a single port,
with the DRAM's write width; otherwise a shared write link (`Any -> DRAM`, write width) and a
shared read link (`DRAM -> Any`, read width). Links no edge uses any more are dropped.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from zigzag.io.legacy_hardware import LegacyPorts, legacy_ports_of
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.stream_hardware import read_multicore
from zigzag.multicore.hardware import ANY, Core, Link, MultiCoreAccelerator


def build_multicore(document: dict[str, Any], file: str = "") -> MultiCoreAccelerator:
    """The accelerator described by a normalised document (see the module docstring)."""
    sharing = tuple(tuple(group) for group in document.get("core_memory_sharing", ()))
    group_of = {core: group[0] for group in reversed(sharing) for core in group}
    extras = document.get("stream2", {}).get("cores", {})
    cores = [
        _core(i, spec, group_of.get(i, i), extras=extras.get(str(i), {}))
        for i, spec in enumerate(document["cores"])
    ]
    if "stream2" in document:
        _share_top_memories(cores, sharing)
    offchip_id = None
    if document.get("offchip_core"):
        offchip_id = len(cores)
        cores.append(_core(offchip_id, document["offchip_core"], offchip_id, offchip=True))
    made = [
        (
            link["sender"],
            link["receiver"],
            link["bandwidth"],
            link["unit_energy_cost"],
            link["bidirectional"],
        )
        for link in document["links"]
    ]
    edges: dict[tuple[int, int], int] = {}
    for sender, receiver, index in document["edges"]:
        edges[(sender, receiver)] = index
    if offchip_id is not None:
        _connect_offchip(cores, offchip_id, document.get("unit_energy_cost", 0), made, edges)
    links, edge_list = _number_links(made, edges)
    return MultiCoreAccelerator(
        name=document["name"],
        cores=tuple(cores),
        links=links,
        edges=edge_list,
        offchip_core_id=offchip_id,
        memory_sharing=sharing,
        file=file,
        document=document,
        link_area_um2=float(document.get("link_area", 0)),
        router_area_um2=float(document.get("router_area", 0)),
    )


def _share_top_memories(cores: list[Core], sharing) -> None:
    """Stream 2.x: every member of a sharing group takes its first compute core's top memories."""
    for group in sharing:
        owner = next((c for c in group if cores[c].kind == "compute"), group[0])
        tops = cores[owner].top_memories
        for member in group:
            if member != owner:
                cores[member] = replace(cores[member], shared_top_memories=tops)


def _core(
    core_id: int, spec: dict, memory_group: int, offchip: bool = False, extras: dict | None = None
) -> Core:
    accelerator = accelerator_from_dict(spec["accelerator"])
    given = spec.get("memory_ports", {})
    ports = {
        m.name: LegacyPorts(**given[m.name]) if m.name in given else legacy_ports_of(m.ports)
        for m in accelerator.memories
    }
    return Core(
        id=core_id,
        accelerator=accelerator,
        file=spec.get("file", ""),
        memory_group=memory_group,
        is_offchip=offchip,
        memory_ports=ports,
        operator_types=tuple(extras["operator_types"])
        if extras and extras.get("operator_types") is not None
        else None,
        kind="offchip" if offchip else (extras or {}).get("type") or "compute",
    )


def _connect_offchip(
    cores: list[Core], offchip_id: int, energy: float, made: list, edges: dict
) -> None:
    offchip = cores[offchip_id]
    dram = offchip.accelerator.hierarchy("O")[0]
    ports = offchip.memory_ports[dram.name]
    if ports.port_count == 1:
        made.append((offchip_id, ANY, ports.w_bw, energy, True))
        to_dram = from_dram = len(made) - 1
    else:
        made.append((ANY, offchip_id, ports.w_bw, energy, False))
        made.append((offchip_id, ANY, ports.r_bw, energy, False))
        to_dram, from_dram = len(made) - 2, len(made) - 1
    for core in cores:
        if core.id != offchip_id:
            edges[(core.id, offchip_id)] = to_dram
            edges[(offchip_id, core.id)] = from_dram


def _number_links(
    made: list, edges: dict
) -> tuple[tuple[Link, ...], tuple[tuple[int, int, int], ...]]:
    """Links still carrying an edge, numbered in the order they were made."""
    used = sorted(set(edges.values()))
    number = {old: new for new, old in enumerate(used)}
    carried: dict[int, list[tuple[int, int]]] = {old: [] for old in used}
    for edge, old in edges.items():
        carried[old].append(edge)
    links = tuple(Link(number[old], *made[old], edges=tuple(carried[old])) for old in used)
    return links, tuple((s, r, number[old]) for (s, r), old in edges.items())


def load_multicore_accelerator(
    path: str | Path, cwd: str | Path | None = None
) -> MultiCoreAccelerator:
    """Read, validate and build a multi-core accelerator YAML file (`zigzag.io.stream_hardware`);
    `cwd` is where Stream's own core-file rule starts (default: the working directory)."""
    return build_multicore(read_multicore(path, cwd), str(path))
