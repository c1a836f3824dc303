"""The older ZigZag-3.8.0 memory format (Stream's core files), turned into the current port format.

A 3.8.0 memory gives its widths per direction (`r_bw`, `w_bw`, `min_r_granularity`,
`min_w_granularity`), counts of physical ports (`r_port`, `w_port`, `rw_port`) and, per memory
operand in `operands` order, a map direction -> port name (`{fh: w_port_1, tl: r_port_1}`). The
current format lists the ports themselves with a type, a width range and their allocations.

Detection is per memory: a memory with any of the 3.8.0-only keys (or with `ports` written as
direction maps) is converted; the rest of the file is left as it is, so `zigzag run`, the API and
the multi-core loader accept either format. The conversion keeps every number:

* physical ports in the order `r_port_1..`, `w_port_1..`, `rw_port_1..`; a read port is
  `read` with widths (`min_r_granularity` or `r_bw`, `r_bw`), a write port `write` with
  (`min_w_granularity` or `w_bw`, `w_bw`), a read-write port `read_write` with the read widths
  (3.8.0 times a read-write port with its read width);
* each port's allocation lists `"<operand>, <direction>"` walking operands in order, then each
  operand's map in order; ports no direction uses are dropped (the current model drops them too).

A write direction on a read-write port of a memory whose write widths differ from its read widths
is rejected: 3.8.0 charges such writes with `w_bw` but times them with `r_bw`, which one port width
cannot express (no shipped Stream core does this).

The 3.8.0 widths and port counts are kept per memory as :class:`LegacyPorts` (Stream reads the
top memories' `r_bw`/`w_bw` and the DRAM's port count); :func:`legacy_ports_of` derives the same
record from a current-format memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zigzag.io.validation.accelerator_fields import MEMORY
from zigzag.io.validation.schema import Field, Invalid, check_value, run_check

__all__ = ["LegacyPorts", "is_legacy_memory", "upgrade_accelerator", "legacy_ports_of"]

#: Keys only the 3.8.0 memory format has.
LEGACY_KEYS = (
    "r_bw",
    "w_bw",
    "r_port",
    "w_port",
    "rw_port",
    "min_r_granularity",
    "min_w_granularity",
)
_DIRECTIONS = ("fh", "tl", "fl", "th")
_WRITES = ("fh", "fl")
_PORT_NAME = Field(
    "str",
    pattern=r"r?w?_port_\d+",
    form="'r_port_<n>', 'w_port_<n>' or 'rw_port_<n>', e.g. 'r_port_1'",
)
_COMMON = {k: v for k, v in MEMORY.keys.items() if k not in ("ports", "force_double_buffering")}

_LEGACY_MEMORY = Field(
    "dict",
    what="a 3.8.0 memory with size, r_bw, w_bw, r_port, w_port, rw_port, ...",
    keys={
        **_COMMON,
        "r_bw": Field("int", required=True, minimum=1, what="read width in bits per cycle"),
        "w_bw": Field("int", required=True, minimum=1, what="write width in bits per cycle"),
        "r_port": Field("int", required=True, minimum=0, what="number of read-only ports"),
        "w_port": Field("int", required=True, minimum=0, what="number of write-only ports"),
        "rw_port": Field("int", required=True, minimum=0, what="number of read-write ports"),
        "min_r_granularity": Field(
            "int",
            nullable=True,
            default=None,
            minimum=1,
            what="smallest read in bits (null = r_bw)",
        ),
        "min_w_granularity": Field(
            "int",
            nullable=True,
            default=None,
            minimum=1,
            what="smallest write in bits (null = w_bw)",
        ),
        "ports": Field(
            "list",
            required=True,
            what="one map per operand, e.g. [{fh: w_port_1, tl: r_port_1}]",
            item=Field(
                "dict",
                what="a map direction -> port name, e.g. {fh: w_port_1, tl: r_port_1}",
                keys={d: _PORT_NAME for d in _DIRECTIONS},
            ),
        ),
    },
)

_KIND_OF_PREFIX = (("rw_", "rw_port"), ("r_", "r_port"), ("w_", "w_port"))
_TYPE_OF_KIND = {"r_port": "read", "w_port": "write", "rw_port": "read_write"}


@dataclass(frozen=True)
class LegacyPorts:
    """A memory's 3.8.0 widths (bits per cycle) and port counts."""

    r_bw: int
    w_bw: int
    r_port: int
    w_port: int
    rw_port: int
    min_r_granularity: int | None = None
    min_w_granularity: int | None = None

    @property
    def port_count(self) -> int:
        return self.r_port + self.w_port + self.rw_port


