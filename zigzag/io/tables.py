"""The workflow's tables, tidy and ready for pandas (units in the column names).

* wide, one row per experiment: ``experiments.csv`` (what was run, network totals, EDP, area,
  energy per memory);
* wide, one row per layer: ``layers.csv`` (figures, energy per memory, area, chosen mapping; the
  one table of every single-core run folder, ``zigzag run``, the API and the workflow alike);
* long, one row per experiment x layer x operand x memory level: ``memory_levels.csv``
  (energy, word accesses per direction, utilisation).

Figure columns come from ``FIGURES`` (name, function of a result): to add a figure, add it
there and name it in ``LAYER_FIGURES`` and/or ``NETWORK_FIGURES``. Written with the ``csv`` module (no pandas import in the workflow's save step).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from html import escape
from pathlib import Path
from typing import Callable, Iterable

from zigzag.cost.json_forms import spatial_mapping_text, temporal_mapping_text
from zigzag.io.atomic import write_text_atomic
from zigzag.workload.layer import Layer

#: every figure column: name (with its unit) -> its value in a layer or network result
FIGURES: dict[str, Callable] = {
    "energy_pJ": lambda r: r.energy_total,
    "latency_cycles": lambda r: r.latency_total2,
    "edp_pJ_cycles": lambda r: r.energy_total * r.latency_total2,
    "mac_energy_pJ": lambda r: r.mac_energy,
    "memory_energy_pJ": lambda r: r.mem_energy,
    "ideal_cycles": lambda r: r.ideal_cycle,
    "computation_cycles": lambda r: r.latency_total0,
    "onloading_cycles": lambda r: r.data_onloading_cycle,
    "offloading_cycles": lambda r: r.data_offloading_cycle,
    "stall_cycles": lambda r: r.stall_slack_comb,
    "spatial_utilization": lambda r: r.mac_spatial_utilization,
    "mac_utilization": lambda r: r.mac_utilization2,
    "tclk_ns": lambda r: r.tclk,  # clock period, IMC arrays only
    "latency_ns": lambda r: r.latency_ns,
    # the layer's unit, and the totals split by unit (docs/models/operators.md)
    "compute_unit": lambda r: r.compute_unit,
    "vector_op": lambda r: r.vector_op,
    "energy_mac_array_pJ": lambda r: r.mac_array_energy,
    "latency_mac_array_cycles": lambda r: r.mac_array_latency,
    "energy_vector_unit_pJ": lambda r: r.vector_unit_energy,
    "latency_vector_unit_cycles": lambda r: r.vector_unit_latency,
}

#: per-layer figures of ``layers.csv``, in column order (after id, name, operator_type)
LAYER_FIGURES: list[tuple[str, Callable]] = [
    (name, FIGURES[name])
    for name in (
        "energy_pJ",
        "mac_energy_pJ",
        "memory_energy_pJ",
        "latency_cycles",
        "ideal_cycles",
        "computation_cycles",
        "onloading_cycles",
        "offloading_cycles",
        "stall_cycles",
        "spatial_utilization",
        "mac_utilization",
        "tclk_ns",
        "latency_ns",
        "compute_unit",
        "vector_op",
    )
]

#: network figures of ``experiments.csv``, in column order (after the experiment's identity)
NETWORK_FIGURES: list[tuple[str, Callable]] = [
    (name, FIGURES[name])
    for name in (
        "energy_pJ",
        "latency_cycles",
        "edp_pJ_cycles",
        "mac_energy_pJ",
        "memory_energy_pJ",
        "ideal_cycles",
        "computation_cycles",
        "onloading_cycles",
        "offloading_cycles",
        "mac_utilization",
        "tclk_ns",
        "latency_ns",
        "energy_mac_array_pJ",
        "latency_mac_array_cycles",
        "energy_vector_unit_pJ",
        "latency_vector_unit_cycles",
    )
]

#: the experiment's identity columns, repeated in the cross-experiment tables
IDENTITY = ("experiment", "workload", "accelerator", "mapping", "opt")

#: word-access directions (ZigZag's long names), as columns of the long table
DIRECTIONS = ("rd_out_to_low", "wr_in_by_low", "rd_out_to_high", "wr_in_by_high")
_SHORT = {
    "rd_out_to_low": "tl",
    "wr_in_by_low": "fl",
    "rd_out_to_high": "th",
    "wr_in_by_high": "fh",
}


#: the per-token columns of an LLM step's experiment row (docs/models/per-token.md)
TOKEN_COLUMNS = (
    "phase",
    "batch",
    "tokens",
    "context",
    "step_cycles",
    "tpot_cycles",
    "energy_per_token_pJ",
    "energy_per_token_J",
    "weights_bytes",
    "kv_cache_bytes_per_token",
    "kv_cache_bytes",
    "state_bytes",
)


def memory_energy(result) -> dict[str, float]:
    """pJ spent in each memory (all operands), in the order the memories first appear."""
    per_memory: dict[str, float] = {}
    for operand, levels in result.mem_energy_breakdown.items():
        names = result.memory_names.get(operand, ())
        for level, energy in enumerate(levels):
            memory = names[level] if level < len(names) else f"L{level}"
            per_memory[memory] = per_memory.get(memory, 0.0) + float(energy)
    return per_memory


def input_id(stem: str, *parts) -> str:
    """A readable, file-name-safe id of an input: its file stem and a short hash of what makes it
    distinct (the workflow's parsed files and per-accelerator folders are named by it)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_.+@-]', '_', stem)}-{digest}"


