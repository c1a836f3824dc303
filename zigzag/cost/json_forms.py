"""ZigZag's JSON forms of a layer's and a network's cost results (``*_complete.json``,
``overall_complete.json``) and the mapping texts of the result tables.

The functions take a :class:`~zigzag.cost.result.CostResult` (``result``) or a
:class:`~zigzag.cost.result.CumulativeResult` (``total``); they read their fields only, so that
the results' own ``__jsonrepr__`` can call them without an import circle.
"""

from __future__ import annotations

from zigzag.hardware.accelerator import DIRECTION_NAMES, Accelerator
from zigzag.hardware.vector import VECTOR_UNIT, on_vector_unit
from zigzag.workload.layer import Layer


def _long_directions(per_level: tuple) -> list[dict]:
    return [{DIRECTION_NAMES[d]: level[d] for d in ("tl", "fl", "th", "fh")} for level in per_level]


def _loops_as_text(levels_per_operand: dict) -> dict:
    return {
        op: [[f"({dim}, {size})" for dim, size in level] for level in levels]
        for op, levels in levels_per_operand.items()
    }


def accelerator_summary(accelerator: Accelerator) -> dict:
    """The ``inputs.accelerator`` part of ZigZag's complete JSON."""

    def label(memory) -> str:
        # ZigZag prints a Python set here; sorted, so the text is the same in every process
        served = ", ".join(repr(dim) for dim in sorted(set(memory.served_dimensions)))
        return (
            f"MemoryLevel(instance={memory.name},operands={list(memory.operands)}, "
            f"served_dimensions={{{served}}})"
        )

    array = accelerator.operational_array
    if array.is_imc:
        array_summary = {
            "operational_unit: ImcArray, dimensions": dict(array.dimensions)
        }  # sic, as ZigZag
    else:
        array_summary = {
            "operational_unit": {"energy_cost": array.unit_energy, "area": array.unit_area},
            "dimensions": dict(array.dimensions),
        }
    return {
        "name": accelerator.name,
        "operational_array": array_summary,
        "memory_hierarchy": [label(m) for m in accelerator.topological_order],
        "mem_hierarchy_dict": {
            op: [label(m) for m in accelerator.hierarchy(op)] for op in accelerator.memory_operands
        },
        "mem_size_dict": {
            op: [m.size for m in accelerator.hierarchy(op)] for op in accelerator.memory_operands
        },
        "mem_sharing_list": [dict(g) for g in accelerator.sharing_groups],
    }


def complete_json(result, layer: Layer, accelerator: Accelerator) -> dict:
    """ZigZag's ``<layer>_complete.json`` content for one layer result (with the IMC evaluation's
    array energy breakdown, clock and area for an in-memory-computing array). A vector layer's
    inputs describe the vector view it was evaluated on (docs/models/operators.md)."""
    if result.compute_unit == VECTOR_UNIT and accelerator.vector_unit is not None:
        layer, accelerator = on_vector_unit(layer, accelerator)
    data = {
        "outputs": {
            "memory": {
                "utilization": {op: list(v) for op, v in result.mem_utilization_shared.items()},
                "word_accesses": {
                    op: _long_directions(v) for op, v in result.memory_word_access.items()
                },
            },
            "energy": {
                "energy_total": result.energy_total,
                "operational_energy": result.mac_energy,
                "memory_energy": result.mem_energy,
                "memory_energy_breakdown_per_level": {
                    op: list(v) for op, v in result.mem_energy_breakdown.items()
                },
                "memory_energy_breakdown_per_level_per_operand": {
                    op: _long_directions(v) for op, v in result.mem_energy_breakdown_further.items()
                },
            },
            **_latency_and_utilization(result),
        },
        "inputs": {
            "accelerator": accelerator_summary(accelerator),
            "layer": {
                "name": layer.name,
                "type": layer.operator_type,
                "equation": layer.equation,
                "equation_relations": [str(r) for r in layer.relations],
                "loop_dimensions": dict(layer.loop_sizes),
                "operand_precision": dict(layer.precision),
                "user_spatial_mapping": result.spatial_mapping_array,
                "memory_operand_links": dict(layer.memory_operand_links),
                **({"vector_op": layer.vector_op} if layer.vector_op is not None else {}),
            },
            "spatial_mapping": _loops_as_text(result.spatial_mapping_int),
            "temporal_mapping": _loops_as_text(result.temporal_mapping_stationary),
        },
    }
    if result.tclk is not None:
        _add_imc_outputs(data["outputs"], result)
    return data


def _add_imc_outputs(outputs: dict, result) -> None:
    """The parts of ZigZag's complete JSON only an IMC evaluation writes (names as ZigZag's)."""
    outputs["energy"]["operational_energy_breakdown"] = dict(result.mac_energy_breakdown)
    outputs["latency"]["computation_breakdown"] = {
        "mac_computation": result.ideal_temporal_cycle,
        "memory_stalling": result.stall_slack_comb,
    }
    memory_area = sum(result.area_memories.values())
    outputs["clock"] = {
        "tclk (ns)": result.tclk,
        "tclk_breakdown (ns)": dict(result.tclk_breakdown),
    }
    outputs["area (mm^2)"] = {
        "total_area": result.area_total,
        "total_area_breakdown:": {
            "imc_area": result.area_operational_array,
            "mem_area": memory_area,
        },
        "total_area_breakdown_further": {
            "imc_area_breakdown": dict(result.area_operational_array_breakdown),
            "mem_area_breakdown": dict(result.area_memories),
        },
    }


def _latency_and_utilization(result) -> dict:
    """The ``latency`` and ``spatial`` outputs of ZigZag's complete JSON (layer or network)."""
    return {
        "latency": {
            "data_onloading": result.latency_total1 - result.latency_total0,
            "computation": result.latency_total0,
            "data_offloading": result.latency_total2 - result.latency_total1,
        },
        "spatial": {
            "mac_utilization": {
                "ideal": result.mac_spatial_utilization,
                "stalls": result.mac_utilization0,
                "stalls_onloading": result.mac_utilization1,
                "stalls_onloading_offloading": result.mac_utilization2,
            }
        },
    }


def cumulative_json(total) -> dict:
    """``overall_complete.json``: the summed outputs; the inputs name the layers summed."""
    return {
        "outputs": {
            "memory": {"utilization": None, "word_accesses": total.to_dict()["memory_word_access"]},
            "energy": {
                "energy_total": total.energy_total,
                "operational_energy": total.mac_energy,
                "memory_energy": total.mem_energy,
                "memory_energy_breakdown_per_level": total.to_dict()["mem_energy_breakdown"],
            },
            **_latency_and_utilization(total),
        },
        "inputs": {"accelerator": total.accelerator_name, "layer": list(total.layer_ids)},
    }


def spatial_mapping_text(result) -> str:
    """``D1: K 32; D2: C 32`` (array form of the chosen spatial mapping)."""
    array = result.spatial_mapping_array or {}
    return "; ".join(
        f"{oa}: " + " ".join(f"{d} {f:g}" for d, f in unrolling.items())
        for oa, unrolling in array.items()
    )


def temporal_mapping_text(result, operand: str) -> str:
    """The loop nest of one operand, outermost first, levels separated by ``|``."""
    levels = result.temporal_mapping_stationary[operand]
    return " | ".join(
        " ".join(f"{d} {s:g}" for d, s in reversed(level)) for level in reversed(levels)
    )