def is_legacy_memory(memory: Any) -> bool:
    """True for a memory entry written in the 3.8.0 format."""
    if not isinstance(memory, dict):
        return False
    if any(key in memory for key in LEGACY_KEYS):
        return True
    ports = memory.get("ports")
    return (
        isinstance(ports, list)
        and bool(ports)
        and isinstance(ports[0], dict)
        and "name" not in ports[0]
        and any(d in ports[0] for d in _DIRECTIONS)
    )


def upgrade_accelerator(data: Any, file: Any) -> tuple[Any, dict[str, LegacyPorts]]:
    """`data` with every 3.8.0-format memory rewritten in the current port format.

    Returns the new document (the input is not changed; a document without 3.8.0 memories comes
    back as it is) and the 3.8.0 widths of each converted memory. Problems specific to the old
    format raise a one-line `InputError`; the rest is left to `validate_accelerator`.
    """
    memories = data.get("memories") if isinstance(data, dict) else None
    if not isinstance(memories, dict) or not any(is_legacy_memory(m) for m in memories.values()):
        return data, {}
    return run_check(file, _upgrade, data)


def _upgrade(data: dict) -> tuple[dict, dict[str, LegacyPorts]]:
    converted: dict[str, Any] = {}
    widths: dict[str, LegacyPorts] = {}
    for name, memory in data["memories"].items():
        if is_legacy_memory(memory):
            converted[name], widths[name] = _convert_memory(f"memories.{name}", memory)
        else:
            converted[name] = memory
    return {**data, "memories": converted}, widths


def _convert_memory(where: str, raw: dict) -> tuple[dict, LegacyPorts]:
    memory = check_value(raw, _LEGACY_MEMORY, where)
    widths = LegacyPorts(**{k: memory[k] for k in LEGACY_KEYS})
    operands, maps = memory["operands"], memory["ports"]
    if len(maps) != len(operands):
        raise Invalid(
            f"{where}.ports",
            f"has {len(maps)} direction maps but operands has {len(operands)}; "
            "give one map (direction -> port name) per operand, in the order of operands",
        )
    for direction, width in (("r", widths.r_bw), ("w", widths.w_bw)):
        smallest = memory[f"min_{direction}_granularity"]
        if smallest is not None and smallest > width:
            raise Invalid(
                f"{where}.min_{direction}_granularity",
                f"({smallest}) is larger than "
                f"{direction}_bw ({width}); lower it to at most {width}",
            )
    used: dict[str, list[str]] = {}  # port name -> allocations, in 3.8.0's walk order
    for i, (operand, directions) in enumerate(zip(operands, maps)):
        for direction, port in directions.items():
            _check_port_use(f"{where}.ports[{i}].{direction}", port, direction, widths)
            used.setdefault(port, []).append(f"{operand}, {direction}")
    _check_port_counts(where, used, widths)
    out = {k: v for k, v in memory.items() if k not in LEGACY_KEYS}
    out["ports"] = [
        _port(name, used[name], widths) for name in _physical_ports(widths) if name in used
    ]
    return out, widths


def _kind(port: str) -> str | None:
    return next((kind for prefix, kind in _KIND_OF_PREFIX if port.startswith(prefix)), None)


