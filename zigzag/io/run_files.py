"""A single-core run's folder: ``summary.json`` and ``layers.csv`` (written by :func:`write_run_folder`
for ``zigzag run``, the API and the workflow's save step alike), plus ZigZag's files.

ZigZag's file names: ``<layer name, '/' -> '_'>_complete.json`` per layer, ``overall_simple.json``
for the network and ``list_of_cmes.pickle`` (the per-layer results).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Iterable

from zigzag.cost.json_forms import complete_json
from zigzag.cost.result import CumulativeResult
from zigzag.io.atomic import atomic_target, write_json_atomic
from zigzag.io.tables import layer_rows, write_csv
from zigzag.workload.layer import Layer


def file_stem(layer_name: str) -> str:
    return layer_name.replace("/", "_")


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


def write_run_folder(
    folder: str | Path,
    layers: Iterable[tuple[dict | Layer, object]],
    summary_fields: dict,
    *,
    notes: list[str] | None = None,
    float_format: str = "%.10g",
) -> list[dict]:
    """The files every single-core run folder has: ``summary.json`` (``summary_fields``, then
    ``notes``: the warnings about the run's inputs) and ``layers.csv`` (:func:`layer_rows` of
    ``layers``, numbers in ``float_format``). Returns the layer rows."""
    folder = Path(folder)
    rows = layer_rows(layers)
    write_csv(folder / "layers.csv", rows, float_format=float_format)
    write_json_atomic(folder / "summary.json", {**summary_fields, "notes": notes or []})
    return rows


def save_network_outputs(
    result,
    folder: Path,
    *,
    pickle_filename: str | Path | None = None,
    notes: list[str] | None = None,
    extra: dict | None = None,
) -> None:
    """The run folder of ``zigzag run`` and the API: :func:`write_run_folder` (``extra``: more
    summary fields, e.g. an LLM step's ``per_token`` figures) and the files ZigZag's API writes
    (complete JSON per layer, overall_simple.json, pickle)."""
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
    write_run_folder(
        folder,
        result.layers,
        {**summary(result.total, len(result.layers), uncosted), **(extra or {})},
        notes=notes,
    )
    pickle_path = Path(pickle_filename) if pickle_filename else folder / "list_of_cmes.pickle"
    with atomic_target(pickle_path) as tmp, open(tmp, "wb") as handle:
        pickle.dump([cost for _, cost in result.layers], handle, protocol=pickle.HIGHEST_PROTOCOL)