def distinct_accelerator_names(rows: list[dict]) -> list[str]:
    """Make the ``accelerator`` column tell designs apart: an accelerator is its file, not the
    ``name:`` inside it, so a name used by several files becomes ``name (file)`` in ``rows`` (the
    file's stem, or its path where stems repeat too). Returns one warning line per such name."""
    files: dict[str, list[str]] = {}
    for row in rows:
        file = row.get("accelerator_file")
        if file is not None and file not in files.setdefault(str(row.get("accelerator")), []):
            files[str(row.get("accelerator"))].append(file)
    warnings = []
    for name, paths in files.items():
        if len(paths) < 2:
            continue
        stems = [Path(p).stem for p in paths]
        shown = dict(zip(paths, stems if len(set(stems)) == len(stems) else paths))
        for row in rows:
            if str(row.get("accelerator")) == name and row.get("accelerator_file") in shown:
                row["accelerator"] = f"{name} ({shown[row['accelerator_file']]})"
        warnings.append(
            f"accelerator name '{name}' is used by {len(paths)} files ({', '.join(paths)}); "
            f"they are kept apart as {', '.join(repr(f'{name} ({v})') for v in shown.values())}"
            "; give each design its own name"
        )
    return warnings


def identity(experiment: dict, accelerator_name: str) -> dict:
    """The identity columns of an experiment (files by their stem, accelerator by its name)."""
    return {
        "experiment": experiment["name"],
        "workload": Path(experiment["workload"]).stem,
        "accelerator": accelerator_name,
        "mapping": Path(experiment["mapping"]).stem,
        "opt": experiment["options"]["opt"],
    }


#: factor from an accelerator file's stated area unit to µm²
_TO_UM2 = {"um2": 1.0, "mm2": 1e6}


