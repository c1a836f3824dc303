"""Validation of an accelerator YAML document (memories, ports, operational array, IMC cells,
vector unit)."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from zigzag.hardware.memory_costs.tables import INTERPOLATIONS
from zigzag.hardware.vector import LANE_DIMENSION
from zigzag.workload.operators import VECTOR_OPS
from zigzag.io.validation.schema import (
    UNROLLING_FORM,
    Field,
    Invalid,
    check_unique,
    check_value,
    count_entries,
    expect_top,
    run_check,
)


_OA_DIM = Field("str", pattern=r"D\d", form="an operational-array dimension 'D<digit>', e.g. 'D1'")
_DATAFLOW = Field(
    "list",
    what="a list of unrollings, e.g. ['K, 32']",
    item=Field("str", pattern=r"[A-Z]+, [0-9]+", form=UNROLLING_FORM),
)

_PORT = Field(
    "dict",
    what="a port with name, type, bandwidth_min, bandwidth_max and allocation",
    keys={
        "name": Field(
            "str",
            required=True,
            what="port name, e.g. r_port_1",
            pattern=r"r?w?_port_\d+",
            form="'r_port_<n>', 'w_port_<n>' or 'rw_port_<n>', e.g. 'r_port_1'",
        ),
        "type": Field(
            "str",
            required=True,
            what="read, write or read_write",
            choices=("read", "write", "read_write"),
        ),
        "bandwidth_min": Field(
            "int", required=True, minimum=1, what="minimum bandwidth in bits per cycle"
        ),
        "bandwidth_max": Field(
            "int", required=True, minimum=1, what="maximum bandwidth in bits per cycle"
        ),
        "allocation": Field(
            "list",
            required=True,
            what="list of '<operand>, <direction>' entries, e.g. [I1, tl]",
            item=Field(
                "str",
                pattern=r"(I[12]|O), (fh|tl|fl|th)",
                form="'<I1|I2|O>, <fh|tl|fl|th>' with one space after the comma, e.g. 'I1, tl'",
            ),
        ),
    },
)

MEMORY = Field(
    "dict",
    what="a memory with size, costs, latency, operands, ports, ...",
    keys={
        "size": Field("int", required=True, minimum=1, what="capacity in bits, a whole number"),
        "r_cost": Field(
            "float",
            nullable=True,
            default=None,
            minimum=0,
            what="energy in pJ of one read access, e.g. 0.5",
        ),
        "w_cost": Field(
            "float",
            nullable=True,
            default=None,
            minimum=0,
            what="energy in pJ of one write access, e.g. 0.5",
        ),
        "area": Field(
            "float", nullable=True, default=None, minimum=0, what="the memory's area, e.g. 1500"
        ),
        "latency": Field(
            "int", required=True, minimum=0, what="access latency in cycles, a whole number"
        ),
        "mem_type": Field("str", default="sram"),
        "auto_cost_extraction": Field("bool", default=False),
        "cost_table": Field(
            "str", what="path of a memory-table CSV, relative to the accelerator file"
        ),
        "cost_interpolation": Field("str", choices=INTERPOLATIONS),
        "operands": Field(
            "list",
            required=True,
            what="memory operands stored, e.g. [I1, O]",
            item=Field("str", pattern=r"I[12]|O", form="a memory operand: I1, I2 or O"),
        ),
        "ports": Field(
            "list", required=True, item=_PORT, what="list of ports (name, type, bandwidth_min, ...)"
        ),
        "served_dimensions": Field(
            "list",
            required=True,
            item=_OA_DIM,
            what="OA dimensions sharing one instance, e.g. [D1, D2], or []",
        ),
        "force_double_buffering": Field("bool", default=False),
    },
)

_OPERATIONAL_ARRAY = Field(
    "dict",
    required=True,
    what="dimensions, sizes, unit_energy, unit_area, ...",
    keys={
        "dimensions": Field(
            "list", required=True, min_len=1, item=_OA_DIM, what="OA dimension names, e.g. [D1, D2]"
        ),
        "sizes": Field(
            "list",
            required=True,
            what="one size per dimension, e.g. [32, 32]",
            item=Field("int", minimum=1, what="the number of multipliers along this dimension"),
        ),
        "is_imc": Field("bool", default=False),
        "input_precision": Field(
            "list",
            length=2,
            what="[activation bits, weight bits], e.g. [8, 8]",
            item=Field("int", minimum=1, what="a bit width, e.g. 8"),
        ),
        "unit_energy": Field("float", minimum=0, what="energy of one MAC in pJ, e.g. 0.04"),
        "unit_energy_per_precision": Field(
            "list",
            min_len=1,
            what="the energy of one MAC per operand precision, e.g. [{bits: 8, unit_energy: 0.04}]",
            item=Field(
                "dict",
                what="bits and unit_energy, e.g. {bits: 16, unit_energy: 0.16}",
                keys={
                    "bits": Field("int", required=True, minimum=1, what="operand bits, e.g. 8"),
                    "unit_energy": Field(
                        "float", required=True, minimum=0, what="pJ per MAC at these bits"
                    ),
                },
            ),
        ),
        "unit_area": Field("float", minimum=0, what="area of one multiplier, e.g. 1"),
        "imc_type": Field("str", nullable=True, default=None, choices=("analog", "digital")),
        "adc_resolution": Field(
            "float", nullable=True, default=0, minimum=0, what="ADC bits, e.g. 8"
        ),
        "bit_serial_precision": Field("float", nullable=True, default=None),
    },
)

_VECTOR_OPERATION = Field(
    "dict",
    what="cycles and energy of one operation of this class",
    keys={
        "cycles": Field(
            "float", required=True, minimum=0, what="cycles one operation keeps a lane busy, e.g. 1"
        ),
        "energy": Field(
            "float", required=True, minimum=0, what="energy of one operation in pJ, e.g. 0.1"
        ),
    },
)

_VECTOR_UNIT = Field(
    "dict",
    what="lanes, operations and the memories it reads and writes",
    keys={
        "lanes": Field("int", required=True, minimum=1, what="number of parallel lanes, e.g. 32"),
        "operations": Field(
            "named",
            required=True,
            min_len=1,
            value=_VECTOR_OPERATION,
            what="per operation class '<class>: {cycles: ..., energy: ...}', "
            "e.g. add: {cycles: 1, energy: 0.1}",
        ),
        "memories": Field(
            "list",
            required=True,
            min_len=1,
            what="names of memories it reads and writes, innermost first, "
            "e.g. [unified_buffer, dram]",
            item=Field("str", what="the name of a memory under memories"),
        ),
        "registers": Field(
            "named",
            value=MEMORY,
            what="memories of its own, innermost first, each as '<name>: {size: ..., ...}'",
        ),
        "unit_area": Field("float", minimum=0, what="area of one lane, in the file's area unit"),
    },
)

_ACCELERATOR = Field(
    "dict",
    keys={
        "name": Field("str", required=True, what="accelerator name"),
        "memories": Field(
            "named",
            required=True,
            min_len=1,
            value=MEMORY,
            what="the memories, innermost first, each as '<name>: {size: ..., ...}'",
        ),
        "operational_array": _OPERATIONAL_ARRAY,
        "dataflows": Field(
            "dict",
            what="fixed unrollings per OA dimension, e.g. {D1: ['K, 32']}",
            keys={
                "D1": replace(_DATAFLOW, required=True),
                "D2": _DATAFLOW,
                "D3": _DATAFLOW,
                "D4": _DATAFLOW,
            },
        ),
        "area_unit": Field("str", nullable=True, default=None, choices=("mm2", "um2")),
        "vector_unit": _VECTOR_UNIT,
    },
)


def validate_accelerator(data: Any, file: Any) -> dict:
    """Check an accelerator document (from `file`) and return it normalised."""
    return run_check(file, _validate_accelerator, data)


def _validate_accelerator(data: Any) -> dict:
    expect_top(data, "dict", "a mapping with the fields name, memories and operational_array")
    accelerator = check_value(data, _ACCELERATOR, "")
    array = accelerator["operational_array"]
    _check_operational_array(array)
    for name, memory in accelerator["memories"].items():
        _check_memory(f"memories.{name}", memory, array["dimensions"])
    if array["is_imc"]:
        _check_imc_cells(accelerator["memories"], array["input_precision"][1])
    _check_needed_directions(accelerator["memories"])
    if "vector_unit" in accelerator:
        _check_vector_unit(accelerator["vector_unit"], accelerator["memories"])
    return accelerator


def _check_vector_unit(unit: dict, memories: dict) -> None:
    """Known operation classes; listed memories exist, once, bottom-up; registers are memories of
    the lanes; the unit's memories hold every memory operand and carry the movements needed."""
    where = "vector_unit"
    for name in unit["operations"]:
        if name not in VECTOR_OPS:
            close = difflib.get_close_matches(name, VECTOR_OPS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise Invalid(
                f"{where}.operations.{name}",
                f"unknown operation class '{name}'{hint}; known classes: {', '.join(VECTOR_OPS)}",
            )
    check_unique(unit["memories"], f"{where}.memories", "memory")
    order = list(memories)
    for i, name in enumerate(unit["memories"]):
        if name not in memories:
            close = difflib.get_close_matches(name, order, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise Invalid(
                f"{where}.memories[{i}]",
                f"'{name}' is not a memory of this accelerator{hint}; "
                f"use names from memories: {', '.join(order)}",
            )
        if i and order.index(name) < order.index(unit["memories"][i - 1]):
            raise Invalid(
                f"{where}.memories[{i}]",
                f"'{name}' is listed after '{unit['memories'][i - 1]}' but sits "
                "below it under memories; list them innermost first, in the order of memories",
            )
    registers = unit.get("registers") or {}
    for name, memory in registers.items():
        at = f"{where}.registers.{name}"
        if name in memories:
            raise Invalid(
                at,
                f"'{name}' is also the name of a memory under memories; give the register its own name",
            )
        if memory["auto_cost_extraction"] or "cost_table" in memory:
            raise Invalid(
                at,
                "a register of the vector unit takes its r_cost, w_cost and area from the file; "
                "give them and remove auto_cost_extraction / cost_table",
            )
        _check_memory(at, memory, [LANE_DIMENSION])
    view = {**registers, **{name: memories[name] for name in unit["memories"]}}
    for operand in ("I1", "I2", "O"):
        if not any(operand in memory["operands"] for memory in view.values()):
            raise Invalid(
                f"{where}.memories",
                f"no memory of the vector unit (registers, then memories) holds "
                f"operand {operand}; list a memory that holds it",
            )
    paths = {name: f"{where}.registers.{name}" for name in registers}
    _check_needed_directions(view, paths, " (as a memory of the vector unit)")


def _check_operational_array(array: dict) -> None:
    where = "operational_array"
    check_unique(array["dimensions"], f"{where}.dimensions", "OA dimension")
    if len(array["sizes"]) != len(array["dimensions"]):
        raise Invalid(
            f"{where}.sizes",
            f"has {count_entries(len(array['sizes']))} but dimensions has "
            f"{len(array['dimensions'])}; give one size per dimension, in the same order",
        )
    if array["is_imc"]:
        _check_imc_array(array, where)
    else:
        _check_plain_array(array, where)


def _check_plain_array(array: dict, where: str) -> None:
    """A non-IMC array: no IMC settings, and a MAC energy and area."""
    if array["imc_type"] is not None:
        raise Invalid(
            f"{where}.imc_type",
            "is set but the array is not IMC (is_imc is false); "
            "remove imc_type or set is_imc: true",
        )
    for key in ("adc_resolution", "bit_serial_precision"):
        unset = 0 if key == "adc_resolution" else None
        if array[key] != unset:
            raise Invalid(
                f"{where}.{key}",
                f"is set but the array is not IMC (is_imc is false); "
                f"remove {key} or set is_imc: true",
            )
    for key, meaning in (
        ("unit_energy", "energy per MAC in pJ"),
        ("unit_area", "area of one multiplier"),
    ):
        if key not in array:
            raise Invalid(
                f"{where}.{key}", f"is required for a non-IMC array; add {key}: <{meaning}>"
            )
    seen = set()
    for i, entry in enumerate(array.get("unit_energy_per_precision") or ()):
        if entry["bits"] in seen:
            raise Invalid(
                f"{where}.unit_energy_per_precision[{i}].bits",
                f"{entry['bits']} bits are listed twice; give one unit_energy per precision",
            )
        seen.add(entry["bits"])


def _check_imc_array(array: dict, where: str) -> None:
    """An IMC array: precisions present, powers of two, and consistent."""
    if "input_precision" not in array:
        raise Invalid(
            f"{where}.input_precision",
            "is required for an IMC array; add input_precision: [activation bits, weight bits]",
        )
    serial = array["bit_serial_precision"]
    if serial is None:
        raise Invalid(
            f"{where}.bit_serial_precision",
            "is required for an IMC array; add "
            "bit_serial_precision: <activation bits fed per cycle, a power of two>",
        )
    activation, weight = array["input_precision"]
    if serial > activation:
        raise Invalid(
            f"{where}.bit_serial_precision",
            f"({serial}) is larger than the activation precision "
            f"input_precision[0] ({activation}); use at most {activation}",
        )
    for value, at in (
        (serial, "bit_serial_precision"),
        (activation, "input_precision[0]"),
        (weight, "input_precision[1]"),
    ):
        if value <= 0 or not float(value).is_integer() or int(value) & (int(value) - 1):
            raise Invalid(f"{where}.{at}", f"{value} is not a power of two; use 1, 2, 4, 8, ...")
    if array["imc_type"] == "digital" and array["adc_resolution"] not in (0, None):
        raise Invalid(
            f"{where}.adc_resolution",
            "a digital IMC array has no ADC; set adc_resolution to 0 or imc_type to analog",
        )
    if len(array["dimensions"]) < 2:
        raise Invalid(
            f"{where}.dimensions",
            "an IMC array needs at least two dimensions: the wordline "
            "dimension and the bitline dimension (the first two by name); add one",
        )
    bitline = sorted(array["dimensions"])[1]
    rows = array["sizes"][array["dimensions"].index(bitline)]
    if array["imc_type"] != "analog" and rows & (rows - 1):
        raise Invalid(
            f"{where}.sizes",
            f"the bitline dimension {bitline} of a digital IMC array has size {rows}, "
            "which is not a power of two (its adder tree needs one); use 2, 4, 8, ...",
        )


def _check_imc_cells(memories: dict, weight_bits: int) -> None:
    """An IMC array keeps its weights in a memory called `cells`."""
    cells = memories.get("cells")
    if cells is None:
        raise Invalid(
            "memories",
            "an IMC array needs a memory named 'cells' holding the weights "
            "(operands: [I2], served_dimensions: []); add it",
        )
    if cells["operands"] != ["I2"]:
        raise Invalid(
            "memories.cells.operands", "IMC cells can only hold weights; set operands: [I2]"
        )
    if cells["served_dimensions"]:
        raise Invalid(
            "memories.cells.served_dimensions",
            "IMC cells must be fully unrolled; set served_dimensions: []",
        )
    if cells["size"] % weight_bits:
        raise Invalid(
            "memories.cells.size",
            f"{cells['size']} is not a multiple of the weight precision "
            f"input_precision[1] ({weight_bits}); make it one",
        )
    if cells["size"] > weight_bits:
        raise Invalid(
            "memories.cells.size",
            f"{cells['size']} bits hold several weights per multiplier, which "
            "is not supported (the reference cannot evaluate it either); set it to the weight "
            f"precision input_precision[1] ({weight_bits})",
        )
    if cells["auto_cost_extraction"] or "cost_table" in cells or cells["area"] is None:
        raise Invalid(
            "memories.cells.area",
            "the area of one IMC cell group is needed (CACTI extraction "
            "and memory tables are not supported for the cells); give area, set "
            "auto_cost_extraction: false and remove any cost_table",
        )


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


def _check_memory(where: str, memory: dict, oa_dims: list[str]) -> None:
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


def _check_needed_directions(memories: dict, paths: dict | None = None, context: str = "") -> None:
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
