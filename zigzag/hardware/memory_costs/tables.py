"""A user's memory table (e.g. from a memory compiler's datasheet): one CSV row per memory macro.

Columns (any order, header names exact): ``size`` (bits), ``width`` (bits per access), ``read_energy``
and ``write_energy`` (pJ per access), ``area`` (the accelerator file's area unit) and, optionally,
``ports`` (e.g. ``1rw``, ``1r1w``, ``2r1w``). Lines starting with ``#`` are comments. A memory is
looked up by its size and width (and ports, when the table has them): an exact row, or, with an
interpolation method chosen by the user, between the rows of its width just below and above its size.
See docs/reference/memory-costs.md.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("size", "width", "read_energy", "write_energy", "area")
#: interpolation methods: none (exact row only), linear in size, linear in log2(size)
INTERPOLATIONS = ("none", "linear", "log2")
_PORTS = re.compile(r"(?:(\d+)(rw|r|w))+")
_PORT_PART = re.compile(r"(\d+)(rw|r|w)")


class TableProblem(ValueError):
    """A memory table that cannot be read, or a memory it has no figures for."""


@dataclass(frozen=True)
class PortCounts:
    read: int = 0
    write: int = 0
    read_write: int = 0

    def __str__(self) -> str:
        parts = [
            f"{n}{kind}"
            for n, kind in ((self.read, "r"), (self.write, "w"), (self.read_write, "rw"))
            if n
        ]
        return "".join(parts) or "no ports"

    @classmethod
    def parse(cls, text: str) -> PortCounts:
        """``1r1w`` -> 1 read + 1 write port; ``1rw`` -> 1 read_write port."""
        text = text.strip().lower()
        if not _PORTS.fullmatch(text):
            raise ValueError(f"ports '{text}' is not of the form 1rw, 1r1w, 2r1w, ...")
        counts = {"r": 0, "w": 0, "rw": 0}
        for number, kind in _PORT_PART.findall(text):
            counts[kind] += int(number)
        return cls(counts["r"], counts["w"], counts["rw"])

    @classmethod
    def of_ports(cls, ports: list[dict]) -> PortCounts:
        """The port counts of a memory of the accelerator file."""
        kinds = [p["type"] for p in ports]
        return cls(kinds.count("read"), kinds.count("write"), kinds.count("read_write"))


@dataclass(frozen=True)
class TableRow:
    size: int
    width: int
    read_energy: float
    write_energy: float
    area: float
    ports: PortCounts | None = None


@dataclass(frozen=True)
class TableFigures:
    """The figures a table gives a memory, and how they were found (for the results)."""

    r_cost: float
    w_cost: float
    area: float
    how: str


def read_memory_table(path: Path) -> tuple[TableRow, ...]:
    """The rows of a memory table CSV file."""
    try:
        lines = [
            line
            for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
    except OSError as exc:
        raise TableProblem(
            f"cannot read the memory table {path} ({exc.strerror}); check the path"
        ) from None
    reader = csv.DictReader(lines, skipinitialspace=True)
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in (*COLUMNS, "ports")]
    if missing or unknown:
        raise TableProblem(
            f"memory table {path} has the columns {', '.join(header) or 'none'}; it needs "
            f"{', '.join(COLUMNS)} (and optionally ports), and no others"
        )
    reader.fieldnames = header
    rows = []
    for number, record in enumerate(reader, start=2):
        rows.append(_row(record, f"memory table {path}, row {number}"))
    if not rows:
        raise TableProblem(f"memory table {path} has no rows; add one per memory macro")
    return tuple(rows)


def _row(record: dict, where: str) -> TableRow:
    values = {}
    for column in COLUMNS:
        text = (record.get(column) or "").strip()
        try:
            value = float(text)
        except ValueError:
            raise TableProblem(f"{where}: {column} '{text}' is not a number") from None
        if not math.isfinite(value) or value < 0 or (column in ("size", "width") and value <= 0):
            raise TableProblem(
                f"{where}: {column} {text} must be a finite number >= 0 (size and width > 0)"
            )
        if column in ("size", "width") and not value.is_integer():
            raise TableProblem(f"{where}: {column} {text} must be a whole number of bits")
        values[column] = int(value) if column in ("size", "width") else value
    ports = None
    if (record.get("ports") or "").strip():
        try:
            ports = PortCounts.parse(record["ports"])
        except ValueError as exc:
            raise TableProblem(f"{where}: {exc}") from None
    return TableRow(**values, ports=ports)


def look_up(
    rows: tuple[TableRow, ...], size: int, width: int, ports: PortCounts, interpolation: str
) -> TableFigures:
    """The figures of a ``size``-bit memory of ``width`` bits per access with ``ports``."""
    candidates = [r for r in rows if r.width == width and (r.ports is None or r.ports == ports)]
    if not candidates:
        widths = sorted({r.width for r in rows if r.ports is None or r.ports == ports})
        raise TableProblem(
            f"has no row of width {width} with ports {ports} (widths with these ports: "
            f"{', '.join(map(str, widths)) or 'none'}); add rows of that width"
        )
    exact = [r for r in candidates if r.size == size]
    if exact:
        row = exact[0]
        return TableFigures(
            row.read_energy, row.write_energy, row.area, f"row size {size}, width {width}"
        )
    below = max((r for r in candidates if r.size < size), key=lambda r: r.size, default=None)
    above = min((r for r in candidates if r.size > size), key=lambda r: r.size, default=None)
    if interpolation == "none":
        raise TableProblem(
            f"has no row of size {size} and width {width}; add one, or choose cost_interpolation: "
            f"linear or log2 to interpolate between rows"
        )
    if below is None or above is None:
        sizes = sorted({r.size for r in candidates})
        raise TableProblem(
            f"cannot interpolate size {size} at width {width}: its sizes span {sizes[0]}..{sizes[-1]} "
            "(no extrapolation); add a row beyond it"
        )
    scale = math.log2 if interpolation == "log2" else float
    t = (scale(size) - scale(below.size)) / (scale(above.size) - scale(below.size))

    def between(a: float, b: float) -> float:
        return a + t * (b - a)

    return TableFigures(
        between(below.read_energy, above.read_energy),
        between(below.write_energy, above.write_energy),
        between(below.area, above.area),
        f"{interpolation} interpolation between sizes {below.size} and {above.size}, width {width}",
    )
