"""The search's outputs as files: the Pareto front (CSV) and an allocation as a fixed mapping (YAML).

``front.csv``: one row per distinct (energy, latency) point of the Pareto front, lowest energy first:
``energy`` (pJ) and ``latency`` (cycles) of the allocation as run (scheduled as a fixed mapping),
``search_energy``/``search_latency`` (the search's own fitness), ``allocations`` (how many front
allocations reached that point), ``allocation`` (the first of them, as space-separated
``layer_id:group=core`` pairs in gene order).
The fixed mapping keeps every entry of the searched mapping file and adds one entry per
allocated layer, by node name, with ``core_allocation`` = the core of each group and
``core_allocation_is_fixed: true``: ``zigzag multicore run`` (or Stream) runs it unchanged.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import yaml

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic
from zigzag.multicore.allocation.genes import Gene
from zigzag.multicore.allocation.nsga import FrontPoint
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.mapping import load_stream_mapping

PAIR = re.compile(r"^(\d+):(\d+)=(\d+)$")


def allocation_text(genes: Sequence[Gene], cores: Sequence[int]) -> str:
    """``"layer:group=core ..."`` of one allocation."""
    return " ".join(f"{g.layer}:{g.group}={c}" for g, c in zip(genes, cores))


def parse_allocation(text: str, where: str = "allocation") -> dict[tuple[int, int], int]:
    """``{(layer, group): core}`` from ``"layer:group=core ..."``."""
    out = {}
    for item in text.split():
        match = PAIR.match(item)
        if not match:
            raise InputError(None, where, f"'{item}' is not layer_id:group=core (e.g. 3:0=1)")
        out[(int(match[1]), int(match[2]))] = int(match[3])
    return out


def distinct_points(
    front: Sequence[FrontPoint], figures: Callable[[FrontPoint], tuple[float, float]] | None = None
) -> list[tuple[FrontPoint, int]]:
    """The front's distinct (energy, latency) points (the search's fitness, or ``figures`` of each
    point), in front order: the first allocation reaching each, and how many allocations reached it."""
    first: dict[tuple[float, float], FrontPoint] = {}
    count: dict[tuple[float, float], int] = {}
    for point in front:
        key = (
            tuple(map(float, figures(point)))
            if figures
            else (float(point.energy), float(point.latency))
        )
        first.setdefault(key, point)
        count[key] = count.get(key, 0) + 1
    return [(point, count[key]) for key, point in first.items()]


def front_csv(
    genes: Sequence[Gene],
    front: Sequence[FrontPoint],
    figures: Callable[[FrontPoint], tuple[float, float]] | None = None,
) -> str:
    """The front's distinct points as CSV text, ``figures(point)`` = (energy, latency) as run
    (default: the search's fitness) (header ``energy,latency,search_energy,search_latency,allocations,allocation``)."""
    figures = figures or (lambda p: (p.energy, p.latency))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(
        ["energy", "latency", "search_energy", "search_latency", "allocations", "allocation"]
    )
    rows = sorted(
        distinct_points(front, figures),
        key=lambda pr: (*figures(pr[0]), pr[0].energy, pr[0].latency),
    )
    for p, reached in rows:
        energy, latency = figures(p)
        writer.writerow(
            [
                repr(float(energy)),
                repr(float(latency)),
                repr(float(p.energy)),
                repr(float(p.latency)),
                reached,
                allocation_text(genes, p.cores),
            ]
        )
    return text.getvalue()


def read_front(path: str | Path) -> list[tuple[float, float, dict[tuple[int, int], int]]]:
    """``(energy, latency, allocation)`` rows of a ``front.csv``."""
    with open(path, newline="") as handle:
        return [
            (float(r["energy"]), float(r["latency"]), parse_allocation(r["allocation"], str(path)))
            for r in csv.DictReader(handle)
        ]


def fixed_mapping(
    mapping_path: str | Path,
    graph: CNGraph,
    genes: Sequence[Gene],
    cores: Sequence[int],
    accelerator=None,
) -> list[dict]:
    """The mapping file's entries (core roles resolved against ``accelerator``) plus one fixed
    entry per allocated layer (YAML-ready data)."""
    mapping = load_stream_mapping(mapping_path, accelerator)
    chosen: dict[int, dict[int, int]] = {}
    for gene, core in zip(genes, cores):
        chosen.setdefault(gene.layer, {})[gene.group] = core
    entries = dict(mapping.entries)
    for layer, groups in chosen.items():
        info = graph.layers[layer]
        if sorted(groups) != list(range(len(groups))):
            raise InputError(
                mapping_path,
                f"layer {layer}",
                "its groups are not 0..n-1; cannot write a fixed mapping",
            )
        entry = mapping.entry_for(info.name, info.op_type)
        entries[info.name] = replace(
            entry,
            name=info.name,
            core_allocation=tuple(groups[g] for g in sorted(groups)),
            core_allocation_is_fixed=True,
            group_allocation=None,
        )
    ordered = [entries["default"]] + [e for name, e in entries.items() if name != "default"]
    return [e.to_dict() for e in ordered]


def write_fixed_mapping(
    path: str | Path,
    mapping_path: str | Path,
    graph: CNGraph,
    genes: Sequence[Gene],
    cores: Sequence[int],
    accelerator=None,
) -> Path:
    """Write the allocation ``cores`` as a fixed Stream mapping YAML at ``path``."""
    data = fixed_mapping(mapping_path, graph, genes, cores, accelerator)
    header = (
        f"# fixed allocation found by `zigzag multicore search` from {Path(mapping_path).name}\n"
    )
    write_text_atomic(path, header + yaml.safe_dump(data, sort_keys=False))
    return Path(path)
