"""Validation and normalisation of the three ZigZag YAML inputs: accelerator, workload, mapping.

Each `validate_*` function checks an already-loaded YAML document and returns a NEW normalised copy:
the same structure with every optional field set to its default. The first problem found raises
`zigzag.errors.InputError(file, where, message)`; `where` is a path into the document
(`memories.sram_2MB.ports[0].allocation[1]`, `layer[3] (id 3, conv2_1).loop_sizes`,
`mapping entry 'default'.spatial_mapping.D1[0]`) and the message says what is wrong and what to do.

Strings with an inner syntax are kept verbatim for later parsing: unrollings (`"K, 32"`),
allocations (`"I1, tl"`), `equation` and `dimension_relations`. Layer-dimension names given as
plain names are upper-cased: `loop_dims`, `pr_loop_dims` and the dimension of each
`temporal_ordering` row (unrollings and hints must already be upper case).

Normalised accelerator (fields without a default, e.g. `dataflows`, `input_precision`,
`unit_energy`, stay absent when not given)::

    {"name": "tpu_like",
     "memories": {"rf_128B": {"size": 1024, "r_cost": 0.095, "w_cost": 0.095, "area": 0,
                              "latency": 1, "operands": ["I2"],
                              "ports": [{"name": "r_port_1", "type": "read", "bandwidth_min": 8,
                                         "bandwidth_max": 8, "allocation": ["I2, tl"]}, ...],
                              "served_dimensions": [], "mem_type": "sram",
                              "auto_cost_extraction": False, "force_double_buffering": False}, ...},
     "operational_array": {"unit_energy": 0.04, "unit_area": 1, "dimensions": ["D1", "D2"],
                           "sizes": [32, 32], "is_imc": False, "imc_type": None,
                           "adc_resolution": 0, "bit_serial_precision": None}}

Normalised workload layer::

    {"id": 1, "operator_type": "Pooling", "equation": "O[b][g][oy][ox]+=W[fx][fy]*I[b][g][iy][ix]",
     "dimension_relations": ["ix=2*ox+1*fx", "iy=2*oy+1*fy"], "loop_dims": ["B", "G", "OY", ...],
     "loop_sizes": [1, 64, 56, ...], "operand_precision": {"I": 8, "W": 0, "O": 16, "O_final": 8},
     "operand_source": {"I": 0, "W": 1}, "name": None, "pr_loop_dims": None,
     "pr_loop_sizes": None, "padding": None}

Normalised mapping entry::

    {"name": "default", "spatial_mapping": {"D1": ["K, 32"], "D2": ["C, 32"]},
     "memory_operand_links": {"O": "O", "I": "I1", "W": "I2"}, "spatial_mapping_hint": {},
     "temporal_ordering": [["OX", 112], ["K", "*"]]}

The checks follow the reference's schema (unknown fields rejected, regexes match the whole string,
null only where allowed, a float where an integer is expected rejected) and its rule checks.
Deliberately stricter, where the reference crashes later or silently misbehaves: booleans are not
accepted as numbers, nor `.nan` or `.inf`; memory sizes, bandwidths, OA sizes, loop sizes,
`pr_loop_sizes`, `input_precision`, unrolling sizes and temporal-ordering sizes must be >= 1;
precisions, latencies and paddings must be >= 0; no empty `memories` or OA `dimensions`; no
duplicate OA dimensions, memory operands or served dimensions; no two ports of a memory with the
same name; an allocation may only name an operand of its memory; a non-IMC array needs `unit_energy`
and `unit_area`; an IMC array needs `input_precision` and `bit_serial_precision`, at least two
dimensions, a power-of-two bitline size if digital, and a memory `cells` whose `size` equals the
weight precision (one weight per multiplier: the reference crashes on more) and whose `area` is
given (no CACTI for the cells); per layer: `loop_dims` and `loop_sizes` of equal length, no
duplicate loop dims, the equation's inputs named I and W with a precision each, every equation index
a loop dim or a relation's data dim, relation coefficients positive whole numbers and relation dims
loop dims, `padding`/`pr_loop_sizes` only with `pr_loop_dims`; unique layer ids; `operand_source`
only pointing to the layer itself or an earlier layer; the workload not empty; in a mapping entry no
memory operand linked twice. A mapping's keys must exist in the accelerator only for
`spatial_mapping` (`check_mapping_fits_accelerator`): hints for OA dimensions the accelerator lacks
are accepted and ignored.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from zigzag.errors import InputError

__all__ = [
    "validate_accelerator",
    "validate_workload",
    "validate_mapping",
    "check_mapping_fits_accelerator",
]


class _Invalid(Exception):
    """The first problem found in a document; turned into an `InputError` by the public functions."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


