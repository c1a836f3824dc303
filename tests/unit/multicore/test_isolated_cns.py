"""A computation node with no edge (a one-layer network, untiled) is scheduled and costed.

Stream builds its CN graph from the edge list, so CNs without edges are dropped, which leaves a
one-layer network at 0 cycles and 0 pJ: a silent wrong answer. Ours keeps them after the connected
ones."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zigzag.multicore.pipeline import FixedAllocation, MulticoreRun, run_multicore
from support import TESTS

SMALL = TESTS / "data" / "reference" / "stream" / "small"
DUAL = SMALL / "dual_testing_core_offchip_v2.yaml"


def _gemm_network(path, layers: int):
    widths = [64, 32, 16][: layers + 1]
    nodes, weights = [], []
    for i in range(layers):
        weights.append(
            numpy_helper.from_array(np.zeros(widths[i : i + 2], dtype=np.float32), f"w{i}")
        )
        source = "x" if i == 0 else f"h{i}"
        target = "y" if i == layers - 1 else f"h{i + 1}"
        nodes.append(helper.make_node("Gemm", [source, f"w{i}"], [target], name=f"fc{i}"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, widths[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, widths[layers]])],
        weights,
    )
    onnx.save(helper.make_model(graph), path)
    return path


@pytest.fixture(scope="module")
def schedules(tmp_path_factory):
    """The schedules of the one- and two-layer networks, by number of layers."""
    tmp_path = tmp_path_factory.mktemp("isolated")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("- name: default\n  core_allocation: [0]\n")
    out = {}
    for layers in (1, 2):
        network = _gemm_network(tmp_path / f"gemm{layers}.onnx", layers)
        run = MulticoreRun(DUAL, network, mapping, "lbl", FixedAllocation())
        out[layers] = run_multicore(run, cache=tmp_path / "cache").schedule
    return out


def test_a_one_layer_network_is_scheduled(schedules):
    one = schedules[1]
    assert len(one.start) == 1 and one.latency > 0 and one.energy > 0


def test_a_second_layer_adds_to_the_isolated_one(schedules):
    one, two = schedules[1], schedules[2]
    # fc0 alone and fc0 followed by fc1: the second network adds a layer, never removes fc0's cost
    assert len(two.start) == 2 and two.energy > one.energy > 0 and two.latency > one.latency
