"""An innermost memory holding less than one element of an operand unrolled on the array dims it
serves: the capacity step cut a spatial factor to 0 and the search divided by it (a traceback);
now one line naming the memory's size and the fix. Precision is known per layer only, so the line
comes from the search and names the layer."""

from __future__ import annotations

import logging
import shutil

import pytest
import yaml

from support import DATA
from support.bad_inputs import SMALL, TPU, TPU_MAPPING
from zigzag.cli import main
from zigzag.errors import InputError, MappingError, MemoryTooSmall
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import limit_to_capacity

LINE = (
    "accelerator 'tpu_like': memories.rf_128B.size: memory 'rf_128B' holds 4 bits, less than one "
    "8-bit W element of layer 'conv_a'; make it at least 8 bits"
)


def tiny_weight_register(tmp_path, bits: int = 4) -> str:
    """tpu_like with its weight register cut to ``bits`` bits and serving D1, where the mapping
    unrolls K (a weight dim) 32 times."""
    data = yaml.safe_load(open(TPU).read())
    data["memories"]["rf_128B"].update(size=bits, served_dimensions=["D1"])
    path = tmp_path / f"tiny_{bits}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_the_search_names_the_memory_and_the_layer(tmp_path):
    layers, accelerator = load_inputs(str(SMALL), tiny_weight_register(tmp_path), TPU_MAPPING)
    with pytest.raises(InputError) as info:
        search_layer(layers.layers[0], accelerator, SearchOptions(), show_progress=False)
    assert str(info.value) == LINE
    assert info.value.where == "memories.rf_128B.size"
    # also a MappingError: the multi-core mapping drops such a core for the layer
    assert isinstance(info.value, MappingError) and isinstance(info.value, MemoryTooSmall)


def test_zigzag_run_prints_one_line(tmp_path, capsys, caplog):
    """The error line, and before it no warning of a spatial unrolling "limited to 0" (the error
    says why): the run is not quiet, so that its warnings are logged."""
    status = main(
        [
            "run", "--workload", str(SMALL), "--accelerator", tiny_weight_register(tmp_path),
            "--mapping", TPU_MAPPING, "--output", str(tmp_path / "out"),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert f"error: {LINE}\n" in err
    assert "Traceback" not in err
    warnings = caplog.text + err
    assert (
        "spatial unrolling K 32 on D1 reduced to 1" in warnings
    )  # the search's warnings are there
    assert "spatial unrolling limited to" not in warnings


def test_a_register_of_two_elements_still_warns_of_its_limit(tmp_path, caplog):
    """16 bits hold two 8-bit weights: K 32 on D1 is cut to 2 and the warning says so."""
    layers, accelerator = load_inputs(str(SMALL), tiny_weight_register(tmp_path, 16), TPU_MAPPING)
    layer = layers.layers[0]
    with caplog.at_level(logging.WARNING):
        limited = limit_to_capacity({"D1": {"K": 32}, "D2": {"C": 1}}, layer, accelerator)
    assert limited["D1"]["K"] == 2
    assert [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().endswith("spatial unrolling limited to 2 by the capacity of rf_128B")
    ]


@pytest.mark.slow
def test_multicore_automatic_mapping_is_one_line(tmp_path):
    """meta_prototype's weight register cut to 4 bits: no core maps the Conv, said in one line."""
    from zigzag.multicore.allocation.automatic import checked_automatic_mapping
    from zigzag.multicore.topology import load_multicore_accelerator

    shutil.copytree(DATA / "stream2" / "hardware", tmp_path / "hw")
    core = tmp_path / "hw" / "cores" / "meta_prototype.yaml"
    data = yaml.safe_load(core.read_text())
    data["memories"]["rf_1B"]["size"] = 4
    core.write_text(yaml.safe_dump(data, sort_keys=False))
    accelerator = load_multicore_accelerator(
        tmp_path / "hw" / "meta_prototype_dual_core_simd_offchip.yaml"
    )
    with pytest.raises(InputError) as info:
        checked_automatic_mapping(accelerator, DATA / "stream2" / "small_cnn.onnx")
    text = str(info.value)
    assert "\n" not in text
    assert "layer 'conv0': no core can map this Conv layer" in text
    assert "in memory rf_1B, which holds 4 bits; make it at least 8 bits" in text
