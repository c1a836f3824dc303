"""The rules of one memory of an accelerator document beyond its fields' own: a known memory type,
one source of its costs (the file, CACTI or a memory table), served dimensions of the array,
ports whose type fits their allocations, and the movements every level of an operand needs."""

from __future__ import annotations

from zigzag.io.validation.schema import Invalid, check_unique

__all__ = ["MEMORY_TYPES", "check_memory", "check_needed_directions", "misspelt_memory_type"]


#: the memory types CACTI extraction knows: ``sram`` (CACTI's "ram"), ``rf`` (an SRAM 128 times
#: larger) and ``dram``; like ZigZag, any other type is costed as CACTI's "main memory"
MEMORY_TYPES = ("sram", "rf", "dram")


def misspelt_memory_type(mem_type: str) -> str | None:
    """The known memory types ``mem_type`` is a slip of (another case, one letter added, missing,
    changed or two swapped), as ``'sram'`` or ``'sram' or 'dram'``; None when it is a known type
    or not close to one."""
    if mem_type in MEMORY_TYPES:
        return None
    typed = mem_type.strip().lower()
    close = [f"'{known}'" for known in MEMORY_TYPES if typed == known] or [
        f"'{known}'" for known in MEMORY_TYPES if _one_slip(typed, known)
    ]
    return " or ".join(close) or None


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one inserted, deleted or changed letter, or two swapped neighbours."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        return len(differ) == 1 or (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and a[differ[0]] == b[differ[1]]
            and a[differ[1]] == b[differ[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def check_memory(where: str, memory: dict, oa_dims: list[str]) -> None:
    close = misspelt_memory_type(memory["mem_type"])
    if close is not None:
        raise Invalid(
            f"{where}.mem_type",
            f"unknown memory type '{memory['mem_type']}' (did you mean {close}?); "
            f"known types: {', '.join(MEMORY_TYPES)} (any other is costed by CACTI as main memory)",
        )
    _check_cost_source(where, memory)
    check_unique(memory["operands"], f"{where}.operands", "operand")
    check_unique(memory["served_dimensions"], f"{where}.served_dimensions", "served dimension")
    for i, dim in enumerate(memory["served_dimensions"]):
        if dim not in oa_dims:
            raise Invalid(
                f"{where}.served_dimensions[{i}]",
                f"'{dim}' is not a dimension of the operational "
                f"array ({', '.join(oa_dims)}); use one of those or remove it",
            )
    names: dict[str, int] = {}
    for i, port in enumerate(memory["ports"]):
        if port["name"] in names:
            raise Invalid(
                f"{where}.ports[{i}].name",
                f"port name '{port['name']}' is already used by "
                f"ports[{names[port['name']]}] of this memory; give every port of a memory its own name",
            )
        names[port["name"]] = i
        _check_port(f"{where}.ports[{i}]", port, memory["operands"])


def _check_cost_source(where: str, memory: dict) -> None:
    """Costs come from the file, from CACTI (replacing the file's) or from a memory table."""
    table = memory.get("cost_table")
    if "cost_interpolation" in memory and table is None:
        raise Invalid(
            f"{where}.cost_interpolation",
            "is set but the memory has no cost_table; "
            "add cost_table: <file.csv> or remove cost_interpolation",
        )
    if memory["auto_cost_extraction"] or table is not None:
        if memory["auto_cost_extraction"] and table is not None:
            raise Invalid(
                f"{where}.cost_table",
                "and auto_cost_extraction: true both give the memory's costs; keep one of them",
            )
        if not any(p["type"] in ("read", "read_write") for p in memory["ports"]):
            raise Invalid(
                f"{where}.ports",
                "has no read or read_write port, whose bandwidth_max is the width "
                "the costs are looked up with; add one",
            )
    if table is not None:
        given = [key for key in ("r_cost", "w_cost", "area") if memory[key] is not None]
        if given:
            raise Invalid(
                f"{where}.{given[0]}",
                f"is given and so is cost_table, which gives r_cost, w_cost "
                f"and area; remove {', '.join(given)} or the cost_table",
            )
        return
    if memory["auto_cost_extraction"]:
        if memory["size"] % 8:
            raise Invalid(
                f"{where}.size",
                f"{memory['size']} is not a multiple of 8, which CACTI cost "
                "extraction (auto_cost_extraction: true) needs; round it to whole bytes",
            )
        return
    for key in ("r_cost", "w_cost", "area"):
        if memory[key] is None:
            raise Invalid(
                f"{where}.{key}",
                f"is missing; give {key}, set auto_cost_extraction: true "
                "(CACTI 7) or give a cost_table",
            )


_WRITE_DIRECTIONS = ("fh", "fl")  # written from the higher / lower level
_READ_DIRECTIONS = ("tl", "th")  # read to the lower / higher level


_MOVES = {
    "fh": "filled from the level above",
    "tl": "read towards the MACs",
    "fl": "written from below",
    "th": "sent to the level above",
}


def check_needed_directions(memories: dict, paths: dict | None = None, context: str = "") -> None:
    """Every level of a memory operand carries the movements that always happen there
    (docs/reference/accelerator.md#ports-and-the-four-allocation-directions): inputs go down
    (``tl``; ``fh`` below the outermost level), outputs go up (``fl``; ``th`` below the outermost)."""
    for operand in ("I1", "I2", "O"):
        levels = [name for name, memory in memories.items() if operand in memory["operands"]]
        for k, name in enumerate(levels):
            outermost = k == len(levels) - 1
            needed = ("fl",) if operand == "O" else ("tl",)
            if not outermost:
                needed += ("th",) if operand == "O" else ("fh",)
            carried = {
                entry.split(", ")[1]
                for port in memories[name]["ports"]
                for entry in port["allocation"]
                if entry.split(", ")[0] == operand
            }
            for direction in needed:
                if direction not in carried:
                    kind = "write" if direction in _WRITE_DIRECTIONS else "read"
                    path = (paths or {}).get(name, f"memories.{name}")
                    raise Invalid(
                        f"{path}.ports",
                        f"no port carries '{operand}, {direction}' "
                        f"({operand} {_MOVES[direction]}), which happens at this level of {operand}"
                        f"{context}; "
                        f"add it to the allocation of a {kind} or read_write port",
                    )


def _check_port(where: str, port: dict, operands: list[str]) -> None:
    for i, entry in enumerate(port["allocation"]):
        operand, direction = entry.split(", ")
        at = f"{where}.allocation[{i}]"
        if operand not in operands:
            raise Invalid(
                at,
                f"operand '{operand}' is not stored in this memory (operands: "
                f"{', '.join(operands) or 'none'}); add it to operands or remove this allocation",
            )
        if direction in _WRITE_DIRECTIONS and port["type"] == "read":
            raise Invalid(
                at,
                f"direction '{direction}' writes into the memory but port '{port['name']}' "
                "is a read port; allocate it on a write or read_write port",
            )
        if direction in _READ_DIRECTIONS and port["type"] == "write":
            raise Invalid(
                at,
                f"direction '{direction}' reads from the memory but port '{port['name']}' "
                "is a write port; allocate it on a read or read_write port",
            )
    if port["bandwidth_min"] > port["bandwidth_max"]:
        raise Invalid(
            f"{where}.bandwidth_min",
            f"({port['bandwidth_min']}) is greater than bandwidth_max "
            f"({port['bandwidth_max']}); lower bandwidth_min or raise bandwidth_max",
        )
