"""What a report shows, gathered from a results folder, by the folder's kind.

* ``experiments``: the workflow's ``experiments.csv`` and, per experiment, ``<name>/layers.csv``
  (the "why" view) and the memory-hierarchy figure of its accelerator;
* ``sweep`` (also a guided search or a multi-core sweep): ``variants.csv``, ``sweep.json`` (the
  parameters as written, constraints, clock, target) and ``details/<variant id>.js``; its rows are
  compared per workload point (an LLM sweep's phase, batch, context: ``workload_vary``) and mode,
  as its ``pareto.csv`` does;
* ``multicore``: ``multicore.csv`` and each run's folder (its Gantt chart and memory figures,
  linked from the page).

Each returns the page's data: columns (with roles and units), the rows by column, the
objectives, the design and group of every row (what the ranking and the Pareto fronts use), the
constraints' limits and the per-design details.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.tables import input_id
from zigzag.report.tables import MAXIMISED, columnar, describe_columns, objectives, read_table
from zigzag.sweep.tables import constraint_limits, group_of

KINDS = ("experiments", "sweep", "multicore")
#: the layers.csv columns of the per-layer "why" view (memory energies are found by name)
LAYER_COLUMNS = (
    "name",
    "energy_pJ",
    "mac_energy_pJ",
    "latency_cycles",
    "ideal_cycles",
    "computation_cycles",
    "stall_cycles",
    "onloading_cycles",
    "offloading_cycles",
    "spatial_utilization",
    "mac_utilization",
)
_NOT_MEMORY = {"energy_pJ", "mac_energy_pJ", "memory_energy_pJ"}
#: a core's utilisation column: util_<role or mesh position> (util_mesh_r0c1, util_pooling, util_core4_simd)
_CORE = re.compile(r"util_(\w+)")


def read_json(path: Path):
    """A results JSON file; one cut or edited by hand is an InputError saying what to rerun."""
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(
            str(path),
            f"line {exc.lineno}",
            "is not valid JSON (cut while being written, or edited); rerun the step that writes it",
        ) from None


def folder_kind(folder: Path) -> str | None:
    """The kind of results folder (None: none of them)."""
    if (folder / "variants.csv").exists():
        return "sweep"
    if (folder / "multicore.csv").exists():
        return "multicore"
    if (folder / "experiments.csv").exists():
        return "experiments"
    return None


def check_folder(folder: Path) -> None:
    """An InputError unless ``folder`` is a folder."""
    if not folder.exists():
        raise InputError(str(folder), None, "does not exist; give a results folder (e.g. results)")
    if not folder.is_dir():
        raise InputError(
            str(folder), None, f"is a file; give the results folder holding it ({folder.parent})"
        )


def gather(folder: str | Path) -> dict:
    """The report data of ``folder`` (InputError when it holds no results table)."""
    folder = Path(folder)
    check_folder(folder)
    kind = folder_kind(folder)
    if kind is None:
        raise InputError(
            str(folder),
            None,
            "no experiments.csv, variants.csv or multicore.csv here; "
            "give a results folder of the workflow, a sweep or multi-core runs",
        )
    return {"experiments": _experiments, "sweep": _sweep, "multicore": _multicore}[kind](folder)


def _base(
    kind: str,
    title: str,
    columns: list[str],
    rows: list[dict],
    described: list[dict],
    *,
    group: list[str],
    design: list[str],
    limits=(),
    target: str = "",
) -> dict:
    return {
        "kind": kind,
        "title": title,
        "n": len(rows),
        "columns": described,
        "rows": columnar(columns, rows),
        "group": group,
        "design": design,
        "objectives": objectives(columns, rows),
        "maximise": [name for name in MAXIMISED if name in objectives(columns, rows)],
        "groupWorkload": {g: str(r.get("workload")) for g, r in zip(group, rows)},
        "limits": list(limits),
        "target": target,
        "ranking": {},
        "details": {},
        "detailFiles": False,
        "links": [],
    }


def _experiments(folder: Path) -> dict:
    columns, rows = read_table(folder / "experiments.csv")
    described = describe_columns(columns, rows)
    targets = sorted({str(r.get("opt")) for r in rows if r.get("opt")})
    data = _base(
        "experiments",
        f"Experiments in {folder.name}",
        columns,
        rows,
        described,
        group=[str(r.get("workload")) for r in rows],
        design=[str(r.get("accelerator")) for r in rows],
        target="mapping search: " + ", ".join(targets) if targets else "",
    )
    for row in rows:
        name = str(row["experiment"])
        detail = {
            "layers": _layers(folder / name),
            "hierarchyImage": _hierarchy_image(folder, row),
            "links": [
                {"text": f, "href": f"{name}/{f}"}
                for f in ("layers.csv", _figure(folder / name, "plots/layers"))
                if f and (folder / name / f).exists()
            ],
        }
        data["details"][name] = {str(row.get("workload")): detail}
    data["detailKey"] = "experiment"
    return data


#: the formats the figures are written in (the config's ``plot_format``)
FIGURE_FORMATS = ("png", "svg", "pdf")


def _figure(folder: Path, stem: str) -> str | None:
    """``stem.<format>`` under ``folder`` as last written (a figure left from an earlier run in
    another format is not linked); None when there is none."""
    figures = [folder / f"{stem}.{f}" for f in FIGURE_FORMATS if (folder / f"{stem}.{f}").exists()]
    if not figures:
        return None
    return max(figures, key=lambda f: f.stat().st_mtime_ns).relative_to(folder).as_posix()


def _hierarchy_image(folder: Path, row: dict) -> str | None:
    """The memory-hierarchy figure of the row's accelerator file (its folder is named by the
    file, as the workflow's parsed accelerator: two files with one ``name:`` stay apart)."""
    file = row.get("accelerator_file")
    if file is None:
        return None
    return _figure(folder, f"accelerators/{input_id(Path(str(file)).stem, file)}/memory_hierarchy")


