"""Fill in the costs of the memories whose figures come from CACTI or from a memory table.

Called on every validated accelerator document as it is loaded (single-core files, the workflow's
parse step, multi-core core files), so every path sees the same figures. Each resolved memory
records where its figures came from (``cost_source``: ``cacti`` or ``table``) and how
(``cost_note``); memories costed by the file keep neither key. See docs/reference/memory-costs.md.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path

from zigzag.errors import InputError
from zigzag.hardware.memory_costs.cacti import CactiInputProblem, request_for_memory
from zigzag.hardware.memory_costs.cacti_build import INSTALL_HINT, CactiUnavailable
from zigzag.hardware.memory_costs.extraction import CactiRunFailed, extract
from zigzag.hardware.memory_costs.tables import PortCounts, TableProblem, look_up, read_memory_table
from zigzag.io.validation.memories import MEMORY_TYPES

logger = logging.getLogger(__name__)

#: CACTI gives areas in mm²; factor to the unit the accelerator file states (mm² when it states none)
_FROM_MM2 = {None: 1.0, "mm2": 1.0, "um2": 1e6}


def resolve_memory_costs(document: dict, file: str | Path) -> dict:
    """A copy of a validated accelerator document with the CACTI and table memories' r_cost, w_cost
    and area filled in (a document without such memories is returned as it is)."""
    pending = {
        name: m
        for name, m in document["memories"].items()
        if (m["auto_cost_extraction"] or "cost_table" in m) and "cost_source" not in m
    }
    if not pending:
        return document
    resolved = copy.deepcopy(document)
    memories = resolved["memories"]
    cacti = [name for name, m in pending.items() if m["auto_cost_extraction"]]
    if cacti:
        _from_cacti(memories, cacti, resolved.get("area_unit"), str(file))
    for name in (n for n in pending if n not in cacti):
        _from_table(memories[name], name, str(file))
    return resolved


def memory_tables(accelerator: str | Path) -> list[str]:
    """The existing memory-table files an accelerator file names (for the workflow to rerun its parse
    step when one changes); an unreadable file names none (its parse step reports the problem)."""
    from zigzag.io.yaml_files import load_yaml

    try:
        memories = load_yaml(accelerator).get("memories")
        named = [m.get("cost_table") for m in memories.values() if isinstance(m, dict)]
    except (InputError, AttributeError):  # the parse step reports the problem
        return []
    paths = [Path(accelerator).parent / name for name in named if isinstance(name, str)]
    return [str(path) for path in dict.fromkeys(paths) if path.is_file()]


def _from_cacti(memories: dict, names: list[str], area_unit: str | None, file: str) -> None:
    # imported here: finding and running CACTI (package metadata, subprocesses, a thread pool) costs
    # every accelerator load ~40 ms of imports, and most files have no CACTI memory

    requests = []
    for name in names:
        memory = memories[name]
        if memory["mem_type"] not in MEMORY_TYPES:
            logger.warning(
                "%s: memory %s: mem_type '%s' is not one CACTI extraction knows (%s), so it is costed "
                "as main memory (ZigZag's rule for any other type); give one of those to cost it as such",
                file,
                name,
                memory["mem_type"],
                ", ".join(MEMORY_TYPES),
            )
        try:
            requests.append(request_for_memory(memory["size"], memory["mem_type"], memory["ports"]))
        except CactiInputProblem as exc:
            raise InputError(file, f"memories.{name}.{exc.field}", str(exc)) from None
    try:
        figures = extract(requests)
    except CactiUnavailable as exc:
        raise InputError(
            file,
            f"memories.{names[0]}.auto_cost_extraction",
            f"CACTI is needed for its costs but {exc}; or give r_cost, w_cost and area and set "
            "auto_cost_extraction: false",
        ) from None
    except CactiRunFailed as exc:
        name = names[requests.index(exc.request)]
        raise InputError(
            file,
            f"memories.{name}.auto_cost_extraction",
            f"{exc}; change the memory's size or read-port width, or give r_cost, w_cost and area "
            f"and set auto_cost_extraction: false ({INSTALL_HINT} if CACTI itself is broken)",
        ) from None
    scale = _FROM_MM2[area_unit]
    if area_unit is None and any(
        m["area"] is not None for m in memories.values() if "cost_source" not in m
    ):
        logger.warning(
            "%s: CACTI gives areas in mm2 and the file states no area_unit, so its total area adds "
            "them to the file's own areas as they are (as ZigZag does); state area_unit: mm2 or um2 "
            "to have them converted",
            file,
        )
    for name, request, result in zip(names, requests, figures):
        memory = memories[name]
        note = request.describe()
        if memory["mem_type"] == "rf":
            note += " (mem_type rf: costed as a 128 times larger SRAM)"
        replaced = [
            f"{key} {memory[key]:g}"
            for key in ("r_cost", "w_cost", "area")
            if memory[key] is not None
        ]
        if replaced:
            note += f"; replaced the file's {', '.join(replaced)}"
            logger.warning(
                "%s: memory %s: CACTI's figures replace the file's %s (auto_cost_extraction: true)",
                file,
                name,
                ", ".join(replaced),
            )
        if scale != 1.0:
            note += f"; area converted from mm2 to {area_unit}"
        memory.update(
            r_cost=result.r_cost,
            w_cost=result.w_cost,
            area=result.area_mm2 * scale,
            cost_source="cacti",
            cost_note=note,
        )


def _from_table(memory: dict, name: str, file: str) -> None:
    path = Path(memory["cost_table"])
    if not path.is_absolute():
        path = Path(file).parent / path
    interpolation = memory.get("cost_interpolation", "none")
    width = next(
        p["bandwidth_max"]
        for kind in ("read", "read_write")
        for p in memory["ports"]
        if p["type"] == kind
    )
    try:
        figures = look_up(
            read_memory_table(path),
            memory["size"],
            width,
            PortCounts.of_ports(memory["ports"]),
            interpolation,
        )
    except TableProblem as exc:
        text = str(exc) if str(exc).startswith("memory table") else f"memory table {path} {exc}"
        raise InputError(file, f"memories.{name}.cost_table", text) from None
    memory.update(
        r_cost=figures.r_cost,
        w_cost=figures.w_cost,
        area=figures.area,
        cost_source="table",
        cost_note=f"table {path}: {figures.how}",
    )
