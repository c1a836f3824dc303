"""What CACTI 7 is asked about a memory (its input file) and what it answers (its CSV output).

The settings follow ZigZag's use of CACTI, so that extracted figures equal ZigZag's: a UCA with one
bank, one exclusive read and one exclusive write port, no read-write port, 22 nm, a block as many
bytes as the bus has bits, optimised for cycle time within 20 % of the best delay (ED^2).
See docs/reference/memory-costs.md.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

#: the technology node CACTI is run at, in micrometres
TECHNOLOGY_UM = 0.022
#: an ``rf`` memory is costed as an SRAM this many times larger (ZigZag's rule)
RF_SIZE_FACTOR = 128

# Settings common to every run: one "-key value" line each, as CACTI's parser expects them.
_COMMON_SETTINGS = """\
-Array Power Gating - "false"
-WL Power Gating - "false"
-CL Power Gating - "false"
-Bitline floating - "false"
-Interconnect Power Gating - "false"
-Power Gating Performance Loss 0.01
-page size (bits) 8192
-burst length 8
-internal prefetch width 8
-Data array cell type - "itrs-hp"
-Data array peripheral type - "itrs-hp"
-Tag array cell type - "itrs-hp"
-Tag array peripheral type - "itrs-hp"
-operating temperature (K) 360
-tag size (b) "default"
-access mode (normal, sequential, fast) - "normal"
-design objective (weight delay, dynamic power, leakage power, cycle time, area) 0:0:0:100:0
-deviate (delay, dynamic power, leakage power, cycle time, area) 20:100000:100000:100000:100000
-NUCAdesign objective (weight delay, dynamic power, leakage power, cycle time, area) 100:100:0:0:100
-NUCAdeviate (delay, dynamic power, leakage power, cycle time, area) 10:10000:10000:10000:10000
-Optimize ED or ED^2 (ED, ED^2, NONE): "ED^2"
-Cache model (NUCA, UCA)  - "UCA"
-NUCA bank count 0
-Wire signaling (fullswing, lowswing, default) - "Global_30"
-Wire inside mat - "semi-global"
-Wire outside mat - "semi-global"
-Interconnect projection - "conservative"
-Core count 8
-Cache level (L2/L3) - "L3"
-Add ECC - "true"
-Print level (DETAILED, CONCISE) - "CONCISE"
-Print input parameters - "false"
-Force cache config - "false"
-Ndwl 1
-Ndbl 1
-Nspd 0
-Ndcm 1
-Ndsam1 0
-Ndsam2 0
-dram_type "DDR3"
-io state "WRITE"
-addr_timing 1.0
-mem_density 4 Gb
-bus_freq 800 MHz
-duty_cycle 1.0
-activity_dq 1.0
-activity_ca 0.5
-num_dq 72
-num_dqs 18
-num_ca 25
-num_clk 2
-num_mem_dq 2
-mem_data_width 8
-rtt_value 10000
-ron_value 34
-num_bobs 1
-capacity 80
-num_channels_per_bob 1
-first metric "Cost"
-second metric "Bandwidth"
-third metric "Energy"
-DIMM model "ALL"
-mirror_in_bob "F"
"""


@dataclass(frozen=True)
class CactiRequest:
    """One CACTI run: a memory of ``size_bytes`` with a ``bus_width`` (bits) data bus."""

    size_bytes: int
    bus_width: int
    cache_type: str  # CACTI's "ram" or "main memory"
    technology_um: float = TECHNOLOGY_UM
    read_ports: int = 1
    write_ports: int = 1
    read_write_ports: int = 0
    banks: int = 1

    def config_text(self) -> str:
        """CACTI's input file for this run (also the key of its cached result)."""
        return _COMMON_SETTINGS + (
            f"-size (bytes) {self.size_bytes}\n"
            f"-block size (bytes) {self.bus_width}\n"
            f"-output/input bus width {self.bus_width}\n"
            "-associativity 1\n"
            f"-read-write port {self.read_write_ports}\n"
            f"-exclusive read port {self.read_ports}\n"
            f"-exclusive write port {self.write_ports}\n"
            "-single ended read ports 0\n"
            f"-UCA bank count {self.banks}\n"
            f"-technology (u) {self.technology_um}\n"
            f'-cache type "{self.cache_type}"\n'
        )

    def describe(self) -> str:
        """A short human-readable form, for notes and messages."""
        return (
            f'CACTI 7 "{self.cache_type}" of {self.size_bytes} B, {self.bus_width}-bit bus, '
            f"{self.read_ports}R+{self.write_ports}W+{self.read_write_ports}RW ports, "
            f"{self.banks} bank, {self.technology_um * 1000:g} nm"
        )


@dataclass(frozen=True)
class CactiFigures:
    """CACTI's answer: dynamic energy per read and per write access (nJ) and area (mm²)."""

    read_energy_nj: float
    write_energy_nj: float
    area_mm2: float

    @property
    def r_cost(self) -> float:
        """Energy per read access in pJ."""
        return self.read_energy_nj * 1000

    @property
    def w_cost(self) -> float:
        """Energy per write access in pJ."""
        return self.write_energy_nj * 1000


#: CACTI reads the size as a 32-bit number of bytes
_MAX_BYTES = 2**32 - 1


class CactiInputProblem(ValueError):
    """A memory CACTI cannot be asked about; ``field`` is the memory's field at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def request_for_memory(size_bits: int, mem_type: str, ports: list[dict]) -> CactiRequest:
    """The CACTI run ZigZag makes for a memory of the accelerator file: the bus width is the
    ``bandwidth_max`` of the first read port, else of the first read_write port; the declared port
    counts are not passed on; ``rf`` is costed as a 128 times larger SRAM, ``sram`` as CACTI's "ram",
    any other type as "main memory"."""
    widths = [
        p["bandwidth_max"] for kind in ("read", "read_write") for p in ports if p["type"] == kind
    ]
    if not widths:
        raise CactiInputProblem(
            "ports",
            "has no read or read_write port, whose bandwidth_max CACTI takes as "
            "the bus width; add one",
        )
    if mem_type == "rf":
        size_bits, mem_type = size_bits * RF_SIZE_FACTOR, "sram"
    if size_bits // 8 > _MAX_BYTES:
        raise CactiInputProblem(
            "size",
            f"is {size_bits // 8} bytes as CACTI would model it, more than the "
            f"{_MAX_BYTES} it can read; give r_cost, w_cost and area and set "
            "auto_cost_extraction: false",
        )
    cache_type = "ram" if mem_type == "sram" else "main memory"
    return CactiRequest(size_bytes=size_bits // 8, bus_width=widths[0], cache_type=cache_type)


#: the output columns read (CACTI writes them with a leading space)
_READ_ENERGY, _WRITE_ENERGY, _AREA = (
    "Dynamic read energy (nJ)",
    "Dynamic write energy (nJ)",
    "Area (mm2)",
)


def parse_output(text: str) -> CactiFigures:
    """The figures in CACTI's CSV output (``<input>.out``: a header line, then one line per run)."""
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        raise ValueError("CACTI wrote no result line")
    header = [name.strip() for name in rows[0]]
    values = rows[-1]
    try:
        return CactiFigures(
            *(float(values[header.index(n)]) for n in (_READ_ENERGY, _WRITE_ENERGY, _AREA))
        )
    except (ValueError, IndexError) as exc:
        raise ValueError(f"CACTI's output could not be read ({exc})") from None