def _run(file: Any, check: Any, data: Any) -> Any:
    """Call `check(data)`, reporting its first problem as an `InputError` about `file`."""
    try:
        return check(data)
    except _Invalid as problem:
        raise InputError(file, problem.where, problem.message) from None


# --------------------------------------------------------------------------------------------
# A small schema language: a `Field` describes one value; `_check` validates and normalises it.
# --------------------------------------------------------------------------------------------

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Field:
    """Schema of one YAML value.

    kind: "int", "float", "bool", "str", "list", "dict" (fixed keys) or "named" (any text keys);
    what: what to give, used in messages; form: the expected form of `pattern`, used in messages;
    star: "*" is accepted too; upper: upper-case the string; item / items: schema of every list
    entry / of each position; keys: schema per allowed key; value: schema of every named value.
    """

    kind: str
    what: str = ""
    required: bool = False
    nullable: bool = False
    default: Any = _NO_DEFAULT
    pattern: str | None = None
    form: str = ""
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    star: bool = False
    upper: bool = False
    length: int | None = None
    min_len: int = 0
    item: Field | None = None
    items: tuple[Field, ...] = ()
    keys: dict[str, Field] | None = None
    value: Field | None = None


# Booleans are a subclass of int in Python (and Cerberus accepts them as integers); here they are
# rejected wherever a number is expected, as `size: true` is certainly a mistake.
_PY_TYPES: dict[str, Any] = {
    "int": int,
    "float": (int, float),
    "bool": bool,
    "str": str,
    "list": list,
    "dict": dict,
    "named": dict,
}
_EXPECTED = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "str": "text",
    "list": "a list",
    "dict": "a mapping",
    "named": "a mapping",
}
_HOW = {
    "int": "write it without a decimal point or quotes, e.g. 64",
    "float": "write a plain number, e.g. 0.5",
    "bool": "write true or false",
    "str": "write text, and quote words YAML reads as something else, e.g. 'ON' or '1'",
    "list": "write [a, b] or one '- item' line per entry",
    "dict": "write indented 'key: value' lines under it",
    "named": "write indented 'name: ...' entries under it",
}


def _check(value: Any, spec: Field, where: str) -> Any:
    """Return the normalised `value`, or raise `_Invalid` for the first problem in it."""
    if value is None:
        if spec.nullable:
            return None
        raise _Invalid(where, f"must not be empty (null); give {spec.what or _expected(spec)}")
    if spec.star and value == "*":
        return value
    if not _has_kind(value, spec.kind):
        how = "write a whole number, e.g. 64, or '*'" if spec.star else _HOW[spec.kind]
        raise _Invalid(where, f"must be {_expected(spec)}, got {_describe(value)}; {how}")
    return _CHECKERS[spec.kind](value, spec, where)


