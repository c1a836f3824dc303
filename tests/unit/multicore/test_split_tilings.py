"""Layers split across cores in layer-fused mode, and tensors shared by more CNs than their reuse
count (issue 44): tilings Stream's rules turn into CNs of size 0, and schedules that stopped with
"tensor ... is stored nowhere" (docs/models/multi-core.md#tilings-that-split-a-fused-layer)."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import yaml

from zigzag.errors import InputError
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.pipeline.calls import run_multicore
from zigzag.multicore.pipeline.spec import MulticoreRun
from zigzag.multicore.schedule.problem import O
from zigzag.multicore.tiling import SeedTiling
from support import REPO

INPUTS = REPO / "inputs" / "stream"
HARDWARE = INPUTS / "hardware" / "dual_testing_core.yaml"
WORKLOAD = INPUTS / "workload" / "small_3conv.onnx"


def _mapping(tmp_path, **entry):
    path = tmp_path / "mapping.yaml"
    path.write_text(yaml.safe_dump([{"name": "default", **entry}]))
    return path


def _split(tmp_path, *inter, intra=None, cores=(0, 1)):
    entry = {"core_allocation": list(cores), "core_allocation_is_fixed": True}
    entry["inter_core_tiling"] = list(inter)
    if intra:
        entry["intra_core_tiling"] = [intra]
    return _mapping(tmp_path, **entry)


def _rows(graph, layer):
    """(OY starts, OY stops, groups, cores) of a layer's CNs."""
    rows = graph.layer == layer
    oy = graph.dims.index("OY")
    return graph.start[rows, oy], graph.stop[rows, oy], graph.group[rows], graph.core[rows]


def test_fused_rows_fit_a_row_split_across_cores(tmp_path):
    """The fused default (one CN per row) with rows split over two cores: each core's half cut
    into rows (Stream's tiling cut the rows 2 x 8 ways: 16 CNs of 0 rows sharing one tensor)."""
    graph = cn_graph_from_files(HARDWARE, WORKLOAD, _split(tmp_path, "OY, 2"), "fused")
    for layer, info in graph.layers.items():
        size = info.sizes["OY"]
        assert info.outer_loops == (("OY", size // 2), ("OY", 2))
        start, stop, group, core = _rows(graph, layer)
        assert sorted(start.tolist()) == list(range(size)) and (stop - start == 1).all()
        assert np.bincount(group).tolist() == [size // 2, size // 2]
        assert set(core.tolist()) == {0, 1}


def test_a_given_intra_tiling_is_lowered_with_a_warning(tmp_path, caplog):
    path = _split(tmp_path, "OY, 2", intra="OY, all")
    with caplog.at_level(logging.WARNING):
        graph = cn_graph_from_files(HARDWARE, WORKLOAD, path, "fused")
    assert graph.layers[0].outer_loops == (("OY", 4), ("OY", 2))
    assert "intra-core tiling (OY, 8) lowered to (OY, 4)" in caplog.text


def test_a_split_that_does_not_divide_rounds_the_rows_up(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        path = _split(tmp_path, "OY, 3", cores=(0, 1, 0))
        graph = cn_graph_from_files(HARDWARE, WORKLOAD, path, "fused")
    assert "OY rounded up from 8 to 9" in caplog.text
    info = graph.layers[0]
    assert info.sizes["OY"] == 9 and info.outer_loops == (("OY", 3), ("OY", 3))
    start, stop, _, _ = _rows(graph, 0)
    assert sorted(start.tolist()) == list(range(9)) and (stop - start == 1).all()


def test_a_split_into_more_parts_than_the_dim_has_is_refused(tmp_path):
    with pytest.raises(InputError) as raised:
        cn_graph_from_files(HARDWARE, WORKLOAD, _split(tmp_path, "OY, 4", "OY, 4"), "lbl")
    message = str(raised.value)
    assert "cuts OY (8) into 16 parts" in message and "\n" not in message


def test_a_fused_layer_split_across_cores_is_scheduled(tmp_path):
    """Was: "CN 1: tensor 2 is stored nowhere"."""
    result = run_stream(HARDWARE, WORKLOAD, _split(tmp_path, "OY, 2"), "fused", cache=tmp_path)
    p = result.problem
    assert np.isfinite(result.end).all() and result.latency >= result.end.max() > 0
    for layer in np.unique(p.layer):
        assert set(p.core[p.layer == layer].tolist()) == {0, 1}
    # the two halves of a row split meet at the next layer: rows cross between the cores
    assert any(t.kind == "core_to_core" for t in result.transfers)


def test_a_tensor_shared_beyond_its_reuse_count_stays_until_its_last_user(tmp_path):
    """Layer 0 cut along OX and FX, one unit each: CNs (OX=a+1, FX=b) and (OX=a, FX=b+1) read the
    same input columns, one tensor, which Stream's reuse count (the K loops: 1) under-counts.
    It stays in DRAM until the last CN needing it has run (was: "tensor ... is stored nowhere")."""
    seed = SeedTiling(3, [[("OX", "all"), ("FX", "all")]], [0])
    run = MulticoreRun(
        HARDWARE,
        WORKLOAD,
        _mapping(tmp_path, core_allocation=[0]),
        "fused",
        seed_tiling=seed,
    )
    result = run_multicore(run, cache=tmp_path).schedule
    p = result.problem
    assert np.isfinite(result.end).all()
    dram = int(p.hardware.top_memory[p.hardware.offchip_core, 0])
    shared = 0
    for x in range(p.nb_tensors):
        users = np.flatnonzero((p.operand_tensor[:, :O] == x).any(axis=1))
        if p.tensor_operand[x] == O or len(users) <= p.tensor_base_priority[x]:
            continue
        shared += 1
        removed = [t for t, tensor, bits in result.memory_log[dram] if tensor == x and bits < 0]
        last_use = result.end[users].max()
        assert all(t >= last_use for t in removed) and not math.isnan(last_use)
    assert shared > 0