def experiment_row(
    experiment: dict,
    layers: list,
    total,
    area_unit: str | None = None,
    uncosted: Iterable[str] = (),
) -> dict:
    """The ``experiments.csv`` row of one experiment (``layers``: its per-layer results): identity,
    status, the experiment's named parameters, figures, the number of vector layers left uncosted
    (``uncosted``: their names), area (µm² and mm², converted from the unit
    the accelerator file states in ``area_unit``; a file that states none is read in µm², and the
    ``area_unit`` column says so), options, files."""
    areas = [r.area_total for r in layers if r.area_total is not None]
    row = identity(experiment, layers[0].accelerator_name if layers else "")
    row["layers"] = len(layers)
    row.update({"status": "ok", "reason": ""})
    row.update(experiment.get("parameters") or {})
    row.update({column: value(total) for column, value in NETWORK_FIGURES})
    row["uncosted_layers"] = len(list(uncosted))
    row["area_um2"] = max(areas) * _TO_UM2.get(area_unit, 1.0) if areas else None
    row["area_unit"] = area_unit or "unstated (read as um2)"
    if total.tclk is not None:  # IMC: ZigZag's area, of the first layer, in mm²
        row["area_um2"] = total.area_total * 1e6
        row["area_unit"] = "mm2"
    row["area_mm2"] = None if row["area_um2"] is None else row["area_um2"] * 1e-6
    for memory, energy in _summed_memory_energy(layers).items():
        row[f"{memory}_energy_pJ"] = energy
    row.update(_options_and_files(experiment))
    return row


def failed_experiment_row(experiment: dict, failure: dict) -> dict:
    """The ``experiments.csv`` row of an experiment that did not run: status ``failed`` and the
    one-line reason (with the step that failed), no figures."""
    row = identity(experiment, Path(experiment["accelerator"]).stem)
    row.update(
        {"layers": None, "status": "failed", "reason": f"{failure['step']}: {failure['reason']}"}
    )
    row.update(experiment.get("parameters") or {})
    row.update(_options_and_files(experiment))
    return row


def _options_and_files(experiment: dict) -> dict:
    options = {k: v for k, v in experiment["options"].items() if k != "opt"}
    return {
        **options,
        **{f"{k}_file": experiment[k] for k in ("workload", "accelerator", "mapping")},
    }


def _summed_memory_energy(layers: list) -> dict[str, float]:
    total: dict[str, float] = {}
    for result in layers:
        for memory, energy in memory_energy(result).items():
            total[memory] = total.get(memory, 0.0) + energy
    return total


def layer_rows(entries: Iterable[tuple[dict | Layer, object]]) -> list[dict]:
    """The rows of every single-core ``layers.csv`` (docs/reference/results.md): ``entries`` are
    (layer, result) pairs, the layer a :class:`Layer` or a plan entry (id, name, operator_type and
    its ``spec``). Columns: identity, ``LAYER_FIGURES``, ``<memory>_energy_pJ`` per memory,
    ``area`` (the accelerator's, in its file's unit), the chosen mapping and ``ops``."""
    rows = []
    for layer, result in entries:
        if isinstance(layer, Layer):
            row = {"id": layer.id, "name": layer.name, "operator_type": layer.operator_type}
            ops = layer.total_macs
        else:
            row = {
                "id": layer["id"],
                "name": layer["name"],
                "operator_type": layer["operator_type"],
            }
            sizes = (layer.get("spec") or {}).get("loop_sizes")
            ops = math.prod(sizes) if sizes else None
        row.update({column: value(result) for column, value in LAYER_FIGURES})
        row.update(
            {f"{memory}_energy_pJ": energy for memory, energy in memory_energy(result).items()}
        )
        row["area"] = result.area_total
        row["spatial_mapping"] = spatial_mapping_text(result)
        output = next(iter(result.temporal_mapping_stationary))
        row["temporal_mapping_O"] = temporal_mapping_text(result, output)
        row["ops"] = ops  # MACs, or a vector layer's operations: a step's work adds up
        rows.append(row)
    return rows


