"""Stream 2.x multi-core accelerator files read into our multi-core model (zigzag.io.stream2_hardware)."""

from __future__ import annotations

import shutil

import pytest
import yaml
from support import DATA

from zigzag.errors import InputError
from zigzag.multicore.topology import load_multicore_accelerator

HARDWARE = DATA / "stream2" / "hardware"
SHIPPED = sorted(p.name for p in HARDWARE.glob("*.yaml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_file_reads(name):
    accelerator = load_multicore_accelerator(HARDWARE / name)
    raw = yaml.safe_load((HARDWARE / name).read_text())
    assert len(accelerator.cores) == len(raw["cores"])
    assert accelerator.offchip_core_id == len(raw["cores"]) - 1
    assert accelerator.offchip_core.kind == "offchip"


def test_quad_core_types_coordinates_and_links():
    accelerator = load_multicore_accelerator(HARDWARE / "tpu_like_quad_core.yaml")
    assert accelerator.core(4).operator_types == (
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "GlobalMaxPool",
    )
    assert accelerator.core(0).operator_types is None  # no operator_types: runs any operator
    assert accelerator.coordinates[2] == (1, 1)
    # the bus listed last joins every on-chip core (it replaces the pair links, as in 2.x);
    # the DRAM is reached over our off-chip link
    assert accelerator.hops(0, 2) == 1
    assert accelerator.link(0, 6) is accelerator.link(1, 6)


def test_memory_sharing_with_a_memory_core():
    accelerator = load_multicore_accelerator(HARDWARE / "tpu_v7_ironwood.yaml")
    assert accelerator.core(3).kind == "memory"
    shared = {accelerator.core(c).top_memories for c in (0, 1, 2, 3)}
    assert len(shared) == 1  # one physical VMEM per TensorCore
    assert accelerator.core(0).top_memories != accelerator.core(4).top_memories


def test_offchip_core_not_last_is_renumbered(tmp_path):
    shutil.copytree(HARDWARE / "cores", tmp_path / "cores")
    (tmp_path / "hw.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "x",
                "cores": {0: "offchip.yaml", 1: "tpu_like.yaml", 2: "tpu_like.yaml"},
                "offchip_core_id": 0,
                "core_connectivity": [{"type": "link", "cores": [1, 2], "bandwidth": 32}],
            }
        )
    )
    accelerator = load_multicore_accelerator(tmp_path / "hw.yaml")
    assert accelerator.offchip_core_id == 2
    assert [c.name for c in accelerator.cores] == ["tpu_like", "tpu_like", "offchip"]
    assert accelerator.document["stream2"]["core_ids"] == {"1": 0, "2": 1, "0": 2}


def _edited(tmp_path, change):
    shutil.copytree(HARDWARE / "cores", tmp_path / "cores")
    data = yaml.safe_load((HARDWARE / "eyeriss_like_dual_core.yaml").read_text())
    change(data)
    (tmp_path / "hw.yaml").write_text(yaml.safe_dump(data))
    return tmp_path / "hw.yaml"


def test_aie_file_is_one_line():
    with pytest.raises(InputError, match="AIE back-end, which is not supported") as error:
        load_multicore_accelerator(DATA / "stream2" / "aie" / "single_core.yaml")
    assert "\n" not in str(error.value)


def test_top_level_typo_gets_did_you_mean(tmp_path):
    path = _edited(tmp_path, lambda d: d.update(core_coordinate={0: [0, 0]}))
    with pytest.raises(InputError, match="did you mean 'core_coordinates'"):
        load_multicore_accelerator(path)


def test_core_type_typo_gets_did_you_mean(tmp_path):
    path = _edited(tmp_path, lambda d: None)
    core = yaml.safe_load((tmp_path / "cores" / "pooling.yaml").read_text())
    core["type"] = "zigzag.compte"
    (tmp_path / "cores" / "pooling.yaml").write_text(yaml.safe_dump(core))
    with pytest.raises(InputError, match="did you mean 'zigzag.compute'"):
        load_multicore_accelerator(path)


def test_core_key_typo_gets_did_you_mean(tmp_path):
    path = _edited(tmp_path, lambda d: None)
    core = yaml.safe_load((tmp_path / "cores" / "simd.yaml").read_text())
    core["operator_type"] = core.pop("operator_types")
    (tmp_path / "cores" / "simd.yaml").write_text(yaml.safe_dump(core))
    with pytest.raises(InputError, match="did you mean 'operator_types'"):
        load_multicore_accelerator(path)


def test_missing_bandwidth_is_named(tmp_path):
    def drop(d):
        del d["core_connectivity"][0]["bandwidth"]

    with pytest.raises(InputError, match=r"core_connectivity\[0\].bandwidth"):
        load_multicore_accelerator(_edited(tmp_path, drop))


def test_mesh_from_coordinates(tmp_path):
    def mesh(d):
        d.pop("core_connectivity")
        d["bandwidth"] = 64
        d["core_coordinates"] = {0: [0, 0], 1: [1, 0], 2: [0, 1], 3: [1, 1], 4: [5, 5]}

    accelerator = load_multicore_accelerator(_edited(tmp_path, mesh))
    assert accelerator.hops(0, 1) == 1 and accelerator.hops(0, 2) == 1
    assert accelerator.hops(0, 3) == 2
    assert accelerator.link(0, 1).bandwidth == 64
