"""Result files: ZigZag's complete / simple JSON and pickle, plus a per-layer table.

File names follow ZigZag: ``<layer name, '/' -> '_'>_complete.json`` per layer,
``overall_simple.json`` for the network and ``list_of_cmes.pickle`` (the per-layer results).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from zigzag.cost.result import CostResult, CumulativeResult
from zigzag.hardware.accelerator import DIRECTION_NAMES, Accelerator
from zigzag.hardware.vector import VECTOR_UNIT, on_vector_unit
from zigzag.io.atomic import write_json_atomic
from zigzag.workload.layer import Layer

if TYPE_CHECKING:
    import pandas as pd


def file_stem(layer_name: str) -> str:
    return layer_name.replace("/", "_")


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
        return f"MemoryLevel(instance={memory.name},operands={list(memory.operands)}, " \
               f"served_dimensions={{{served}}})"

    array = accelerator.operational_array
    if array.is_imc:
        array_summary = {"operational_unit: ImcArray, dimensions": dict(array.dimensions)}  # sic, as ZigZag
    else:
        array_summary = {
            "operational_unit": {"energy_cost": array.unit_energy, "area": array.unit_area},
            "dimensions": dict(array.dimensions),
        }
    return {
        "name": accelerator.name,
        "operational_array": array_summary,
        "memory_hierarchy": [label(m) for m in accelerator.topological_order],
        "mem_hierarchy_dict": {op: [label(m) for m in accelerator.hierarchy(op)] for op in accelerator.memory_operands},
        "mem_size_dict": {op: [m.size for m in accelerator.hierarchy(op)] for op in accelerator.memory_operands},
        "mem_sharing_list": [dict(g) for g in accelerator.sharing_groups],
    }


def complete_json(result: CostResult, layer: Layer, accelerator: Accelerator) -> dict:
    """ZigZag's ``<layer>_complete.json`` content for one layer result (with the IMC evaluation's
    array energy breakdown, clock and area for an in-memory-computing array). A vector layer's
    inputs describe the vector view it was evaluated on (docs/models/operators.md)."""
    if result.compute_unit == VECTOR_UNIT and accelerator.vector_unit is not None:
        layer, accelerator = on_vector_unit(layer, accelerator)
    data = {
        "outputs": {
            "memory": {
                "utilization": {op: list(v) for op, v in result.mem_utilization_shared.items()},
                "word_accesses": {op: _long_directions(v) for op, v in result.memory_word_access.items()},
            },
            "energy": {
                "energy_total": result.energy_total,
                "operational_energy": result.mac_energy,
                "memory_energy": result.mem_energy,
                "memory_energy_breakdown_per_level": {op: list(v) for op, v in result.mem_energy_breakdown.items()},
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


def _add_imc_outputs(outputs: dict, result: CostResult) -> None:
    """The parts of ZigZag's complete JSON only an IMC evaluation writes (names as ZigZag's)."""
    outputs["energy"]["operational_energy_breakdown"] = dict(result.mac_energy_breakdown)
    outputs["latency"]["computation_breakdown"] = {
        "mac_computation": result.ideal_temporal_cycle,
        "memory_stalling": result.stall_slack_comb,
    }
    memory_area = sum(result.area_memories.values())
    outputs["clock"] = {"tclk (ns)": result.tclk, "tclk_breakdown (ns)": dict(result.tclk_breakdown)}
    outputs["area (mm^2)"] = {
        "total_area": result.area_total,
        "total_area_breakdown:": {"imc_area": result.area_operational_array, "mem_area": memory_area},
        "total_area_breakdown_further": {
            "imc_area_breakdown": dict(result.area_operational_array_breakdown),
            "mem_area_breakdown": dict(result.area_memories),
        },
    }


def _latency_and_utilization(result: CostResult | CumulativeResult) -> dict:
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


def cumulative_json(total: CumulativeResult) -> dict:
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


def spatial_mapping_text(result: CostResult) -> str:
    """``D1: K 32; D2: C 32`` (array form of the chosen spatial mapping)."""
    array = result.spatial_mapping_array or {}
    return "; ".join(
        f"{oa}: " + " ".join(f"{d} {f:g}" for d, f in unrolling.items()) for oa, unrolling in array.items()
    )


def temporal_mapping_text(result: CostResult, operand: str) -> str:
    """The loop nest of one operand, outermost first, levels separated by ``|``."""
    levels = result.temporal_mapping_stationary[operand]
    return " | ".join(" ".join(f"{d} {s:g}" for d, s in reversed(level)) for level in reversed(levels))


def layer_table(rows: list[tuple[dict | Layer, CostResult]]) -> pd.DataFrame:
    """One row per layer: identity, chosen mapping and the main figures."""
    import pandas as pd  # here, not at the top: evaluating a network (``zigzag.api.run``) needs no pandas

    records = []
    for layer, result in rows:
        info = layer if isinstance(layer, dict) else {"id": layer.id, "name": layer.name,
                                                      "operator_type": layer.operator_type}
        records.append({
            "id": info["id"],
            "name": info["name"],
            "operator_type": info["operator_type"],
            "energy_pJ": result.energy_total,
            "mac_energy_pJ": result.mac_energy,
            "memory_energy_pJ": result.mem_energy,
            "latency_cycles": result.latency_total2,
            "ideal_cycles": result.ideal_cycle,
            "computation_cycles": result.latency_total0,
            "onloading_cycles": result.data_onloading_cycle,
            "offloading_cycles": result.data_offloading_cycle,
            "stall_cycles": result.stall_slack_comb,
            "spatial_utilization": result.mac_spatial_utilization,
            "mac_utilization": result.mac_utilization2,
            "area": result.area_total,
            "tclk_ns": result.tclk,
            "latency_ns": result.latency_ns,
            "compute_unit": result.compute_unit,
            "vector_op": result.vector_op,
            "spatial_mapping": spatial_mapping_text(result),
            "temporal_mapping_O": temporal_mapping_text(result, next(iter(result.temporal_mapping_stationary))),
        })
    return pd.DataFrame.from_records(records)


def summary(total: CumulativeResult, layer_count: int, uncosted: list[str] | tuple[str, ...] = ()) -> dict:
    """Network totals (energy in pJ, latency in cycles), their main components, the split between
    the MAC array and the vector unit, and the vector layers left uncosted (``uncosted``, by name)."""
    return {
        "energy": total.energy_total,
        "latency": total.latency_total2,
        "mac_energy": total.mac_energy,
        "memory_energy": total.mem_energy,
        "ideal_cycles": total.ideal_cycle,
        "computation_cycles": total.latency_total0,
        "onloading_cycles": total.data_onloading_cycle,
        "offloading_cycles": total.data_offloading_cycle,
        "mac_utilization": total.mac_utilization2,
        "area": total.area_total,
        "tclk_ns": total.tclk,
        "latency_ns": total.latency_ns,
        "mac_array_energy": total.mac_array_energy,
        "mac_array_latency": total.mac_array_latency,
        "vector_unit_energy": total.vector_unit_energy,
        "vector_unit_latency": total.vector_unit_latency,
        "layers": layer_count,
        "uncosted_layers": list(uncosted),
    }


def save_network_outputs(result, folder: Path, *, pickle_filename: str | Path | None = None,
                         notes: list[str] | None = None, extra: dict | None = None) -> None:
    """The files ZigZag's API writes (complete JSON per layer, overall_simple.json, pickle), plus
    ``layers.csv`` and ``summary.json`` (with ``notes``: the warnings about the run's inputs, and
    ``extra``: more summary fields, e.g. an LLM step's ``inference`` and ``per_token`` figures)."""
    folder = Path(folder)
    for layer, cost in result.layers:
        accelerator = result.accelerators[layer.id]
        write_json_atomic(folder / f"{file_stem(layer.name)}_complete.json", complete_json(cost, layer, accelerator))
    write_json_atomic(folder / "overall_simple.json", {"energy": result.energy, "latency": result.latency})
    uncosted = getattr(result, "uncosted", [])
    write_json_atomic(folder / "summary.json", {**summary(result.total, len(result.layers), uncosted),
                                                **(extra or {}), "notes": notes or []})
    layer_table(result.layers).to_csv(folder / "layers.csv", index=False)
    pickle_path = Path(pickle_filename) if pickle_filename else folder / "list_of_cmes.pickle"
    pickle_path.parent.mkdir(parents=True, exist_ok=True)
    with open(pickle_path, "wb") as handle:
        pickle.dump([cost for _, cost in result.layers], handle, protocol=pickle.HIGHEST_PROTOCOL)