def _check_port_use(where: str, port: str, direction: str, widths: LegacyPorts) -> None:
    kind = _kind(port)
    if kind is None:
        raise Invalid(
            where, f"'{port}' is not a valid port name; use r_port_<n>, w_port_<n> or rw_port_<n>"
        )
    count = getattr(widths, kind)
    number = int(port.rsplit("_", 1)[1])
    if not 1 <= number <= count:
        have = f"{kind}_1..{kind}_{count}" if count else f"no {kind} (0 declared)"
        raise Invalid(
            where,
            f"port '{port}' does not exist: {kind} is {count}, so there is {have}; "
            f"raise {kind} or name an existing port",
        )
    is_write = direction in _WRITES
    if kind == "r_port" and is_write:
        raise Invalid(
            where,
            f"direction '{direction}' writes into the memory but '{port}' is a read port; "
            "use a w_port_<n> or rw_port_<n>",
        )
    if kind == "w_port" and not is_write:
        raise Invalid(
            where,
            f"direction '{direction}' reads from the memory but '{port}' is a write port; "
            "use an r_port_<n> or rw_port_<n>",
        )
    if kind == "rw_port" and is_write:
        read = (widths.r_bw, widths.min_r_granularity or widths.r_bw)
        write = (widths.w_bw, widths.min_w_granularity or widths.w_bw)
        if read != write:
            raise Invalid(
                where,
                f"writes through read-write port '{port}' but the write widths (w_bw "
                f"{write[0]}, min {write[1]}) differ from the read widths (r_bw {read[0]}, min "
                f"{read[1]}); ZigZag 3.8.0 would time these writes with r_bw but charge them "
                "with w_bw, which cannot be converted: make the widths equal or use a w_port",
            )


def _check_port_counts(where: str, used: dict[str, list[str]], widths: LegacyPorts) -> None:
    """3.8.0 requires every declared port to be used by some direction."""
    for kind in ("r_port", "w_port", "rw_port"):
        names = sorted(p for p in used if _kind(p) == kind)
        declared = getattr(widths, kind)
        if len(names) != declared:
            listed = ", ".join(names) if names else "none"
            raise Invalid(
                f"{where}.{kind}",
                f"declares {declared} port(s) but the ports maps use "
                f"{len(names)} ({listed}); set {kind}: {len(names)} or use every declared port",
            )


def _physical_ports(widths: LegacyPorts) -> list[str]:
    return [
        f"{kind}_{i}"
        for kind in ("r_port", "w_port", "rw_port")
        for i in range(1, getattr(widths, kind) + 1)
    ]


def _port(name: str, allocation: list[str], widths: LegacyPorts) -> dict:
    kind = _kind(name)
    if kind == "w_port":
        low, high = widths.min_w_granularity or widths.w_bw, widths.w_bw
    else:
        low, high = widths.min_r_granularity or widths.r_bw, widths.r_bw
    return {
        "name": name,
        "type": _TYPE_OF_KIND[kind],
        "bandwidth_min": low,
        "bandwidth_max": high,
        "allocation": allocation,
    }


def legacy_ports_of(ports: tuple) -> LegacyPorts:
    """The 3.8.0 view of a current-format memory's ports (`zigzag.hardware.accelerator.Port`s).

    `r_bw` is the width of the first read port, else of the first read-write port; `w_bw` likewise
    with write ports; the granularities are those ports' minimum widths; counts are per port type.
    """

    def first(kind: str):
        return next((p for p in ports if p.type == kind), None)

    reader = first("read") or first("read_write")
    writer = first("write") or first("read_write")
    counts = {kind: sum(p.type == kind for p in ports) for kind in ("read", "write", "read_write")}
    return LegacyPorts(
        r_bw=reader.bandwidth_max if reader else 0,
        w_bw=writer.bandwidth_max if writer else 0,
        r_port=counts["read"],
        w_port=counts["write"],
        rw_port=counts["read_write"],
        min_r_granularity=reader.bandwidth_min if reader else None,
        min_w_granularity=writer.bandwidth_min if writer else None,
    )
