"""The LLM-class example accelerators (inputs/README.md): each validates, and holds the public
figures its header cites (array, on-chip memory, DRAM bandwidth per cycle at its clock, capacity).
They run Llama-3-8B decode in docs/tutorials/llm-accelerators.md (run by the docs examples test)."""

from __future__ import annotations

import pytest

from support import REPO
from zigzag.io.loaders import load_accelerator, load_mapping
from zigzag.multicore.topology import load_multicore_accelerator

GIB_BITS = 8 * 2**30
MIB_BITS = 8 * 2**20


@pytest.mark.parametrize(
    "name, macs, onchip_mib, dram_gbs, clock_ghz, dram_gib",
    [
        ("flow_llm_tpu_v5e", 4 * 128 * 128, 48, 819, 1.5, 16),
        ("flow_llm_edge_npu_lpddr5x", 128 * 128, 8, 8533e6 * 64 / 8 / 1e9, 1.0, 16),
    ],
)
def test_single_core_examples(name, macs, onchip_mib, dram_gbs, clock_ghz, dram_gib):
    accelerator = load_accelerator(REPO / "inputs" / "hardware" / f"{name}.yaml")
    assert load_mapping(REPO / "inputs" / "mapping" / f"{name}.yaml")
    assert accelerator.operational_array.total_units == macs
    memories = {m.name: m for m in accelerator.memories}
    assert memories["unified_buffer"].size == onchip_mib * MIB_BITS
    dram = memories["dram"]
    assert dram.size == dram_gib * GIB_BITS
    # the port's bits per cycle at the file's clock: the public bandwidth, to the bit
    assert dram.bandwidth_max("I2", "tl") == pytest.approx(dram_gbs * 8 / clock_ghz, abs=1)
    # the DRAM energy per bit the header cites (HBM2 3.9, LPDDR5X 5 pJ/bit)
    per_bit = dram.r_cost / dram.bandwidth_max("I2", "tl")
    assert per_bit == pytest.approx(3.9 if "tpu" in name else 5.0, rel=0.01)


def test_the_hbm_mesh():
    mesh = load_multicore_accelerator(REPO / "inputs" / "stream" / "hardware" / "hbm_mesh_llm.yaml")
    arrays = [c.accelerator for c in mesh.compute_cores if c.name == "mxu_128x128"]
    assert [a.operational_array.total_units for a in arrays] == [128 * 128] * 4  # the four MXUs
    assert sum(m.size for a in arrays for m in a.memories if m.name == "sram") == 48 * MIB_BITS
    dram = next(m for m in mesh.core(mesh.offchip_core_id).accelerator.memories if m.name == "dram")
    assert dram.size == 16 * GIB_BITS
    assert dram.bandwidth_max("I2", "tl") == 4368  # 819 GB/s at the mesh's 1.5 GHz
