"""The job of a cost-table entry (the content that determines it, hashed into its key) and the
single-core search that computes the entry from it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zigzag.cost.model import analyse
from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.io.loaders import accelerator_from_dict
from zigzag.mapping_search.jobs import job_key, layer_from_job, layer_job, model_version
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.offchip import (
    FOUR_WAY,
    offchip_bandwidth,
    stored_bits,
    too_large_operands,
    with_dram_level,
)
from zigzag.multicore.cost_table.entries import CostEntry, NodeKey

if TYPE_CHECKING:
    from zigzag.multicore.hardware import Core


#: The version of the Stream-specific part of an entry (too-large test, DRAM level, split, off-chip
#: bandwidth): a hash of this package and offchip.py, as the single-core model's version inside the job.
STREAM_COST_VERSION = model_version(sources=("multicore/cost_table", "multicore/offchip.py"))


def cost_job(
    node: NodeKey, core: "Accelerator | Core", options: SearchOptions, dram: Memory | None
) -> dict:
    """Everything that determines ``node``'s entry on ``core`` (and nothing else).

    Runs the too-large test (docs/models/multi-core.md#cost-table) and adds the DRAM level (docs/models/multi-core.md#cost-table), so the job is the single-core
    layer job on the extended core plus the streamed operands. The core's name is left out (it does
    not change the cost), so identical cores share entries.
    """
    core = getattr(
        core, "accelerator", core
    )  # a multi-core accelerator's Core, or a bare Accelerator
    if core.operational_array.total_units == 0:
        raise InputError(
            None,
            f"core '{core.name}'",
            "has no operational units (the off-chip core); it runs no CN",
        )
    layer = node.layer(core)
    streamed = too_large_operands(layer, core, stored_bits(layer, dict(node.edge_bits)))
    if streamed and dram is None:
        raise InputError(
            None,
            f"core '{core.name}'",
            f"cannot hold memory operands {', '.join(streamed)} of a CN and the accelerator has no "
            "off-chip core to stream them from; add an offchip_core",
        )
    hardware = with_dram_level(core, dram, streamed) if streamed else core
    job = layer_job(layer, hardware, options)
    job["accelerator"]["name"] = "core"
    job["stream"] = {"version": STREAM_COST_VERSION, "dram_operands": list(streamed)}
    return job


def evaluate_cost_job(
    job: dict, key: str | None = None, layer_name: str | None = None
) -> CostEntry:
    """Search a job's CN on its core and derive Stream's figures (docs/models/multi-core.md#cost-table);
    ``layer_name`` names the CN's layer in the search's warnings."""
    layer = layer_from_job({**job, "layer_name": layer_name or "CN"})
    hardware = accelerator_from_dict(job["accelerator"])
    options = SearchOptions(**job["options"])
    best, stats = search_layer(layer, hardware, options, show_progress=False)
    streamed = tuple(job["stream"]["dram_operands"])
    in_equation_order = tuple(
        layer.memory_operand(op) for op in layer.operands if layer.memory_operand(op) in streamed
    )
    onchip, offchip = best.energy_total, 0.0
    for mem_op in in_equation_order:
        dram_energy = best.mem_energy_breakdown[layer.layer_operand_of[mem_op]][-1]
        offchip += dram_energy
        onchip -= dram_energy
    bandwidth = dict.fromkeys(FOUR_WAY, 0)
    if streamed:
        detail = analyse(
            layer,
            hardware,
            best.spatial_mapping,
            best.spatial_mapping_int,
            best.temporal_mapping,
            spatial_mapping_array=best.spatial_mapping_array,
            **options.model_options(),
        )
        bandwidth = offchip_bandwidth(detail, hardware.memories[-1].name)
    return CostEntry(
        key=key or job_key(job),
        too_large_operands=in_equation_order,
        dram_operands=streamed,
        onchip_energy=onchip,
        offchip_energy=offchip,
        offchip_bw=bandwidth,
        result=best,
        evaluations=stats.evaluations,
    )
