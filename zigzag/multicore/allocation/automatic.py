"""The automatic mapping checked against the cost model: a core whose array cannot map a layer
(ZigZag finds no loop ordering that fits its memories) is taken out of that layer's candidates
(docs/reference/multicore-mapping.md#automatic-mapping)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.automap import write_mapping
from zigzag.multicore.inputs import cn_graph_from_files, mapping_for
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.schedule.costs import node_key


def checked_automatic_mapping(
    accelerator: MultiCoreAccelerator,
    workload: str | Path,
    *,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
) -> StreamMapping:
    """The automatic mapping of ``workload``, each layer's cores limited to those its computation
    nodes can be costed on; an entry per layer that lost a core. One line if a layer keeps none."""
    mapping = mapping_for(accelerator, workload)
    graph = cn_graph_from_files(accelerator, workload, mapping, "lbl")
    table = CostTable.for_accelerator(
        accelerator, options=SearchOptions(opt="latency", lpf_limit=lpf_limit), cache=cache
    )
    first_cn = {}
    for cn, layer in enumerate(graph.layer.tolist()):
        first_cn.setdefault(int(layer), cn)
    rep = graph.cost_node()
    entries = dict(mapping.entries)
    for layer, cn in sorted(first_cn.items()):
        info = graph.layers[layer]
        key = node_key(graph, int(rep[cn]))
        kept, reasons = [], []
        for core in info.core_allocation:
            try:
                table.entry(key, int(core))
                kept.append(int(core))
            except MappingError as error:
                reasons.append(f"core {core}: {error}")
        if not kept:
            raise InputError(
                mapping.file or str(workload),
                f"layer '{info.name}'",
                f"no core can map this {info.op_type} layer ({reasons[0]}); give a mapping file",
            )
        if len(kept) < len(info.core_allocation):
            base = mapping.entry_for(info.name, info.op_type)
            entries[info.name] = replace(
                base,
                name=info.name,
                core_allocation=tuple(kept),
                core_allocation_is_fixed=len(kept) == 1,
            )
    return replace(mapping, entries=entries)


def write_automatic_mapping(
    accelerator: str | Path,
    workload: str | Path,
    output: str | Path,
    cwd: str | None = None,
    cache: str | Path | None = None,
) -> Path:
    """The checked automatic mapping of ``workload`` on ``accelerator``, written to
    ``output/automatic_mapping.yaml`` (what the command line runs when given no mapping)."""
    hardware = load_multicore_accelerator(accelerator, cwd)
    mapping = checked_automatic_mapping(hardware, workload, cache=cache)
    return write_mapping(mapping, Path(output) / "automatic_mapping.yaml")
