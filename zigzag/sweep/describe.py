"""What a sweep's results folder says about itself, for the HTML report (``zigzag.report``).

* ``sweep.json``: the sweep's parameters (name, document path, role, the values as the user
  wrote them), its constraints, clock, mapping-search target and ranking weights;
* ``details/<variant id>.js``: per variant, its layers on each workload (energy by memory,
  latency terms, utilisation) and its memory hierarchy, loaded by the report on demand.

Rows carry a variant's per-layer figures under :data:`DETAIL_KEY` from the point that
evaluated it until :func:`split_details` takes them out before the tables are written (in a
batch job's file as JSON text, :func:`detail_as_text`, which the collect job never parses).
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.io.atomic import write_json_atomic, write_text_if_changed
from zigzag.io.tables import memory_energy
from zigzag.plots.units import is_size_path
from zigzag.sweep.tables import group_of
from zigzag.variants.expansion import resolve_value, value_label

#: the key of a row's per-layer figures (never a table column)
DETAIL_KEY = "_detail"


def describe(sweep) -> dict:
    """The JSON-ready description of a sweep (see the module's docstring)."""
    spec = sweep.spec
    parameters = [
        {"name": group, "path": None, "role": "fragment", "labels": {}}
        for group, _ in spec.fragments
    ]
    for axis in spec.axes:
        for p in axis:
            labels = {str(_key(resolve_value(raw))): value_label(raw) for raw in p.values}
            parameters.append({"name": p.name, "path": p.path, "role": "varied", "labels": labels})
    parameters += [
        {"name": p.name, "path": p.path, "role": "derived", "labels": {}} for p in spec.derived
    ]
    for parameter in parameters:
        parameter["named"] = (
            parameter["role"] != "derived" or parameter["name"] != parameter["path"]
        )
        parameter["size"] = is_size_path(parameter["path"])
    opt = (sweep.options or {}).get("opt")
    if sweep.kind == "multicore":
        choose = (sweep.allocation_search or {}).get("choose")
        target = (
            f"allocation search where the mapping leaves cores to choose: {choose}"
            if choose
            else "the mapping's allocation"
        )
    else:
        target = f"mapping search: {opt or 'latency'}"
    return {
        "name": sweep.name,
        "kind": sweep.kind,
        "parameters": parameters,
        "constraints": [c.text for c in sweep.constraints],
        "clock_ghz": sweep.clock_ghz,
        "target": target,
        "workloads": [Path(w).stem for w in sweep.workloads],
        "modes": list(sweep.modes),
        "ranking": dict(sweep.ranking or {}),
        "search": sweep.search is not None,
    }


def _key(value):
    return int(value) if isinstance(value, float) and value.is_integer() else value


def figure_parameters(spec) -> list[str]:
    """The parameters that get a figure: fragments, varied ones, and derived ones given a name."""
    return [
        p for p in spec.varied_names if p not in {d.name for d in spec.derived if d.name == d.path}
    ]


def split_details(rows: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """The rows without their per-layer figures, and those figures: variant id -> {group: detail}."""
    details: dict[str, dict] = {}
    kept = []
    for row in rows:
        detail = row.get(DETAIL_KEY)
        row = {k: v for k, v in row.items() if k != DETAIL_KEY}
        if detail:
            details.setdefault(str(row["variant_id"]), {})[group_of(row)] = detail
        kept.append(row)
    return kept, details


def detail_as_text(row: dict) -> dict:
    """``row`` with its per-layer figures as compact JSON text, as a batch job writes them: the
    collect job copies that text into the variant's file without reading it (:func:`write_details`)."""
    detail = row.get(DETAIL_KEY)
    if detail is None or isinstance(detail, str):
        return row
    return {**row, DETAIL_KEY: json.dumps(detail, separators=(",", ":"))}


def write_description(sweep, details: dict[str, dict], folder: str | Path) -> None:
    """Write ``sweep.json`` and one ``details/<id>.js`` per variant with per-layer figures."""
    folder = Path(folder)
    write_json_atomic(folder / "sweep.json", describe(sweep))
    write_details(details, folder / "details")


def write_details(details: dict[str, dict], folder: str | Path) -> None:
    """One ``<folder>/<variant id>.js`` per variant of ``details`` (:func:`split_details`);
    the folder is made even when there is none (a declared output of the workflow)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for variant_id, groups in details.items():
        # the text json.dumps gives the whole object (compact), from the groups' texts
        parts = ",".join(f"{json.dumps(group)}:{_json(detail)}" for group, detail in groups.items())
        text = f'{{"id":{json.dumps(variant_id)},"groups":{{{parts}}}}}'
        write_text_if_changed(folder / f"{variant_id}.js", f"zigzagDetail({text});\n")


def _json(detail: dict | str) -> str:
    """A group's per-layer figures as compact JSON (already text when read from a batch job's file)."""
    return (
        detail
        if isinstance(detail, str)
        else json.dumps(detail, separators=(",", ":"), default=str)
    )


def layer_detail(results, hierarchy: list[dict]) -> dict:
    """A point's per-layer figures (compact lists) and its memory hierarchy."""
    layers = []
    for r in results:
        layers.append(
            {
                "name": r.layer_name,
                "energy_pJ": r.energy_total,
                "mac_energy_pJ": r.mac_energy,
                "memory_energy_pJ": memory_energy(r),
                "latency_cycles": r.latency_total2,
                "ideal_cycles": r.ideal_cycle,
                "computation_cycles": r.latency_total0,
                "stall_cycles": r.stall_slack_comb,
                "onloading_cycles": r.data_onloading_cycle,
                "offloading_cycles": r.data_offloading_cycle,
                "spatial_utilization": r.mac_spatial_utilization,
                "mac_utilization": r.mac_utilization2,
                "port_stall_slack": r.port_stall_slack,
            }
        )
    return {"layers": layers, "hierarchy": hierarchy}


def hierarchy_of(accelerator_data: dict) -> list[dict]:
    """The memories of a validated accelerator document, innermost first: name, size (bits),
    operands, read/write bandwidth (bits per cycle of the first port)."""
    memories = accelerator_data.get("memories") or {}
    out = []
    for name, memory in memories.items():
        if not isinstance(memory, dict):
            continue
        ports = memory.get("ports") or []
        first = ports[0] if ports and isinstance(ports[0], dict) else {}
        out.append(
            {
                "name": name,
                "size_bits": memory.get("size"),
                "operands": list(memory.get("operands") or []),
                "bandwidth": first.get("bandwidth_max") or memory.get("r_bw"),
            }
        )
    return out
