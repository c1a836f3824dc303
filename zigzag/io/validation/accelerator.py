"""Validation of an accelerator YAML document: its fields (:mod:`zigzag.io.validation.accelerator_fields`),
then the rules across them: the operational array (plain or IMC, with the IMC cells), each memory
(:mod:`zigzag.io.validation.memories`) and the vector unit."""

from __future__ import annotations

import difflib
from typing import Any

from zigzag.hardware.vector import LANE_DIMENSION
from zigzag.io.validation.accelerator_fields import ACCELERATOR
from zigzag.io.validation.memories import check_memory, check_needed_directions
from zigzag.io.validation.schema import (
    Invalid,
    check_unique,
    check_value,
    count_entries,
    expect_top,
    run_check,
)
from zigzag.workload.operators import VECTOR_OPS

__all__ = ["validate_accelerator"]


def validate_accelerator(data: Any, file: Any) -> dict:
    """Check an accelerator document (from `file`) and return it normalised."""
    return run_check(file, _validate_accelerator, data)


def _validate_accelerator(data: Any) -> dict:
    expect_top(data, "dict", "a mapping with the fields name, memories and operational_array")
    accelerator = check_value(data, ACCELERATOR, "")
    array = accelerator["operational_array"]
    _check_operational_array(array)
    for name, memory in accelerator["memories"].items():
        check_memory(f"memories.{name}", memory, array["dimensions"])
    if array["is_imc"]:
        _check_imc_cells(accelerator["memories"], array["input_precision"][1])
    check_needed_directions(accelerator["memories"])
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
        check_memory(at, memory, [LANE_DIMENSION])
    view = {**registers, **{name: memories[name] for name in unit["memories"]}}
    for operand in ("I1", "I2", "O"):
        if not any(operand in memory["operands"] for memory in view.values()):
            raise Invalid(
                f"{where}.memories",
                f"no memory of the vector unit (registers, then memories) holds "
                f"operand {operand}; list a memory that holds it",
            )
    paths = {name: f"{where}.registers.{name}" for name in registers}
    check_needed_directions(view, paths, " (as a memory of the vector unit)")


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
