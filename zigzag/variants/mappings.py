"""Mappings that follow the hardware: spatial unrollings written against the array.

In a mapping used by a sweep, the size of an unrolling may be an expression over the array's
dimension sizes (``D1``, ``D2``, ...) and the sweep's parameters: ``"K, D1"`` unrolls K over
all of D1, ``"C, D2 // 2"`` over half of D2, ``"K, min(D1, 16)"``. :func:`follow_hardware`
writes the numbers for one variant; plain numbers are left as they are. :func:`without_spatial_mapping`
drops the given spatial mappings, so that the search generates them for each variant.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from zigzag.errors import InputError
from zigzag.variants import expressions

_UNROLLING = re.compile(r"\s*([A-Z]+\d*)\s*,\s*(.+?)\s*")


def array_sizes(accelerator: dict) -> dict[str, int]:
    """``{"D1": 32, "D2": 32}`` of an accelerator document's operational array."""
    array = accelerator.get("operational_array") or {}
    return dict(zip(array.get("dimensions") or [], array.get("sizes") or []))


def follow_hardware(
    mapping: Any, accelerator: dict, parameters: dict | None = None, *, file: str = "mapping"
) -> Any:
    """A copy of ``mapping`` (a list of entries) with every unrolling size computed for
    ``accelerator``; a size that is not a whole number of at least 1 is a one-line InputError."""
    if not isinstance(mapping, list):
        return mapping
    names = {**(parameters or {}), **array_sizes(accelerator)}

    def lookup(name: str):
        if name not in names:
            known = ", ".join(names) or "none"
            raise expressions.ExpressionError(
                f"'{name}' is neither an array dimension nor a parameter ({known})"
            )
        return names[name]

    result = copy.deepcopy(mapping)
    for entry in result:
        spatial = entry.get("spatial_mapping") if isinstance(entry, dict) else None
        if not isinstance(spatial, dict):
            continue
        for oa_dim, unrollings in spatial.items():
            if not isinstance(unrollings, list):
                continue
            for i, text in enumerate(unrollings):
                match = _UNROLLING.fullmatch(text) if isinstance(text, str) else None
                if match is None or match.group(2).isdigit():
                    continue
                where = f"mapping entry '{entry.get('name')}'.spatial_mapping.{oa_dim}[{i}]"
                try:
                    size = expressions.evaluate(match.group(2), lookup)
                except expressions.ExpressionError as exc:
                    raise InputError(file, where, str(exc)) from None
                if not isinstance(size, int) or size < 1:
                    raise InputError(
                        file,
                        where,
                        f"'{match.group(2)}' gives {size}, not a whole number of at least "
                        "1; use // or floor() for fractions",
                    )
                unrollings[i] = f"{match.group(1)}, {size}"
    return result


def without_spatial_mapping(mapping: Any) -> Any:
    """A copy of ``mapping`` whose entries have no spatial mapping (the search generates one)."""
    if not isinstance(mapping, list):
        return mapping
    return [
        {**entry, "spatial_mapping": None} if isinstance(entry, dict) else entry
        for entry in mapping
    ]
