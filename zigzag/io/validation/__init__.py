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
                           "adc_resolution": 0, "bit_serial_precision": None},
     "area_unit": None}

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
given (no CACTI or memory table for the cells); per layer: `loop_dims` and `loop_sizes` of equal length, no
duplicate loop dims, the equation's inputs named I and W with a precision each, every equation index
a loop dim or a relation's data dim, relation coefficients positive whole numbers and relation dims
loop dims, `padding`/`pr_loop_sizes` only with `pr_loop_dims`; unique layer ids; `operand_source`
only pointing to the layer itself or an earlier layer; the workload not empty; in a mapping entry no
memory operand linked twice. A mapping's keys must exist in the accelerator only for
`spatial_mapping` (`check_mapping_fits_accelerator`): hints for OA dimensions the accelerator lacks
are accepted and ignored.

Validation only checks: the costs of memories with ``auto_cost_extraction`` or a ``cost_table``
stay null here and are filled in by ``zigzag.io.memory_costs`` when a file is loaded.

One module per input format (``accelerator``, ``workload``, ``mapping``), all written in the
small schema language of ``schema``.
"""

from __future__ import annotations

from zigzag.io.validation.accelerator import validate_accelerator
from zigzag.io.validation.mapping import (
    check_mapping_fits_accelerator,
    oversized_unrollings,
    validate_mapping,
)
from zigzag.io.validation.workload import validate_workload

__all__ = [
    "validate_accelerator",
    "validate_workload",
    "validate_mapping",
    "check_mapping_fits_accelerator",
    "oversized_unrollings",
]
