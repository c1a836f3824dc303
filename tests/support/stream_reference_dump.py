"""Scheduling problems rebuilt from Stream reference dumps (``tests/data/reference/stream/*.json``).

A dump holds every CN (core, runtime, energies, too-large operands, tensor sizes), every edge and
the scheduling order; the hardware facts the scheduler needs (top memories with their access
widths and costs, links, routes) are read from the accelerator and core YAML files the dump names.
This lets the scheduler be checked against Stream on its own, fed with Stream's per-CN numbers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import networkx as nx
import numpy as np
import yaml

from zigzag.errors import InputError
from zigzag.multicore.schedule.problem import (
    Link,
    ScheduleHardware,
    ScheduleProblem,
    TopMemory,
    memory_operand_index,
)

LAYER_TO_MEMORY = {"I": "I1", "W": "I2", "O": "O"}
_SIMD = ("B", "H", "D", "K")
OPERAND_DIMS = {
    "conv": {
        "I": ("B", "G", "C", "IY", "IX"),
        "W": ("K", "C", "FY", "FX"),
        "O": ("B", "G", "K", "OY", "OX"),
    },
    "pooling": {"I": ("B", "K", "IY", "IX"), "W": ("FY", "FX"), "O": ("B", "K", "OY", "OX")},
    "gemm": {"I": ("D", "C"), "W": ("C", "K"), "O": ("D", "K")},
}


def _operand_dims(op_type: str, operand: str, constants: list[str]) -> tuple[str, ...]:
    if op_type in OPERAND_DIMS:
        return OPERAND_DIMS[op_type][operand]
    # element-wise: a one-input op has a dimensionless constant W
    if operand == "W" and "W" in constants:
        return ()
    return _SIMD


def _find_core_file(name: str, root: Path) -> Path:
    if "/" in name:
        return root / name
    for folder, dirs, files in sorted(os.walk(root / "stream" / "inputs")):
        dirs.sort()
        if "hardware" in folder and name in files:
            return Path(folder) / name
    raise InputError(name, None, f"core file not found under {root / 'stream' / 'inputs'}")


def _top_memories(core_file: Path) -> list[dict]:
    """Top levels of a 3.8.0-format core: memories no later memory shares an operand with."""
    mems = yaml.safe_load(core_file.read_text())["memories"]
    items = list(mems.items())
    tops = []
    for i, (name, m) in enumerate(items):
        if not any(set(m["operands"]) & set(later["operands"]) for _, later in items[i + 1 :]):
            tops.append({"name": name, **m})
    return tops


def hardware_from_files(
    accelerator: Path, root: Path, memory_order: list[tuple[str, int]]
) -> ScheduleHardware:
    """Scheduler hardware of a Stream accelerator YAML (paths relative to ``root``).

    ``memory_order`` lists ``(memory name, core)`` in the memory manager's order.
    """
    data = yaml.safe_load(accelerator.read_text())
    core_files = {int(k): _find_core_file(v, root) for k, v in data["cores"].items()}
    offchip = max(core_files) + 1
    core_files[offchip] = _find_core_file(data["offchip_core"], root)
    bandwidth, energy = data["bandwidth"], data.get("unit_energy_cost", 0)
    tops = {c: _top_memories(f) for c, f in core_files.items()}
    links: list[Link] = []
    edges: list[tuple[int, int, int]] = []
    for pair in data["core_connectivity"]:
        a, b = (int(v) for v in pair.replace(" ", "").split(","))
        links += [Link(str(a), str(b), bandwidth, energy), Link(str(b), str(a), bandwidth, energy)]
        edges += [(a, b, len(links) - 2), (b, a, len(links) - 1)]
    dram = next(m for m in tops[offchip] if "O" in m["operands"])
    if dram["r_port"] + dram["w_port"] + dram["rw_port"] == 1:
        links.append(Link(str(offchip), "Any", dram["w_bw"], energy, bidirectional=True))
        to_off = from_off = len(links) - 1
    else:
        links += [
            Link("Any", str(offchip), dram["w_bw"], energy),
            Link(str(offchip), "Any", dram["r_bw"], energy),
        ]
        to_off, from_off = len(links) - 2, len(links) - 1
    for c in sorted(c for c in core_files if c != offchip):
        edges += [(c, offchip, to_off), (offchip, c, from_off)]
    graph = nx.DiGraph()
    graph.add_edges_from((a, b, {"link": lk}) for a, b, lk in edges)
    routes = {}
    for s in graph.nodes:
        for t in graph.nodes:
            path = nx.shortest_path(graph, s, t)
            routes[(s, t)] = tuple(graph.edges[u, v]["link"] for u, v in zip(path, path[1:]))
    memories, top_memory = [], np.full((offchip + 1, 3), -1, dtype=np.int64)
    for name, core in memory_order:
        m = next(x for x in tops[core] if x["name"] == name)
        memories.append(
            TopMemory(name, int(m["size"]), m["r_bw"], m["w_bw"], m["r_cost"], m["w_cost"], (core,))
        )
        for op in m["operands"]:
            if top_memory[core, memory_operand_index(op)] < 0:
                top_memory[core, memory_operand_index(op)] = len(memories) - 1
    return ScheduleHardware(
        tuple(graph.nodes), offchip, tuple(memories), top_memory, tuple(links), routes
    )


def problem_from_dump(path: str | Path, prefetch: tuple[str, ...] = ()) -> ScheduleProblem:
    """The scheduling problem of a reference dump, with Stream's per-CN costs and order.

    ``prefetch``: layer operands whose constant tensors are sent to their cores first (Stream's
    ``operands_to_prefetch``), CN by CN in the dump's order.
    """
    path = Path(path)
    dump = json.loads(path.read_text())
    root = path.parent
    memory_order = [(m["name"], m["cores"][0]) for m in dump["memories"]]
    hw = hardware_from_files(root / dump["meta"]["inputs"]["hardware"], root, memory_order)
    cns = dump["cns"]
    index = {tuple(c["id"]): i for i, c in enumerate(cns)}
    tensor_ids: dict[tuple, int] = {}
    sizes, operands, origins, users, constant = [], [], [], [], []
    operand_tensor = np.full((len(cns), 3), -1, dtype=np.int64)
    for i, c in enumerate(cns):
        for op, bits in c["operand_sizes_bits"].items():
            dims = c.get("operand_dims", {}).get(op) or _operand_dims(
                c["op_type"], op, c["constant_operands"]
            )
            key = (c["id"][0], op, tuple(tuple(c["loop_ranges"][d]) for d in dims))
            if key not in tensor_ids:
                tensor_ids[key] = len(sizes)
                sizes.append(bits)
                operands.append(memory_operand_index(LAYER_TO_MEMORY[op]))
                origins.append(i)
                users.append(0)
                constant.append(op in c["constant_operands"])
            x = tensor_ids[key]
            users[x] += 1
            operand_tensor[i, memory_operand_index(LAYER_TO_MEMORY[op])] = x
    preload = []
    for i, c in enumerate(cns):
        for op in ("O", "W", "I"):
            if op in prefetch and op in c["constant_operands"]:
                m = memory_operand_index(LAYER_TO_MEMORY[op])
                preload.append((int(operand_tensor[i, m]), int(c["core"]), m))
    base = np.array([u if const else 0 for u, const in zip(users, constant)], dtype=np.int64)
    edges = dump["edges"]
    order = [
        index[tuple(pair)] for pair in dump["options_seen_by_allocation_stage"]["scheduling_order"]
    ]
    return ScheduleProblem(
        hardware=hw,
        layer=np.array([c["id"][0] for c in cns], dtype=np.int64),
        sub=np.array([c["id"][1] for c in cns], dtype=np.int64),
        core=np.array([c["core"] for c in cns], dtype=np.int64),
        runtime=np.array([c["runtime"] for c in cns], dtype=np.float64),
        onchip_energy=np.array([c["onchip_energy"] for c in cns], dtype=np.float64),
        offchip_energy=np.array([c["offchip_energy"] for c in cns], dtype=np.float64),
        too_large=tuple(
            tuple(memory_operand_index(m) for m in c["too_large_operands"]) for c in cns
        ),
        bw_to_offchip=np.array([c["offchip_bw"]["wr_in_by_low"] for c in cns], dtype=np.float64),
        bw_from_offchip=np.array([c["offchip_bw"]["rd_out_to_low"] for c in cns], dtype=np.float64),
        final_output=np.array([c["produces_final_output"] for c in cns], dtype=bool),
        operand_tensor=operand_tensor,
        constants=tuple(
            tuple(memory_operand_index(LAYER_TO_MEMORY[op]) for op in c["constant_operands"])
            for c in cns
        ),
        tensor_size=np.array(sizes, dtype=np.int64),
        tensor_operand=np.array(operands, dtype=np.int64),
        tensor_origin=np.array(origins, dtype=np.int64),
        tensor_base_priority=base,
        edge_src=np.array([index[tuple(e["src"])] for e in edges], dtype=np.int64),
        edge_dst=np.array([index[tuple(e["dst"])] for e in edges], dtype=np.int64),
        edge_operand=np.array(
            [
                memory_operand_index(LAYER_TO_MEMORY[e["operand"]]) if e.get("operand") else -1
                for e in edges
            ],
            dtype=np.int64,
        ),
        edge_bits=np.array([e["bits"] for e in edges], dtype=np.int64),
        order=np.array(order, dtype=np.int64),
        prefetch=tuple(preload),
        name=path.stem,
    ).validated()
