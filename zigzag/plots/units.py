"""Units of table columns and parameters, shared by the figures and the HTML report.

A column's unit is read from its name (``energy_pJ``, ``latency_cycles``, ``area_mm2``, ...),
so columns added later are labelled without a list to update. Memory sizes are stored in bits;
:func:`size_unit` picks the binary unit (B, KiB, MiB, GiB) a person would write them in.
"""

from __future__ import annotations

#: column-name suffix -> unit, longest first
SUFFIX_UNITS = (
    ("_pJ_cycles", "pJ·cycles"),
    ("_Js", "J·s"),
    ("_pJ", "pJ"),
    ("_J", "J"),
    ("_cycles", "cycles"),
    ("_mm2", "mm²"),
    ("_um2", "µm²"),
    ("_ns", "ns"),
    ("_s", "s"),
    ("_bits", "bits"),
    ("_bytes", "bytes"),
    ("_ghz", "GHz"),
    ("_GHz", "GHz"),
)

#: binary size units in bytes, largest first
_SIZE_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1))


def split_unit(column: str) -> tuple[str, str]:
    """A column's readable name and its unit: ``energy_pJ`` -> ("energy", "pJ"); a rate
    ``tokens_per_s`` -> ("tokens per second", "tokens/s")."""
    if column.endswith("_per_s") and len(column) > len("_per_s"):
        thing = column[: -len("_per_s")].replace("_", " ")
        return f"{thing} per second", f"{thing}/s"
    for suffix, unit in SUFFIX_UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            return column[: -len(suffix)].replace("_", " "), unit
    if column.endswith("utilization") or column.endswith("utilisation"):
        return column.replace("_", " "), "fraction"
    return column.replace("_", " ") if column.isidentifier() else column, ""


def axis_label(column: str) -> str:
    """``energy (pJ)`` for ``energy_pJ``; the name alone when it has no unit."""
    name, unit = split_unit(column)
    return f"{name} ({unit})" if unit else name


def is_size_path(path: str | None) -> bool:
    """Whether a document path holds a memory size (stored in bits)."""
    return bool(path) and str(path).rsplit(".", 1)[-1] in ("size", "memory_size")


def size_unit(bits: list[float]) -> tuple[str, float]:
    """The largest binary unit in which every size is at least 1: (name, bits per unit)."""
    sizes = [abs(float(b)) for b in bits if b not in (None, "") and float(b) > 0]
    if not sizes:
        return "bits", 1.0
    smallest = min(sizes) / 8
    if any(s % 8 for s in sizes):
        return "bits", 1.0
    for name, size in _SIZE_UNITS:
        if smallest >= size:
            return name, 8.0 * size
    return "B", 8.0


def size_label(bits: float) -> str:
    """A size in bits as a person writes it: 262144 -> '32KiB' (the largest unit giving a whole number)."""
    bits = float(bits)
    if bits % 8:
        return f"{bits:g}b"
    for name, size in _SIZE_UNITS:
        if (bits / 8) % size == 0:
            return f"{bits / 8 / size:g}{name}"
    return f"{bits / 8:g}B"
