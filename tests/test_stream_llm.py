"""Transformer exports on the multi-core floor: GPT-2 (prefill at opset 14 and 17, decode with a KV
cache), BERT and Llama-style decoders (rotary, grouped-query attention, mixture of experts) import,
keep the single-core importer's MAC total and schedule in both modes on the quad core and meshes.

The exports are shapes-only copies described in tests/data/stream_llm/README.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from zigzag.errors import InputError
from zigzag.io.onnx_import import read_onnx
from zigzag.stream.mapping import load_stream_mapping, parse_stream_mapping
from zigzag.stream.schedule.run import run_stream
from zigzag.stream.workload import read_stream_workload

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "stream_llm"
HARDWARE = ROOT / "inputs" / "stream" / "hardware"
MAPPINGS = ROOT / "inputs" / "stream" / "mapping"
QUAD = (HARDWARE / "tpu_like_quad_core.yaml", MAPPINGS / "llm_quad_core.yaml")
MESH_2X2 = (HARDWARE / "tpu_like_mesh_2x2.yaml", MAPPINGS / "llm_quad_core.yaml")  # same core ids
MESH_4X4 = (HARDWARE / "tpu_like_mesh_4x4.yaml", MAPPINGS / "llm_mesh_4x4.yaml")

#: MAC totals of every Gemm/MatMul (tests/data/stream_llm/README.md)
MACS = {
    "gpt2_prefill_mask": 6_802_735_104, "gpt2_prefill_mask_op17": 6_802_735_104, "gpt2_decode": 53_146_368,
    "bert_base": 1_862_860_800, "llama_tiny_prefill": 19_797_114_880, "llama_tiny_decode": 154_664_960,
    "qwen2_05b_decode": 166_412_288, "mixtral_small_decode": 24_252_416,
}


def single_core_macs(path: Path) -> int:
    layers = [n for n in read_onnx(str(path)) if n["kind"] == "layer" and n["operator_type"] in ("Gemm", "MatMul")]
    return sum(math.prod(n["loop_sizes"]) for n in layers)


@pytest.mark.parametrize("name", list(MACS))
def test_import_keeps_the_single_core_mac_total(name):
    path = DATA / f"{name}.onnx"
    workload = read_stream_workload(path, load_stream_mapping(QUAD[1]))
    assert workload.mac_count() == single_core_macs(path) == MACS[name]


def test_llm_operators_become_layers_and_data_moving_nodes():
    """GPT-2 decode: the fused QKV Split, the graph-input Reshape of input_ids and the KV-cache
    Concat are data-moving nodes; Softmax is four layers; the MAC layers read the cache."""
    workload = read_stream_workload(DATA / "gpt2_decode.onnx", load_stream_mapping(QUAD[1]))
    kinds = {(n.op_type, getattr(n, "kind", None) or n.type) for n in workload.nodes.values()}
    assert {("Split", "onnx"), ("Reshape", "reshape"), ("Concat", "concat"), ("Softmax", "max")} <= kinds
    attention = [layer for layer in workload.layers if layer.op_type == "MatMul" and "H" in layer.sizes]
    # Q.K^T and P.V of both blocks: one new token against 128 keys (127 cached + itself), 12 heads
    assert sorted((l.sizes["D"], l.sizes["H"], l.sizes["C"], l.sizes["K"]) for l in attention) == \
        [(1, 12, 64, 128)] * 2 + [(1, 12, 128, 64)] * 2


def test_bert_position_ids_are_a_two_dimensional_gather():
    workload = read_stream_workload(DATA / "bert_base.onnx", load_stream_mapping(QUAD[1]))
    gathers = [n for n in workload.nodes.values() if getattr(n, "kind", "") == "gather"]
    assert any(isinstance(g.attrs["indices"], list) and isinstance(g.attrs["indices"][0], list) for g in gathers)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("llm-cost-cache")


FAST = [("gpt2_decode", QUAD, "lbl"), ("bert_base", QUAD, "fused"), ("qwen2_05b_decode", MESH_2X2, "fused"),
        ("llama_tiny_decode", MESH_4X4, "lbl")]
SLOW = [(name, hw, mode) for name in ("gpt2_prefill_mask", "gpt2_prefill_mask_op17", "gpt2_decode", "bert_base",
                                      "llama_tiny_prefill", "llama_tiny_decode", "mixtral_small_decode")
        for hw in (QUAD, MESH_2X2, MESH_4X4) for mode in ("lbl", "fused") if (name, hw, mode) not in FAST]


def _ids(case):
    name, (hardware, _), mode = case
    return f"{name}-{hardware.stem}-{mode}"


@pytest.mark.parametrize("case", FAST + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW],
                         ids=_ids)
def test_export_schedules_on_the_floor(case, cache):
    name, (hardware, mapping), mode = case
    path = DATA / f"{name}.onnx"
    result = run_stream(hardware, path, mapping, mode, cache=cache)
    assert result.latency > 0 and result.energy > 0
    workload = read_stream_workload(path, load_stream_mapping(mapping), check_entries=False)
    macs = {layer.id for layer in workload.layers if layer.op_type in ("Gemm", "MatMul")}
    scheduled = set(result.problem.layer.tolist())
    assert macs <= scheduled  # every matrix product has its CNs in the schedule
    compute = set(range(16 if hardware == MESH_4X4[0] else 4))
    layer_core = dict(zip(result.problem.layer.tolist(), result.problem.core.tolist()))
    assert all(layer_core[i] in compute for i in macs)


def _sliced_by_data(tmp_path: Path) -> Path:
    """x -> MatMul -> Slice whose start is read from a graph input (data-dependent) -> MatMul."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
    start = helper.make_tensor_value_info("start", TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4])
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [16, 16], [0.0] * 256)
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [8, 4], [0.0] * 32)
    ends = helper.make_tensor("ends", TensorProto.INT64, [1], [8])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [2])
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="/proj"),
             helper.make_node("Slice", ["h", "start", "ends", "axes"], ["s"], name="/pick"),
             helper.make_node("MatMul", ["s", "w2"], ["y"], name="/out")]
    graph = helper.make_graph(nodes, "g", [x, start], [y], [w1, w2, ends, axes],
                              value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 8, 8])])
    path = tmp_path / "sliced.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path


def test_an_operator_the_floor_cannot_place_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError) as caught:
        read_stream_workload(_sliced_by_data(tmp_path), parse_stream_mapping([{"name": "default"}]))
    text = str(caught.value)
    assert "'/pick' (Slice)" in text and "input 'start' is not a constant" in text and "\n" not in text
