"""DRAM traffic counts bits moved: a streamed operand's bits are the cost model's accesses of the
DRAM level (size x fetches), not the bandwidth its CN reserves on the DRAM link times its run time
(Stream's link model, kept for latency and reported apart as ``reserved``)."""

from __future__ import annotations

import types

import pytest

from zigzag.hardware.accelerator import Memory, Port
from zigzag.multicore.offchip import streamed_bits
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.dram_links import dram_link_shares
from zigzag.multicore.schedule.tokens import dram_reads_by_role
from zigzag.multicore.schedule.traffic import dram_traffic_by_layer, streamed_dram_bits
from support import REPO, TESTS

ROOT = REPO
DATA = TESTS / "data" / "stream_llm"
QUAD = (
    ROOT / "inputs/stream/hardware/tpu_like_quad_core.yaml",
    ROOT / "inputs/stream/mapping/llm_quad_core.yaml",
)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    # Stream's link model (its reservations are what the traffic tables are held against)
    return run_stream(
        QUAD[0], DATA / "gpt2_decode.onnx", QUAD[1], "lbl", cache=cache, latency_model="zigzag"
    )


def test_streamed_bits_are_word_accesses_times_the_port_width():
    port = Port(
        name="rw",
        type="read_write",
        bandwidth_min=64,
        bandwidth_max=64,
        allocation=(("I2", "tl"), ("O", "fl"), ("O", "tl")),
    )
    dram = Memory(
        name="dram",
        size=10**9,
        r_cost=1,
        w_cost=1,
        area=0,
        served_dimensions=(),
        ports=(port,),
        operands=("I2", "O"),
    )
    levels = ({"fh": 0, "tl": 5, "fl": 0, "th": 0}, {"fh": 0, "tl": 10, "fl": 0, "th": 0})
    result = types.SimpleNamespace(
        layer_name="x",
        memory_names={"W": ("rf", "dram"), "O": ("rf", "dram")},
        memory_word_access={"W": levels, "O": (levels[0], {"fh": 0, "tl": 2, "fl": 3, "th": 0})},
    )
    assert streamed_bits(result, ("I2", "O"), dram) == ((640.0, 0.0), (128.0, 192.0))


def test_a_weight_streamed_once_reads_its_size(gpt2):
    p = gpt2.problem
    checked = 0
    for n in range(p.nb_cns):
        for m, read, write in streamed_dram_bits(p, n):
            if m in p.constants[n] and p.layer_names[int(p.layer[n])].endswith("lm_head/MatMul"):
                size = p.tensor_size[p.operand_tensor[n, m]]  # read once, to 64-bit DRAM words
                assert size <= read < size + 64 * 1024 and write == 0
                assert read != pytest.approx(
                    p.bw_from_offchip[n] * p.runtime[n]
                )  # not bandwidth x time
                checked += 1
    assert checked


def test_traffic_tables_agree_and_stay_below_the_link(gpt2):
    traffic = gpt2.dram_traffic()
    by_layer = dram_traffic_by_layer(gpt2)
    assert sum(sum(v.values()) for v in by_layer.values()) == pytest.approx(traffic["traffic_bits"])
    reads = dram_reads_by_role(gpt2)
    assert sum(reads.values()) == pytest.approx(traffic["read_bits"])
    (link,) = dram_link_shares(gpt2).values()
    # bits moved fit (to rounding of word accesses) in what the 64-bit link carries in the step;
    # Stream's reservations (bandwidth need x run time) are far above it
    assert traffic["traffic_bits"] <= 1.05 * 64 * gpt2.latency
    assert 0.9 < link["demand"] < 1.05 < 10 < link["reserved"]


def test_streamed_bits_unknown_are_nan_not_guessed(gpt2):
    import dataclasses
    import math

    problem = dataclasses.replace(gpt2.problem, dram_bits=None)
    result = dataclasses.replace(gpt2, problem=problem)
    assert math.isnan(result.dram_traffic()["streamed_bits"])
