"""The core files of a multi-core accelerator file: where a named core file is found
(:func:`resolve_core_file`) and how one core document is checked (:func:`load_core_document`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.memory_costs import resolve_memory_costs
from zigzag.io.validation import validate_accelerator

__all__ = ["load_core_document", "resolve_core_file"]


def resolve_core_file(
    name: str, top_file: str | Path, cwd: str | Path | None = None
) -> Path | None:
    """Where a core file named in `top_file` is, or None.

    Tried in this order, first hit wins: (1) relative to the top file's folder, then its `cores/`
    subfolder; (2) Stream's own rule from the working directory: a name with a `/` as a path
    relative to it, a bare name searched (in sorted order) in the folders under `stream/inputs/`
    whose path contains `hardware`; (3) Stream's rule from each folder above the top file. An
    absolute path is used as given. A name without `.yaml`/`.yml` also matches `<name>.yaml`.
    """
    names = [name] if name.endswith((".yaml", ".yml")) else [name, f"{name}.yaml"]
    if Path(name).is_absolute():
        return next((Path(n) for n in names if Path(n).is_file()), None)
    top_dir = Path(top_file).parent
    for folder in (top_dir, top_dir / "cores"):
        for candidate in names:
            if (folder / candidate).is_file():
                return folder / candidate
    for base in (Path(cwd) if cwd is not None else Path.cwd(), *top_dir.parents):
        found = _stream_rule(names, base)
        if found is not None:
            return found
    return None


def _stream_rule(names: list[str], base: Path) -> Path | None:
    for candidate in names:
        if "/" in candidate:
            if (base / candidate).is_file():
                return base / candidate
            continue
        inputs = base / "stream" / "inputs"
        if not inputs.is_dir():
            continue
        for root, dirs, files in os.walk(inputs):
            dirs.sort()
            if "hardware" in root and candidate in files:
                return Path(root) / candidate
    return None


def load_core_document(raw: Any, file: str, offchip: bool) -> dict[str, Any]:
    """A core document (named ``file`` in messages) validated and normalised."""
    data, widths = upgrade_accelerator(raw, file)
    array = data.get("operational_array") if isinstance(data, dict) else None
    if offchip and isinstance(array, dict):
        # The off-chip core computes nothing: only its array's dimensions matter (its memories serve
        # them); zero sizes, zero precisions and missing MAC figures are accepted.
        sizes = array.get("sizes")
        plain = isinstance(sizes, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in sizes
        )
        stand_in = {
            "dimensions": array.get("dimensions"),
            "unit_energy": 0,
            "unit_area": 0,
            "sizes": [max(v, 1) for v in sizes] if plain else sizes,
        }
        document = validate_accelerator(dict(data, operational_array=stand_in), file)
        document["operational_array"]["sizes"] = list(sizes)
    else:
        document = validate_accelerator(data, file)
    document = resolve_memory_costs(document, file)
    _check_dataflows(document, file)
    if not offchip:
        _check_no_offchip_memory(document, file)
    accelerator = accelerator_from_dict(document)
    if offchip and not accelerator.hierarchy("O"):
        raise InputError(
            file,
            "memories",
            "the off-chip core has no memory holding O (its DRAM); "
            "add O to the operands of its memory",
        )
    return {"accelerator": document, "memory_ports": {name: vars(w) for name, w in widths.items()}}


#: memory names that say off-chip (DRAM, DDR, HBM, "offchip"), as whole words of the name
_OFFCHIP_NAME = re.compile(
    r"(?<![a-z])(dram|lpddr\d*|ddr\d*|hbm\d*|off_?chip)(?![a-z])", re.IGNORECASE
)


def _check_no_offchip_memory(document: dict, file: str) -> None:
    """Refuse a compute core holding an off-chip memory: it would become that core's on-chip top
    memory (Stream takes it so, silently); DRAM belongs in the accelerator's `offchip_core` file."""
    for name in document["memories"]:
        if _OFFCHIP_NAME.search(name):
            raise InputError(
                file,
                f"memories.{name}",
                "an off-chip memory inside a compute core would be its "
                "on-chip top memory; remove it here and describe DRAM in the multi-core file's "
                "offchip_core file",
            )


def _check_dataflows(document: dict, file: str) -> None:
    dims = document["operational_array"]["dimensions"]
    for dim in document.get("dataflows") or {}:
        if dim not in dims:
            raise InputError(
                file,
                f"dataflows.{dim}",
                f"the operational array has no dimension {dim} "
                f"(it has {', '.join(dims)}); remove it or rename it",
            )
