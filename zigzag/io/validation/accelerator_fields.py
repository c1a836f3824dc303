"""The fields of an accelerator YAML document in the schema language of
:mod:`zigzag.io.validation.schema`: memories and their ports, the operational array, dataflows,
the vector unit (what each field may hold; the rules across fields are in
:mod:`zigzag.io.validation.accelerator` and :mod:`zigzag.io.validation.memories`)."""

from __future__ import annotations

from dataclasses import replace

from zigzag.hardware.memory_costs.tables import INTERPOLATIONS
from zigzag.io.validation.schema import UNROLLING_FORM, Field

__all__ = ["ACCELERATOR", "MEMORY"]


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

#: one memory (also a register of the vector unit)
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

#: a whole accelerator document
ACCELERATOR = Field(
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