def _layers(folder: Path) -> list[dict] | None:
    """An experiment's layers (``layers.csv``) with each memory port's stall or slack (``results.json``)."""
    if not (folder / "layers.csv").exists():
        return None
    columns, rows = read_table(folder / "layers.csv")
    memories = [c for c in columns if c.endswith("_energy_pJ") and c not in _NOT_MEMORY]
    stalls = {}
    if (folder / "results.json").exists():
        document = read_json(folder / "results.json")
        stalls = {
            entry["result"].get("layer_id"): entry["result"].get("port_stall_slack")
            for entry in document.get("layers", [])
            if isinstance(entry.get("result"), dict)
        }
    layers = []
    for row in rows:
        layer = {c: row.get(c) for c in LAYER_COLUMNS if c in columns}
        layer["memory_energy_pJ"] = {
            c[: -len("_energy_pJ")]: row[c] for c in memories if row.get(c)
        }
        layer["port_stall_slack"] = stalls.get(row.get("id"))
        layers.append(layer)
    return layers


def _sweep(folder: Path) -> dict:
    columns, rows = read_table(folder / "variants.csv")
    description = {}
    if (folder / "sweep.json").exists():
        description = read_json(folder / "sweep.json")
    kind = description.get("kind") or ("multicore" if "mode" in columns else "single")
    search = (folder / "search.json").exists()
    described = describe_columns(columns, rows, description.get("parameters"))
    group = [group_of(r) for r in rows]
    what = (
        "guided search"
        if search
        else "multi-core sweep"
        if kind == "multicore"
        else "hardware sweep"
    )
    data = _base(
        "sweep",
        f"{what.capitalize()} {description.get('name') or folder.name}",
        columns,
        rows,
        described,
        group=group,
        design=[str(r.get("variant")) for r in rows],
        limits=constraint_limits(description.get("constraints") or []),
        target=description.get("target", ""),
    )
    data["ranking"] = description.get("ranking") or {}
    data["detailFiles"] = (folder / "details").is_dir()
    data["detailKey"] = "variant_id"
    if kind == "multicore":  # a scheduled variant's energy terms and core utilisation, from its row
        for row, name in zip(rows, group):
            data["details"].setdefault(str(row.get("variant_id")), {})[name] = _schedule_terms(
                columns, row
            )
    data["constraints"] = description.get("constraints") or []
    data["clock_ghz"] = description.get("clock_ghz")
    if search:
        stats = read_json(folder / "search.json")
        data["note"] = (
            f"guided search: {stats.get('evaluations')} of {stats.get('grid_size')} variants evaluated "
            f"in {stats.get('generations')} generations"
        )
    data["links"] = [
        {"text": p.name, "href": p.relative_to(folder).as_posix()}
        for p in [
            *(folder / n for n in ("variants.csv", "pareto.csv", "best.csv", "search_front.csv")),
            *(
                folder / _figure(folder, f"plots/{stem}")
                for stem in sorted({f.stem for f in (folder / "plots").glob("*.*")})
                if _figure(folder, f"plots/{stem}")
            ),
        ]
        if p.exists()
    ]
    return data


def _multicore(folder: Path) -> dict:
    columns, rows = read_table(folder / "multicore.csv")
    described = describe_columns(columns, rows, units={"cores_area": "core files' unit"})
    data = _base(
        "multicore",
        f"Multi-core experiments in {folder.name}",
        columns,
        rows,
        described,
        group=[str(r.get("workload")) for r in rows],
        design=[f"{r.get('accelerator')} {r.get('mode')}".strip() for r in rows],
        target=", ".join(
            sorted({f"{r.get('allocation')} allocation" for r in rows if r.get("allocation")})
        ),
    )
    for row in rows:
        name = str(row["experiment"])
        plots = folder / name / "plots"
        detail = {
            **_schedule_terms(columns, row),
            "images": [
                f"{name}/{f}"
                for f in (
                    _figure(folder / name, "plots/memory"),
                    _figure(folder / name, "plots/energy"),
                )
                if f
            ],
            "gantt": f"{name}/plots/gantt.html" if (plots / "gantt.html").exists() else None,
            "links": [
                {"text": f, "href": f"{name}/{f}"}
                for f in ("summary.json", "schedule.csv", "plots/perfetto.json")
                if (folder / name / f).exists()
            ],
        }
        data["details"][name] = {str(row.get("workload")): detail}
    data["detailKey"] = "experiment"
    return data


def _schedule_terms(columns: list[str], row: dict) -> dict:
    """A multi-core row's energy terms (``*_energy_pJ``) and core utilisation (``util_<core>``)."""
    if row.get("status") not in ("ok", "out", None):
        return {}
    energies = [c for c in columns if c.endswith("_energy_pJ")]
    cores = {c: match.group(1) for c in columns if (match := _CORE.fullmatch(c))}
    return {
        "energy_terms": {c[: -len("_energy_pJ")]: row[c] for c in energies if row.get(c)},
        "cores": {core: row[c] for c, core in cores.items() if row.get(c) is not None},
        "images": [],
        "gantt": None,
        "links": [],
    }