def _has_kind(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "bool"
    return isinstance(value, _PY_TYPES[kind])


def _expected(spec: Field) -> str:
    return _EXPECTED[spec.kind] + (" or '*'" if spec.star else "")


def _describe(value: Any) -> str:
    """Short description of a YAML value for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"'{text}' (text)"
    if isinstance(value, (int, float)):
        return f"{value} ({'a whole' if isinstance(value, int) else 'a decimal'} number)"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    return f"{value} (a {type(value).__name__})"


def _entries(count: int) -> str:
    return f"{count} entry" if count == 1 else f"{count} entries"


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _check_number(value: int | float, spec: Field, where: str) -> int | float:
    if not math.isfinite(value):
        raise _Invalid(where, f"must be a finite number, got {value}; give {spec.what or 'a number'}")
    if spec.minimum is not None and value < spec.minimum:
        need = "positive" if spec.minimum else "zero or more"
        raise _Invalid(where, f"must be {need}, got {value}; give {spec.what or 'a valid value'}")
    return value


def _check_bool(value: bool, spec: Field, where: str) -> bool:
    return value


def _check_str(value: str, spec: Field, where: str) -> str:
    if spec.pattern is not None and not re.fullmatch(spec.pattern, value):
        raise _Invalid(where, f"'{value}' does not have the expected form; write {spec.form}")
    if spec.choices and value not in spec.choices:
        raise _Invalid(where, f"unallowed value '{value}'; use one of: {', '.join(spec.choices)}")
    return value.upper() if spec.upper else value


def _check_list(value: list, spec: Field, where: str) -> list:
    length = len(spec.items) if spec.items else spec.length
    if length is not None and len(value) != length:
        raise _Invalid(where, f"must have exactly {_entries(length)}, got {len(value)}; write {spec.what}")
    if len(value) < spec.min_len:
        raise _Invalid(where, f"must not be empty; give {spec.what}")
    if spec.items:
        return [_check(v, s, f"{where}[{i}]") for i, (v, s) in enumerate(zip(value, spec.items))]
    assert spec.item is not None
    return [_check(v, spec.item, f"{where}[{i}]") for i, v in enumerate(value)]


def _check_dict(value: dict, spec: Field, where: str) -> dict:
    assert spec.keys is not None
    out = {}
    for key, item in value.items():
        if key not in spec.keys:
            raise _Invalid(_join(where, key), _unknown_field(key, spec.keys))
        out[key] = _check(item, spec.keys[key], _join(where, key))
    for key, sub in spec.keys.items():
        if key in out:
            continue
        if sub.required:
            raise _Invalid(_join(where, key), f"required field '{key}' is missing; add {key}: <{sub.what}>")
        if sub.default is not _NO_DEFAULT:
            out[key] = copy.deepcopy(sub.default)
    return out


def _unknown_field(key: Any, allowed: dict[str, Field]) -> str:
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown field '{key}'{hint}; allowed fields: {', '.join(allowed)}; remove it or fix its spelling"


def _check_named(value: dict, spec: Field, where: str) -> dict:
    assert spec.value is not None
    if len(value) < spec.min_len:
        raise _Invalid(where, f"must not be empty; give {spec.what}")
    out = {}
    for name, item in value.items():
        if not isinstance(name, str):
            raise _Invalid(_join(where, name), f"the name {_describe(name)} must be text; quote it, e.g. '{name}'")
        out[name] = _check(item, spec.value, _join(where, name))
    return out


_CHECKERS: dict[str, Any] = {
    "int": _check_number,
    "float": _check_number,
    "bool": _check_bool,
    "str": _check_str,
    "list": _check_list,
    "dict": _check_dict,
    "named": _check_named,
}


def _expect_top(data: Any, kind: str, content: str) -> None:
    """Check the type of the whole document."""
    if data is None:
        raise _Invalid("top level", f"the file is empty; it must contain {content}")
    if not _has_kind(data, kind):
        raise _Invalid("top level", f"the file must contain {content}, got {_describe(data)}")


def _check_unique(values: list, where: str, noun: str) -> None:
    """Reject the second occurrence of any value in `values`."""
    seen: set = set()
    for i, value in enumerate(values):
        if value in seen:
            raise _Invalid(f"{where}[{i}]", f"{noun} '{value}' is listed twice; list each {noun} once")
        seen.add(value)


# --------------------------------------------------------------------------------------------
# Accelerator
# --------------------------------------------------------------------------------------------

_OA_DIM = Field("str", pattern=r"D\d", form="an operational-array dimension 'D<digit>', e.g. 'D1'")
_UNROLLING_FORM = "'<DIM>, <size>' with an upper-case layer dimension and one space after the comma, e.g. 'K, 32'"
_DATAFLOW = Field("list", what="a list of unrollings, e.g. ['K, 32']",
                  item=Field("str", pattern=r"[A-Z]+, [0-9]+", form=_UNROLLING_FORM))

_PORT = Field("dict", what="a port with name, type, bandwidth_min, bandwidth_max and allocation", keys={
    "name": Field("str", required=True, what="port name, e.g. r_port_1", pattern=r"r?w?_port_\d+",
                  form="'r_port_<n>', 'w_port_<n>' or 'rw_port_<n>', e.g. 'r_port_1'"),
    "type": Field("str", required=True, what="read, write or read_write", choices=("read", "write", "read_write")),
    "bandwidth_min": Field("int", required=True, minimum=1, what="minimum bandwidth in bits per cycle"),
    "bandwidth_max": Field("int", required=True, minimum=1, what="maximum bandwidth in bits per cycle"),
    "allocation": Field("list", required=True, what="list of '<operand>, <direction>' entries, e.g. [I1, tl]",
                        item=Field("str", pattern=r"(I[12]|O), (fh|tl|fl|th)",
                                   form="'<I1|I2|O>, <fh|tl|fl|th>' with one space after the comma, e.g. 'I1, tl'")),
})

_MEMORY = Field("dict", what="a memory with size, costs, latency, operands, ports, ...", keys={
    "size": Field("int", required=True, minimum=1, what="capacity in bits, a whole number"),
    "r_cost": Field("float", nullable=True, default=None),
    "w_cost": Field("float", nullable=True, default=None),
    "area": Field("float", nullable=True, default=None),
    "latency": Field("int", required=True, minimum=0, what="access latency in cycles, a whole number"),
    "mem_type": Field("str", default="sram"),
    "auto_cost_extraction": Field("bool", default=False),
    "operands": Field("list", required=True, what="memory operands stored, e.g. [I1, O]",
                      item=Field("str", pattern=r"I[12]|O", form="a memory operand: I1, I2 or O")),
    "ports": Field("list", required=True, item=_PORT, what="list of ports (name, type, bandwidth_min, ...)"),
    "served_dimensions": Field("list", required=True, item=_OA_DIM,
                               what="OA dimensions sharing one instance, e.g. [D1, D2], or []"),
    "force_double_buffering": Field("bool", default=False),
})

_OPERATIONAL_ARRAY = Field("dict", required=True, what="dimensions, sizes, unit_energy, unit_area, ...", keys={
    "dimensions": Field("list", required=True, min_len=1, item=_OA_DIM, what="OA dimension names, e.g. [D1, D2]"),
    "sizes": Field("list", required=True, what="one size per dimension, e.g. [32, 32]",
                   item=Field("int", minimum=1, what="the number of multipliers along this dimension")),
    "is_imc": Field("bool", default=False),
    "input_precision": Field("list", length=2, what="[activation bits, weight bits], e.g. [8, 8]",
                             item=Field("int", minimum=1, what="a bit width, e.g. 8")),
    "unit_energy": Field("float"),
    "unit_area": Field("float"),
    "imc_type": Field("str", nullable=True, default=None, choices=("analog", "digital")),
    "adc_resolution": Field("float", nullable=True, default=0),
    "bit_serial_precision": Field("float", nullable=True, default=None),
})

_ACCELERATOR = Field("dict", keys={
    "name": Field("str", required=True, what="accelerator name"),
    "memories": Field("named", required=True, min_len=1, value=_MEMORY,
                      what="the memories, innermost first, each as '<name>: {size: ..., ...}'"),
    "operational_array": _OPERATIONAL_ARRAY,
    "dataflows": Field("dict", what="fixed unrollings per OA dimension, e.g. {D1: ['K, 32']}", keys={
        "D1": replace(_DATAFLOW, required=True),
        "D2": _DATAFLOW,
        "D3": _DATAFLOW,
        "D4": _DATAFLOW,
    }),
})


def validate_accelerator(data: Any, file: Any) -> dict:
    """Check an accelerator document (from `file`) and return it normalised."""
    return _run(file, _validate_accelerator, data)


def _validate_accelerator(data: Any) -> dict:
    _expect_top(data, "dict", "a mapping with the fields name, memories and operational_array")
    accelerator = _check(data, _ACCELERATOR, "")
    array = accelerator["operational_array"]
    _check_operational_array(array)
    for name, memory in accelerator["memories"].items():
        _check_memory(f"memories.{name}", memory, array["dimensions"])
    if array["is_imc"]:
        _check_imc_cells(accelerator["memories"], array["input_precision"][1])
    return accelerator


def _check_operational_array(array: dict) -> None:
    where = "operational_array"
    _check_unique(array["dimensions"], f"{where}.dimensions", "OA dimension")
    if len(array["sizes"]) != len(array["dimensions"]):
        raise _Invalid(f"{where}.sizes", f"has {_entries(len(array['sizes']))} but dimensions has "
                       f"{len(array['dimensions'])}; give one size per dimension, in the same order")
    if array["is_imc"]:
        _check_imc_array(array, where)
    else:
        _check_plain_array(array, where)


def _check_plain_array(array: dict, where: str) -> None:
    """A non-IMC array: no IMC settings, and a MAC energy and area."""
    if array["imc_type"] is not None:
        raise _Invalid(f"{where}.imc_type", "is set but the array is not IMC (is_imc is false); "
                       "remove imc_type or set is_imc: true")
    for key in ("adc_resolution", "bit_serial_precision"):
        unset = 0 if key == "adc_resolution" else None
        if array[key] != unset:
            raise _Invalid(f"{where}.{key}", f"is set but the array is not IMC (is_imc is false); "
                           f"remove {key} or set is_imc: true")
    for key, meaning in (("unit_energy", "energy per MAC in pJ"), ("unit_area", "area of one multiplier")):
        if key not in array:
            raise _Invalid(f"{where}.{key}", f"is required for a non-IMC array; add {key}: <{meaning}>")


def _check_imc_array(array: dict, where: str) -> None:
    """An IMC array: precisions present, powers of two, and consistent."""
    if "input_precision" not in array:
        raise _Invalid(f"{where}.input_precision",
                       "is required for an IMC array; add input_precision: [activation bits, weight bits]")
    serial = array["bit_serial_precision"]
    if serial is None:
        raise _Invalid(f"{where}.bit_serial_precision", "is required for an IMC array; add "
                       "bit_serial_precision: <activation bits fed per cycle, a power of two>")
    activation, weight = array["input_precision"]
    if serial > activation:
        raise _Invalid(f"{where}.bit_serial_precision", f"({serial}) is larger than the activation precision "
                       f"input_precision[0] ({activation}); use at most {activation}")
    for value, at in ((serial, "bit_serial_precision"), (activation, "input_precision[0]"),
                      (weight, "input_precision[1]")):
        if value <= 0 or not float(value).is_integer() or int(value) & (int(value) - 1):
            raise _Invalid(f"{where}.{at}", f"{value} is not a power of two; use 1, 2, 4, 8, ...")
    if array["imc_type"] == "digital" and array["adc_resolution"] not in (0, None):
        raise _Invalid(f"{where}.adc_resolution",
                       "a digital IMC array has no ADC; set adc_resolution to 0 or imc_type to analog")
    if len(array["dimensions"]) < 2:
        raise _Invalid(f"{where}.dimensions", "an IMC array needs at least two dimensions: the wordline "
                       "dimension and the bitline dimension (the first two by name); add one")
    bitline = sorted(array["dimensions"])[1]
    rows = array["sizes"][array["dimensions"].index(bitline)]
    if array["imc_type"] != "analog" and rows & (rows - 1):
        raise _Invalid(f"{where}.sizes", f"the bitline dimension {bitline} of a digital IMC array has size {rows}, "
                       "which is not a power of two (its adder tree needs one); use 2, 4, 8, ...")


def _check_imc_cells(memories: dict, weight_bits: int) -> None:
    """An IMC array keeps its weights in a memory called `cells`."""
    cells = memories.get("cells")
    if cells is None:
        raise _Invalid("memories", "an IMC array needs a memory named 'cells' holding the weights "
                       "(operands: [I2], served_dimensions: []); add it")
    if cells["operands"] != ["I2"]:
        raise _Invalid("memories.cells.operands", "IMC cells can only hold weights; set operands: [I2]")
    if cells["served_dimensions"]:
        raise _Invalid("memories.cells.served_dimensions",
                       "IMC cells must be fully unrolled; set served_dimensions: []")
    if cells["size"] % weight_bits:
        raise _Invalid("memories.cells.size", f"{cells['size']} is not a multiple of the weight precision "
                       f"input_precision[1] ({weight_bits}); make it one")
    if cells["size"] > weight_bits:
        raise _Invalid("memories.cells.size", f"{cells['size']} bits hold several weights per multiplier, which "
                       "is not supported (the reference cannot evaluate it either); set it to the weight "
                       f"precision input_precision[1] ({weight_bits})")
    if cells["auto_cost_extraction"] or cells["area"] is None:
        raise _Invalid("memories.cells.area", "the area of one IMC cell group is needed (CACTI extraction "
                       "is not supported for the cells); give area and set auto_cost_extraction: false")


def _check_memory(where: str, memory: dict, oa_dims: list[str]) -> None:
    _check_cost_source(where, memory)
    _check_unique(memory["operands"], f"{where}.operands", "operand")
    _check_unique(memory["served_dimensions"], f"{where}.served_dimensions", "served dimension")
    for i, dim in enumerate(memory["served_dimensions"]):
        if dim not in oa_dims:
            raise _Invalid(f"{where}.served_dimensions[{i}]", f"'{dim}' is not a dimension of the operational "
                           f"array ({', '.join(oa_dims)}); use one of those or remove it")
    names: dict[str, int] = {}
    for i, port in enumerate(memory["ports"]):
        if port["name"] in names:
            raise _Invalid(f"{where}.ports[{i}].name", f"port name '{port['name']}' is already used by "
                           f"ports[{names[port['name']]}] of this memory; give every port of a memory its own name")
        names[port["name"]] = i
        _check_port(f"{where}.ports[{i}]", port, memory["operands"])


def _check_cost_source(where: str, memory: dict) -> None:
    """Costs come either from the file or from CACTI."""
    if memory["auto_cost_extraction"]:
        if memory["size"] % 8:
            raise _Invalid(f"{where}.size", f"{memory['size']} is not a multiple of 8, which CACTI cost "
                           "extraction (auto_cost_extraction: true) needs; round it to whole bytes")
        return
    for key in ("r_cost", "w_cost", "area"):
        if memory[key] is None:
            raise _Invalid(f"{where}.{key}", f"is missing, and is not automatically extracted using CACTI; "
                           f"give {key}, or set auto_cost_extraction: true")


_WRITE_DIRECTIONS = ("fh", "fl")  # written from the higher / lower level
_READ_DIRECTIONS = ("tl", "th")  # read to the lower / higher level


def _check_port(where: str, port: dict, operands: list[str]) -> None:
    for i, entry in enumerate(port["allocation"]):
        operand, direction = entry.split(", ")
        at = f"{where}.allocation[{i}]"
        if operand not in operands:
            raise _Invalid(at, f"operand '{operand}' is not stored in this memory (operands: "
                           f"{', '.join(operands) or 'none'}); add it to operands or remove this allocation")
        if direction in _WRITE_DIRECTIONS and port["type"] == "read":
            raise _Invalid(at, f"direction '{direction}' writes into the memory but port '{port['name']}' "
                           "is a read port; allocate it on a write or read_write port")
        if direction in _READ_DIRECTIONS and port["type"] == "write":
            raise _Invalid(at, f"direction '{direction}' reads from the memory but port '{port['name']}' "
                           "is a write port; allocate it on a read or read_write port")
    if port["bandwidth_min"] > port["bandwidth_max"]:
        raise _Invalid(f"{where}.bandwidth_min", f"({port['bandwidth_min']}) is greater than bandwidth_max "
                       f"({port['bandwidth_max']}); lower bandwidth_min or raise bandwidth_max")


# --------------------------------------------------------------------------------------------
# Workload
# --------------------------------------------------------------------------------------------

OPERATOR_TYPES = ("Max", "Conv", "Pooling", "Add", "Conv_downsample", "Gemm", "Pool", "MaxPool",
                  "AveragePool", "GlobalAveragePool")

# Output `O`, then two one-character input operands; only the last may have empty brackets.
_EQUATION = r"O(?:\[\w+\])+\s*\+?\s*=\s*\w(?:\[\w+\])+\s*[*+]\s*\w(?:\[\w*\])+\s*"
_OPERAND_IN_EQUATION = re.compile(r"(\w)((?:\[\w*\])+)")
# `<data dim> = [<coef> *] <dim> + [<coef> *] <dim>`
_RELATION = r"(\w+)\s*=\s*(?:(\w+)\s*\*\s*)?(\w+)\s*\+\s*(?:(\w+)\s*\*\s*)?(\w+)"

_PRECISION = Field("int", minimum=0, what="bits, a whole number")
_LAYER = Field("dict", what="a layer with id, operator_type, equation, loop_dims, ...", keys={
    "id": Field("int", required=True, what="the layer id, a whole number"),
    "name": Field("str", nullable=True, default=None),
    "operator_type": Field("str", required=True, choices=OPERATOR_TYPES, what=f"one of {', '.join(OPERATOR_TYPES)}"),
    "equation": Field("str", required=True, what="e.g. O[k][oy][ox]+=W[k][c][fy][fx]*I[c][iy][ix]",
                      pattern=_EQUATION,
                      form="'O[..]...+=W[..]...*I[..]...' with one-letter operand names, e.g. "
                           "'O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]'"),
    "dimension_relations": Field("list", default=[], item=Field(
        "str", pattern=_RELATION, form="'<data dim>=<coef>*<dim>+<coef>*<dim>', e.g. 'ix=2*ox+1*fx'")),
    "loop_dims": Field("list", required=True, item=Field("str", upper=True), what="loop dimension names, e.g. [K, C]"),
    "loop_sizes": Field("list", required=True, what="one size per loop dimension, e.g. [64, 32]",
                        item=Field("int", minimum=1, what="a loop size of at least 1")),
    "operand_precision": Field("dict", required=True, what="bits per operand: I, W, O and O_final", keys={
        "I": _PRECISION,
        "W": _PRECISION,
        "O": Field("int", required=True, minimum=0, what="partial-sum precision in bits"),
        "O_final": Field("int", required=True, minimum=0, what="final output precision in bits"),
    }),
    "operand_source": Field("dict", default={}, keys={"W": Field("int"), "I": Field("int")}),
    "pr_loop_dims": Field("list", nullable=True, default=None, item=Field("str", upper=True)),
    "pr_loop_sizes": Field("list", nullable=True, default=None,
                           item=Field("int", minimum=1, what="the total size of this dimension")),
    "padding": Field("list", nullable=True, default=None, item=Field(
        "list", length=2, what="[begin, end]", item=Field("int", minimum=0, what="a padding in elements"))),
})


def validate_workload(data: Any, file: Any) -> list[dict]:
    """Check a workload document (a list of layers, from `file`) and return it normalised."""
    return _run(file, _validate_workload, data)


def _validate_workload(data: Any) -> list[dict]:
    _expect_top(data, "list", "a list of layers, each starting with '- id: <n>'")
    if not data:
        raise _Invalid("top level", "the workload has no layers; add at least one layer ('- id: 0 ...')")
    layers = [_check(raw, _LAYER, _layer_label(i, raw)) for i, raw in enumerate(data)]
    all_ids = {layer["id"] for layer in layers}
    earlier: dict[int, int] = {}
    for i, layer in enumerate(layers):
        where = _layer_label(i, layer)
        if layer["id"] in earlier:
            raise _Invalid(f"{where}.id", f"id {layer['id']} is already used by layer[{earlier[layer['id']]}]; "
                           "give every layer a unique id")
        _check_layer(where, layer)
        _check_operand_sources(where, layer, earlier, all_ids)
        earlier[layer["id"]] = i
    return layers


def _layer_label(index: int, layer: Any) -> str:
    """`layer[3] (id 3, conv2_1)`, with whatever id and name are usable."""
    tags = []
    if isinstance(layer, dict):
        if isinstance(layer.get("id"), int) and not isinstance(layer.get("id"), bool):
            tags.append(f"id {layer['id']}")
        if isinstance(layer.get("name"), str):
            tags.append(layer["name"])
    return f"layer[{index}]" + (f" ({', '.join(tags)})" if tags else "")


def _check_layer(where: str, layer: dict) -> None:
    loop_dims = layer["loop_dims"]
    if len(layer["loop_sizes"]) != len(loop_dims):
        raise _Invalid(f"{where}.loop_sizes", f"has {_entries(len(layer['loop_sizes']))} but loop_dims has "
                       f"{len(loop_dims)}; give one size per loop dimension, in the same order")
    _check_unique(loop_dims, f"{where}.loop_dims", "loop dimension")
    data_dims = _check_relations(where, layer["dimension_relations"], loop_dims)
    _check_equation(where, layer, loop_dims, data_dims)
    for key in ("padding", "pr_loop_sizes"):
        _check_pr_list(where, layer, key)


def _check_relations(where: str, relations: list[str], loop_dims: list[str]) -> list[str]:
    """Return the data dimensions defined by the relations, after checking their terms."""
    data_dims = []
    for i, text in enumerate(relations):
        at = f"{where}.dimension_relations[{i}]"
        match = re.fullmatch(_RELATION, text)
        assert match is not None  # guaranteed by the schema
        target, coef_a, dim_a, coef_b, dim_b = match.groups()
        for coef in (coef_a, coef_b):
            if coef is not None and not (re.fullmatch(r"[0-9]+", coef) and int(coef) > 0):
                raise _Invalid(at, f"coefficient '{coef}' in '{text}' is not a positive whole number; write "
                               "each term as <number>*<dim>, e.g. 'ix=2*ox+1*fx'")
        for dim in (dim_a, dim_b):
            if dim.upper() not in loop_dims:
                raise _Invalid(at, f"'{dim}' in '{text}' is not a loop dimension of this layer "
                               f"({', '.join(loop_dims)}); add it to loop_dims or use one of those")
        data_dims.append(target.upper())
    return data_dims


def _check_equation(where: str, layer: dict, loop_dims: list[str], data_dims: list[str]) -> None:
    """Inputs named I and W with a precision each; every index a loop or data dimension."""
    operands = _OPERAND_IN_EQUATION.findall(layer["equation"])
    inputs = [name for name, _ in operands[1:]]
    if sorted(inputs) != ["I", "W"]:
        raise _Invalid(f"{where}.equation", f"the input operands are {' and '.join(inputs)}, but they must be "
                       "named I and W, e.g. 'O[k]+=W[k][c]*I[c]'; rename them")
    for name, brackets in operands:
        for dim in re.findall(r"\[(\w+)\]", brackets):
            if dim.upper() not in loop_dims and dim.upper() not in data_dims:
                raise _Invalid(f"{where}.equation", f"index '{dim}' of operand {name} is neither a loop dimension "
                               f"({', '.join(loop_dims)}) nor defined by a dimension relation; add it to "
                               "loop_dims and loop_sizes, or define it in dimension_relations")
    for name in inputs:
        if name not in layer["operand_precision"]:
            raise _Invalid(f"{where}.operand_precision", f"has no precision for input operand {name} of the "
                           f"equation; add {name}: <bits>")


def _check_pr_list(where: str, layer: dict, key: str) -> None:
    """`padding` and `pr_loop_sizes` give one entry per `pr_loop_dims` entry."""
    values, pr_dims = layer[key], layer["pr_loop_dims"]
    if values is None:
        return
    if pr_dims is None:
        raise _Invalid(f"{where}.{key}", f"{key} needs pr_loop_dims (the partially relevant dimensions it "
                       f"applies to, e.g. [IX, IY]); add pr_loop_dims or remove {key}")
    if len(values) != len(pr_dims):
        raise _Invalid(f"{where}.{key}", f"has {_entries(len(values))} but pr_loop_dims has {len(pr_dims)}; "
                       "give one entry per pr_loop_dims entry")


def _check_operand_sources(where: str, layer: dict, earlier: dict[int, int], all_ids: set[int]) -> None:
    """Each source is the layer itself (a constant operand) or an earlier layer."""
    own = layer["id"]
    for operand, source in layer["operand_source"].items():
        if source == own or source in earlier:
            continue
        at = f"{where}.operand_source.{operand}"
        fix = f"use the id of an earlier layer, or this layer's own id ({own}) for a constant operand"
        if source in all_ids:
            raise _Invalid(at, f"layer id {source} comes later in the file, but a layer can only read from "
                           f"layers listed before it; {fix}")
        raise _Invalid(at, f"there is no layer with id {source}; {fix}")


# --------------------------------------------------------------------------------------------
# Mapping
# --------------------------------------------------------------------------------------------

_MAPPING_OA_DIMS = ("D1", "D2", "D3", "D4")
_UNROLLINGS = Field("list", what="a list of unrollings, e.g. ['K, 32']",
                    item=Field("str", pattern=r"[A-Z]+\d*, \d+", form=_UNROLLING_FORM))
_HINTS = Field("list", what="a list of layer dimensions, e.g. [K, C]", item=Field(
    "str", pattern=r"[A-Z]+\d*", form="an upper-case layer dimension name, e.g. 'K' or 'D0'"))
_DEFAULT_LINKS = {"O": "O", "I": "I1", "W": "I2"}

_MAPPING_ENTRY = Field("dict", what="an entry with name and optional spatial_mapping, ...", keys={
    "name": Field("str", required=True, what="a layer name, an operator type or 'default'"),
    "spatial_mapping": Field("dict", nullable=True, default=None,
                             keys={dim: _UNROLLINGS for dim in _MAPPING_OA_DIMS}),
    "memory_operand_links": Field("dict", default=_DEFAULT_LINKS, keys={
        operand: Field("str", required=True, what="the memory operand it is stored as: I1, I2 or O")
        for operand in ("O", "W", "I")
    }),
    "spatial_mapping_hint": Field("dict", default={}, keys={dim: _HINTS for dim in _MAPPING_OA_DIMS}),
    "temporal_ordering": Field("list", default=[], item=Field("list", what="[<layer dim>, <size or '*'>]", items=(
        Field("str", upper=True),
        Field("int", minimum=1, star=True, what="a loop size of at least 1, or '*'"),
    ))),
})


def validate_mapping(data: Any, file: Any) -> list[dict]:
    """Check a mapping document (a list of entries, from `file`) and return it normalised."""
    return _run(file, _validate_mapping, data)


def _validate_mapping(data: Any) -> list[dict]:
    _expect_top(data, "list", "a list of mapping entries, each starting with '- name: <layer name, "
                "operator type or default>'")
    entries = [_check(raw, _MAPPING_ENTRY, _entry_label(i, raw)) for i, raw in enumerate(data)]
    if not any(entry["name"] == "default" for entry in entries):
        raise _Invalid("top level", "no entry is named 'default'; add an entry '- name: default' (used for "
                       "every layer without an entry of its own)")
    for i, entry in enumerate(entries):
        _check_entry(_entry_label(i, entry), entry)
    return entries


def _entry_label(index: int, entry: Any) -> str:
    """`mapping entry 'default'`, or `mapping entry [2]` when the name is unusable."""
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"mapping entry '{name}'" if isinstance(name, str) else f"mapping entry [{index}]"


def _check_entry(where: str, entry: dict) -> None:
    for oa_dim, unrollings in (entry["spatial_mapping"] or {}).items():
        for i, text in enumerate(unrollings):
            if int(text.split(", ")[1]) < 1:
                raise _Invalid(f"{where}.spatial_mapping.{oa_dim}[{i}]", f"unrolling '{text}' has size 0; "
                               "give a size of at least 1 or remove the entry")
    linked: dict[str, str] = {}
    for layer_operand, memory_operand in entry["memory_operand_links"].items():
        if memory_operand in linked:
            raise _Invalid(f"{where}.memory_operand_links.{layer_operand}", f"memory operand '{memory_operand}' "
                           f"is already linked to {linked[memory_operand]}; link each layer operand to a "
                           "different memory operand")
        linked[memory_operand] = layer_operand


def check_mapping_fits_accelerator(mapping: list[dict], accelerator: dict, mapping_file: Any) -> None:
    """Check a normalised mapping against a normalised accelerator.

    Every `spatial_mapping` key must be an OA dimension of the accelerator and every memory operand
    in `memory_operand_links` must be stored by one of its memories. Hints are not checked: hints for
    missing OA dimensions are ignored later.
    """
    oa_dims = accelerator["operational_array"]["dimensions"]
    stored = sorted({op for memory in accelerator["memories"].values() for op in memory["operands"]})
    name = accelerator["name"]
    for i, entry in enumerate(mapping):
        where = _entry_label(i, entry)
        for oa_dim in entry["spatial_mapping"] or {}:
            if oa_dim not in oa_dims:
                raise InputError(mapping_file, f"{where}.spatial_mapping.{oa_dim}", f"accelerator '{name}' has no "
                                 f"OA dimension {oa_dim} (it has {', '.join(oa_dims)}); remove this unrolling "
                                 "or move it to one of those dimensions")
        for layer_operand, memory_operand in entry["memory_operand_links"].items():
            if memory_operand not in stored:
                raise InputError(mapping_file, f"{where}.memory_operand_links.{layer_operand}",
                                 f"memory operand '{memory_operand}' is not stored by any memory of accelerator "
                                 f"'{name}' (stored: {', '.join(stored)}); link {layer_operand} to one of those")
