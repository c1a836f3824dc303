#!/usr/bin/env python3
"""Record how the reference Stream (commit ed4e12e) builds its example multi-core accelerators.

For every hardware file given, the reference's own accelerator parser (validator + factory) is
called and what it built is written as JSON to stdout: every link object (sender, receiver,
bandwidth, unit energy, bidirectional flag, the graph edges using it), every core's top memories
(name, size, memory operands, sharing group id), the graph's node order, the off-chip core id and
the route (core sequence) between every ordered pair of cores. Nothing of the reference is copied.

Run it with the reference environment from the Stream repository root (its core-file rules start
at the working directory)::

    cd /work/ref/stream && PYTHONPATH=/work/ref/stream /work/ref/stream-venv/bin/python \\
        <repo>/tools/make_stream_hardware_oracle.py stream/inputs/examples/hardware/*.yaml \\
        > <repo>/tests/data/stream_hardware_oracle.json

A file the reference rejects is recorded as the text of its exception.
"""

from __future__ import annotations

import json
import logging
import sys

import networkx as nx


def _name(node) -> str:
    return str(getattr(node, "id", node))


def record(path: str) -> dict | str:
    from stream.stages.parsing.accelerator_parser import AcceleratorParserStage

    try:
        accelerator = AcceleratorParserStage.parse_accelerator_from_yaml(None, path)  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - the rejection itself is the record
        return repr(error)
    graph = accelerator.cores
    links: dict[int, list] = {}
    for sender, receiver, data in graph.edges(data=True):
        link = data["cl"]
        entry = links.setdefault(
            id(link),
            [
                _name(link.sender),
                _name(link.receiver),
                link.bandwidth,
                link.unit_energy_cost,
                link.bidirectional,
                [],
            ],
        )
        entry[5].append([sender.id, receiver.id])
    memories = []
    for core in graph.nodes:
        for level, out_degree in core.memory_hierarchy.out_degree():
            if out_degree == 0:
                instance = level.memory_instance
                memories.append(
                    [
                        core.id,
                        instance.name,
                        instance.size,
                        [str(op) for op in level.operands],
                        instance.shared_memory_group_id,
                    ]
                )
    nodes = list(graph.nodes)
    routes = {}
    for a in nodes:
        for b in nodes:
            if a is not b:
                try:
                    routes[f"{a.id}-{b.id}"] = [c.id for c in nx.shortest_path(graph, a, b)]
                except nx.NetworkXNoPath:
                    pass
    return {
        "links": sorted(links.values()),
        "memories": sorted(memories),
        "nodes": [c.id for c in nodes],
        "offchip_core_id": accelerator.offchip_core_id,
        "routes": routes,
    }


def main() -> None:
    logging.disable(logging.CRITICAL)
    json.dump(
        {path.rsplit("/", 1)[-1]: record(path) for path in sys.argv[1:]}, sys.stdout, indent=1
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
