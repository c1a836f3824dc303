"""Result files: ZigZag's complete / simple JSON and pickle, plus a per-layer table.

File names follow ZigZag: ``<layer name, '/' -> '_'>_complete.json`` per layer,
``overall_simple.json`` for the network and ``list_of_cmes.pickle`` (the per-layer results).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from zigzag.cost.result import CostResult, CumulativeResult
from zigzag.cost.json_forms import complete_json, spatial_mapping_text, temporal_mapping_text
from zigzag.io.atomic import atomic_target, write_json_atomic
from zigzag.workload.layer import Layer

if TYPE_CHECKING:
    import pandas as pd


def file_stem(layer_name: str) -> str:
    return layer_name.replace("/", "_")


def layer_table(rows: list[tuple[dict | Layer, CostResult]]) -> pd.DataFrame:
    """One row per layer: identity, chosen mapping, the main figures and ``ops`` (MACs, or a vector layer's
    operations: its loop nest's points, so a step's work adds up)."""
    import pandas as pd  # here, not at the top: evaluating a network (``zigzag.api.run``) needs no pandas

    records = []
    for layer, result in rows:
        info = (
            layer
            if isinstance(layer, dict)
            else {"id": layer.id, "name": layer.name, "operator_type": layer.operator_type}
        )
        records.append(
            {
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
                "temporal_mapping_O": temporal_mapping_text(
                    result, next(iter(result.temporal_mapping_stationary))
                ),
                "ops": layer.total_macs if isinstance(layer, Layer) else layer.get("ops"),
            }
        )
    return pd.DataFrame.from_records(records)


def summary(
    total: CumulativeResult, layer_count: int, uncosted: list[str] | tuple[str, ...] = ()
) -> dict:
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


def save_network_outputs(
    result,
    folder: Path,
    *,
    pickle_filename: str | Path | None = None,
    notes: list[str] | None = None,
    extra: dict | None = None,
) -> None:
    """The files ZigZag's API writes (complete JSON per layer, overall_simple.json, pickle), plus
    ``layers.csv`` and ``summary.json`` (with ``notes``: the warnings about the run's inputs, and
    ``extra``: more summary fields, e.g. an LLM step's ``inference`` and ``per_token`` figures)."""
    folder = Path(folder)
    for layer, cost in result.layers:
        accelerator = result.accelerators[layer.id]
        write_json_atomic(
            folder / f"{file_stem(layer.name)}_complete.json",
            complete_json(cost, layer, accelerator),
        )
    write_json_atomic(
        folder / "overall_simple.json", {"energy": result.energy, "latency": result.latency}
    )
    uncosted = getattr(result, "uncosted", [])
    write_json_atomic(
        folder / "summary.json",
        {
            **summary(result.total, len(result.layers), uncosted),
            **(extra or {}),
            "notes": notes or [],
        },
    )
    with atomic_target(folder / "layers.csv") as tmp:
        layer_table(result.layers).to_csv(tmp, index=False)
    pickle_path = Path(pickle_filename) if pickle_filename else folder / "list_of_cmes.pickle"
    with atomic_target(pickle_path) as tmp, open(tmp, "wb") as handle:
        pickle.dump([cost for _, cost in result.layers], handle, protocol=pickle.HIGHEST_PROTOCOL)
