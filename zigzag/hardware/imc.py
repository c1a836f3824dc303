"""In-memory-computing (IMC) arrays: SRAM macros whose cells hold the weights and compute.

An IMC array replaces the digital MAC array (``OperationalArray``) of an accelerator. Its
dimensions are read by name order (docs/models/imc.md#array-geometry): the first is the *wordline* dimension
(``R`` columns, one per output channel with the default mapping), the second the *bitline*
dimension (``C`` rows, the reduction), the product of the others the number of macros (banks).
Every column has ``P_w`` one-bit multiplier slices; a bitline sums its ``C`` rows either in
the analog domain followed by an ADC (AIMC) or through a digital adder tree (DIMC).
Activations are fed ``b`` bits per cycle, so one full-precision operation takes
``P_a / b`` cycles (the cost model's *cycles per operation*).

Figures here depend only on the array, not on a layer: area (docs/models/imc.md#area), clock period (docs/models/imc.md#clock-period) and the
peak figures (docs/models/imc.md#peak-figures), each with its breakdown. The energy of one layer is in
``zigzag.cost.imc``. Units: pJ, ns, mm², bits. Floating-point operations are written in the
reference's order so that results agree to the last bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

#: Components of the area and clock-period breakdowns, in summation order.
AREA_PARTS = ("cells", "dacs", "adcs", "mults", "adders_regular", "adders_pv", "accumulators")
#: Components of the array energy (peak and per layer), in summation order.
ENERGY_PARTS = (
    "local_bl_precharging",
    "dacs",
    "adcs",
    "mults",
    "analog_bl_addition",
    "adders_regular",
    "adders_pv",
    "accumulators",
)

# 28 nm technology constants (docs/models/imc.md#technology-constants): capacitances in pF, areas in mm², delays in ns.
VDD = 0.9
ND2_CAP = 0.7 / 1e3
BL_CAP = 0.7 / 2 / 1e3  # bitline capacitance of one cell
XOR2_CAP = 0.7 * 1.5 / 1e3
DFF_CAP = 0.7 * 3 / 1e3
ND2_AREA = 0.614 / 1e6
XOR2_AREA = 0.614 * 2.4 / 1e6
DFF_AREA = 0.614 * 6 / 1e6
ND2_DLY = 0.0478
XOR2_DLY = 0.0478 * 2.4

V2 = VDD**2
#: one-bit primitives: full adder (FA = 3 NAND2 + 2 XOR2), FA with one input at zero (no carry
#: activity), multiplier (one NOR ~ NAND2, halved: the weight input is constant), register.
FA_ENERGY = (3 * ND2_CAP + 2 * XOR2_CAP) * V2
FA_HALF_ENERGY = (2 * XOR2_CAP) * V2
MUL_ENERGY = 0.5 * ND2_CAP * V2
DFF_ENERGY = DFF_CAP * V2
FA_AREA = 3 * ND2_AREA + 2 * XOR2_AREA
MUL_AREA = ND2_AREA
FA_IN_TO_SUM = 2 * XOR2_DLY
FA_IN_TO_CARRY = XOR2_DLY + 2 * ND2_DLY
FA_CARRY_TO_CARRY = 2 * ND2_DLY
MUL_DELAY = ND2_DLY


class Converter(NamedTuple):
    """Cost of one data converter (ADC or DAC)."""

    area: float
    delay: float
    energy: float


@dataclass(frozen=True)
class ImcArray:
    """An analog (AIMC) or digital (DIMC) in-SRAM-computing array (docs/models/imc.md#array-geometry).

    ``cells_size`` / ``cells_area``: bits and area (mm²) of one cell group, i.e. of the memory
    ``cells`` (one group per multiplier position).
    """

    dimensions: dict[str, int]
    analog: bool
    activation_precision: int
    weight_precision: int
    bit_serial_precision: int
    adc_resolution: float
    cells_size: int
    cells_area: float

    is_imc = True
    unit_energy = None  # the energy per MAC comes from the array model instead
    unit_area = None

    # ----- geometry ---------------------------------------------------------------------------
    @property
    def total_units(self) -> int:
        return math.prod(self.dimensions.values())

    @property
    def wordline_dim(self) -> str:
        return sorted(self.dimensions)[0]

    @property
    def bitline_dim(self) -> str:
        return sorted(self.dimensions)[1]

    @property
    def columns(self) -> int:
        """R: size of the wordline dimension."""
        return self.dimensions[self.wordline_dim]

    @property
    def rows(self) -> int:
        """C: size of the bitline dimension (inputs of one bitline adder)."""
        return self.dimensions[self.bitline_dim]

    @property
    def banks(self) -> int:
        return math.prod(self.dimensions[d] for d in sorted(self.dimensions)[2:])

    @property
    def cycles_per_op(self) -> float:
        """Bit-serial cycles per full-precision operation, ``P_a / b``."""
        return self.activation_precision / self.bit_serial_precision

    @property
    def imc_type(self) -> str:
        return "analog" if self.analog else "digital"

    # ----- converters (docs/models/imc.md#converters) ----------------------------------------------------------------------
    @cached_property
    def adc(self) -> Converter:
        r = self.adc_resolution
        area = 0 if r in (0, 1) else 10 ** (-0.0369 * r + 1.206) * 2**r * (10**-6)
        delay = 0 if r == 0 else r * (0.00653 * self.rows + 0.640)
        energy = 0 if r == 0 else ((100 * r + 0.001 * 4**r) * V2) / 1000  # fJ -> pJ
        return Converter(area, delay, energy)

    @cached_property
    def dac(self) -> Converter:
        b = self.bit_serial_precision
        return Converter(0, 0, 0 if b == 1 else 50e-3 * b * V2)

    # ----- adder trees (docs/models/imc.md#area) ---------------------------------------------------------------------
    @property
    def regular_tree_depth(self) -> int:
        """DIMC: depth of the adder tree summing one bitline."""
        return int(math.log2(self.rows))

    @property
    def regular_tree_output_precision(self) -> int:
        """DIMC: ``P_w + log2(C)``; 0 for AIMC (no such tree)."""
        return 0 if self.analog else self.weight_precision + self.regular_tree_depth

    @property
    def regular_tree_adders(self) -> int:
        """DIMC: one-bit full adders in one bitline adder tree."""
        p, depth = self.weight_precision, self.regular_tree_depth
        return self.rows * (p + 1) - (p + depth + 1)

    @property
    def place_value_inputs(self) -> int:
        """Inputs of the tree combining partial products by place value: one per weight bit
        (AIMC, after the ADCs) or one per serial input bit (DIMC)."""
        return self.weight_precision if self.analog else self.bit_serial_precision

    @property
    def place_value_input_precision(self):
        return self.adc_resolution if self.analog else self.regular_tree_output_precision

    @property
    def place_value_adders(self) -> float:
        """One-bit full adders in one place-value tree (0 with a single input)."""
        n = self.place_value_inputs
        if n == 1:
            return 0
        return self.place_value_input_precision * (n - 1) + n * (math.log2(n) - 0.5)

    @property
    def place_value_output_precision(self):
        """``n + p`` as the reference computes it, ``p`` with a single input."""
        n = self.place_value_inputs
        return self.place_value_input_precision if n == 1 else n + self.place_value_input_precision

    @property
    def has_accumulator(self) -> bool:
        """Bit-serial inputs need a shift-accumulator; fully parallel ones do not."""
        return self.bit_serial_precision != self.activation_precision

    @property
    def accumulator_precision(self):
        """Output bits of the accumulator (a float for DIMC)."""
        if self.analog:
            return self.activation_precision + self.adc_resolution + self.weight_precision
        return self.activation_precision + math.log2(self.rows) + self.weight_precision

    @property
    def multipliers(self) -> int:
        """One-bit multipliers of the whole array."""
        count = self.weight_precision * self.columns * self.rows * self.banks
        return count if self.analog else self.bit_serial_precision * count

    # ----- area (docs/models/imc.md#area) ----------------------------------------------------------------------------
    def _adder_figures(self, full_adder: float, flip_flop: float) -> tuple[float, float, float]:
        """Regular adder trees, place-value adders and accumulators of the whole array, counted
        in full adders (and flip-flops) weighted by ``full_adder`` / ``flip_flop``: an area or
        an energy per cell."""
        regular = 0
        if not self.analog:
            regular = (
                full_adder
                * self.regular_tree_adders
                * (self.bit_serial_precision * self.columns * self.banks)
            )
        accumulators = 0
        if self.has_accumulator:
            bits = self.accumulator_precision * self.columns * self.banks
            accumulators = full_adder * bits + flip_flop * bits
        return (
            regular,
            full_adder * self.place_value_adders * (self.columns * self.banks),
            accumulators,
        )

    @cached_property
    def area_breakdown(self) -> dict[str, float]:
        regular, place_value, accumulators = self._adder_figures(FA_AREA, DFF_AREA)
        return {
            "cells": self.total_units * self.cells_area,
            "dacs": self.dac.area * self.rows * self.banks if self.analog else 0,
            "adcs": self.adc.area * self.weight_precision * self.columns * self.banks
            if self.analog
            else 0,
            "mults": MUL_AREA * self.multipliers,
            "adders_regular": regular,
            "adders_pv": place_value,
            "accumulators": accumulators,
        }

    @cached_property
    def area(self) -> float:
        return sum(self.area_breakdown[part] for part in AREA_PARTS)

    @property
    def total_area(self) -> float:
        return self.area

    # ----- clock period (docs/models/imc.md#clock-period) --------------------------------------------------------------------
    @cached_property
    def tclk_breakdown(self) -> dict[str, float]:
        """Delays along the critical path DAC -> multiplier -> ADC -> adder trees -> accumulator."""
        regular = 0
        if not self.analog:
            regular = (
                (self.regular_tree_depth - 1) * FA_IN_TO_SUM
                + FA_IN_TO_CARRY
                + (self.regular_tree_output_precision - 1 - 1) * FA_CARRY_TO_CARRY
            )
        n, p = self.place_value_inputs, self.place_value_input_precision
        place_value = 0
        if n != 1:
            place_value = (
                (int(math.log2(n)) - 1) * FA_IN_TO_SUM
                + FA_IN_TO_CARRY
                + (self.place_value_output_precision - p - 1) * FA_CARRY_TO_CARRY
            )
        accumulator = 0
        if self.has_accumulator:
            carries = self.accumulator_precision - self.place_value_output_precision - 1
            accumulator = FA_IN_TO_CARRY + carries * FA_CARRY_TO_CARRY
        return {
            "cells": 0,
            "dacs": self.dac.delay if self.analog else 0,
            "adcs": self.adc.delay if self.analog else 0,
            "mults": MUL_DELAY,
            "adders_regular": regular,
            "adders_pv": place_value,
            "accumulators": accumulator,
        }

    @cached_property
    def tclk(self) -> float:
        """Clock period in ns."""
        return sum(self.tclk_breakdown[part] for part in AREA_PARTS)

    # ----- peak figures (docs/models/imc.md#peak-figures, informational) -----------------------------------------------------
    @cached_property
    def peak_energy_breakdown(self) -> dict[str, float]:
        """Energy of one cycle of the whole array at full utilisation (pJ)."""
        regular, place_value, accumulators = self._adder_figures(FA_ENERGY, DFF_ENERGY)
        bitlines = 0
        if self.analog:
            bitlines = (BL_CAP * V2 * self.weight_precision) * self.columns * self.rows * self.banks
        return {
            "local_bl_precharging": 0,
            "dacs": self.dac.energy * self.rows * self.banks if self.analog else 0,
            "adcs": self.adc.energy * self.weight_precision * self.columns * self.banks
            if self.analog
            else 0,
            "mults": MUL_ENERGY * self.multipliers,
            "analog_bl_addition": bitlines,
            "adders_regular": regular,
            "adders_pv": place_value,
            "accumulators": accumulators,
        }

    @property
    def peak_macs_per_cycle(self) -> float:
        return self.columns * self.rows / self.cycles_per_op * self.banks

    @property
    def peak_tops(self) -> float:
        return self.peak_macs_per_cycle * 2 / self.tclk / 1000

    @property
    def peak_tops_per_watt(self) -> float:
        return (
            self.peak_macs_per_cycle * 2 / sum(self.peak_energy_breakdown[p] for p in ENERGY_PARTS)
        )

    @property
    def peak_tops_per_mm2(self) -> float:
        return self.peak_tops / self.area