def memory_level_rows(
    ident: dict, entries: Iterable[tuple[dict, object]], accelerators: dict | None = None
) -> list[dict]:
    """The long table: one row per layer x layer operand x memory level of that operand; with
    ``accelerators`` (entry key -> Accelerator) also each memory's energy per access, area and where
    they come from (``cost_source``: file, cacti or table)."""
    rows = []
    for entry, result in entries:
        accelerator = (accelerators or {}).get(entry.get("key"))
        links = (entry.get("spec") or {}).get("mapping", {}).get("memory_operand_links", {})
        for operand, levels in result.mem_energy_breakdown.items():
            names = result.memory_names.get(operand, ())
            accesses = result.memory_word_access.get(operand, ())
            utilisation = result.mem_utilization_shared.get(operand, ())
            for level, energy in enumerate(levels):
                row = {
                    **ident,
                    "layer_id": entry["id"],
                    "layer": entry["name"],
                    "operator_type": entry["operator_type"],
                    "operand": operand,
                    "memory_operand": links.get(operand, ""),
                    "level": level,
                    "memory": names[level] if level < len(names) else f"L{level}",
                    "energy_pJ": energy,
                }
                words = accesses[level] if level < len(accesses) else {}
                for direction in DIRECTIONS:
                    row[f"{direction}_words"] = words.get(_SHORT[direction], words.get(direction))
                row["utilization"] = utilisation[level] if level < len(utilisation) else None
                memory = accelerator.memory.get(row["memory"]) if accelerator is not None else None
                if memory is not None:
                    row.update(
                        r_cost_pJ=memory.r_cost,
                        w_cost_pJ=memory.w_cost,
                        area=memory.area,
                        cost_source=memory.cost_source,
                    )
                rows.append(row)
    return rows


def _columns(rows: list[dict]) -> list[str]:
    """Union of the rows' columns in first-seen order, the per-memory energy columns (which
    differ between accelerators) kept together right after the figures."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    figures = set(FIGURES)
    memory = [c for c in columns if c.endswith("_energy_pJ") and c not in figures]
    others = [c for c in columns if c not in memory]
    anchors = [c for c in ("area_mm2", "area_um2", "mac_utilization") if c in others]
    at = others.index(anchors[0]) + 1 if anchors else len(others)
    return others[:at] + memory + others[at:]


def csv_text(
    rows: list[dict], *, float_format: str = "%.10g", columns: list[str] | None = None
) -> str:
    """CSV of dict rows (columns: union in first-seen order; missing cells empty)."""
    columns = columns or _columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c), float_format) for c in columns])
    return buffer.getvalue()


def _cell(value, float_format: str):
    if value is None:
        return ""
    if isinstance(value, float):
        return float_format % value
    return value


def write_csv(path: str | Path, rows: list[dict], *, float_format: str = "%.10g") -> None:
    write_text_atomic(path, csv_text(rows, float_format=float_format))


def read_csv(path: str | Path) -> list[dict]:
    """Rows of a CSV written by :func:`write_csv` (values as text)."""
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def concatenated(tables: Iterable[tuple[dict, list[dict]]]) -> list[dict]:
    """Rows of several tables, each prefixed with the given identity columns."""
    return [{**prefix, **row} for prefix, rows in tables for row in rows]


def html_table(
    rows: list[dict], title: str, *, float_format: str = "%.4g", columns: list[str] | None = None
) -> str:
    """A self-contained HTML page showing the rows as a table (the report's view of a CSV)."""
    columns = columns or _columns(rows)
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)

    def cell(value) -> str:
        if isinstance(value, str):
            try:
                value = float(value) if any(ch in value for ch in ".eE") else int(value)
            except ValueError:
                pass
        text = escape(str(_cell(value, float_format)))
        return (
            f'<td class="n">{text}</td>' if isinstance(value, (int, float)) else f"<td>{text}</td>"
        )

    body = "\n".join("<tr>" + "".join(cell(row.get(c)) for c in columns) + "</tr>" for row in rows)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>
body {{ font-family: sans-serif; font-size: 12px; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; white-space: nowrap; }}
th {{ background: #eef; position: sticky; top: 0; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr:nth-child(even) td {{ background: #f7f7f7; }}
</style></head>
<body><h3>{escape(title)}</h3>
<table><thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody></table></body></html>
"""
