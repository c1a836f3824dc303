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
from zigzag.multicore.mapping import load_stream_mapping, parse_stream_mapping
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO, TESTS

ROOT = REPO
DATA = TESTS / "data" / "stream_llm"
HARDWARE = ROOT / "inputs" / "stream" / "hardware"
MAPPINGS = ROOT / "inputs" / "stream" / "mapping"
QUAD = (HARDWARE / "tpu_like_quad_core.yaml", MAPPINGS / "llm_quad_core.yaml")
MESH_2X2 = (HARDWARE / "tpu_like_mesh_2x2.yaml", MAPPINGS / "llm_quad_core.yaml")  # same core ids
MESH_4X4 = (HARDWARE / "tpu_like_mesh_4x4.yaml", MAPPINGS / "llm_mesh_4x4.yaml")

#: MAC totals of every Gemm/MatMul (tests/data/stream_llm/README.md)
MACS = {
    "gpt2_prefill_mask": 6_802_735_104,
    "gpt2_prefill_mask_op17": 6_802_735_104,
    "gpt2_decode": 53_146_368,
    "bert_base": 1_862_860_800,
    "llama_tiny_prefill": 19_797_114_880,
    "llama_tiny_decode": 154_664_960,
    "qwen2_05b_decode": 166_412_288,
    "mixtral_small_decode": 24_252_416,
    "mistral_sw16_decode": 1_386_496,
}


def single_core_macs(path: Path) -> int:
    layers = [
        n
        for n in read_onnx(str(path))
        if n["kind"] == "layer" and n["operator_type"] in ("Gemm", "MatMul")
    ]
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
    assert {
        ("Split", "onnx"),
        ("Reshape", "reshape"),
        ("Concat", "concat"),
        ("Softmax", "max"),
    } <= kinds
    attention = [
        layer for layer in workload.layers if layer.op_type == "MatMul" and "H" in layer.sizes
    ]
    # Q.K^T and P.V of both blocks: one new token against 128 keys (127 cached + itself), 12 heads
    assert (
        sorted((l.sizes["D"], l.sizes["H"], l.sizes["C"], l.sizes["K"]) for l in attention)
        == [(1, 12, 64, 128)] * 2 + [(1, 12, 128, 64)] * 2
    )


def test_bert_position_ids_are_a_two_dimensional_gather():
    workload = read_stream_workload(DATA / "bert_base.onnx", load_stream_mapping(QUAD[1]))
    gathers = [n for n in workload.nodes.values() if getattr(n, "kind", "") == "gather"]
    assert any(
        isinstance(g.attrs["indices"], list) and isinstance(g.attrs["indices"][0], list)
        for g in gathers
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("llm-cost-cache")


FAST = [
    ("gpt2_decode", QUAD, "lbl"),
    ("bert_base", QUAD, "fused"),
    ("qwen2_05b_decode", MESH_2X2, "fused"),
    ("llama_tiny_decode", MESH_4X4, "lbl"),
]
SLOW = [
    (name, hw, mode)
    for name in (
        "gpt2_prefill_mask",
        "gpt2_prefill_mask_op17",
        "gpt2_decode",
        "bert_base",
        "llama_tiny_prefill",
        "llama_tiny_decode",
        "mixtral_small_decode",
        "mistral_sw16_decode",
    )
    for hw in (QUAD, MESH_2X2, MESH_4X4)
    for mode in ("lbl", "fused")
    if (name, hw, mode) not in FAST
]


def _ids(case):
    name, (hardware, _), mode = case
    return f"{name}-{hardware.stem}-{mode}"


@pytest.mark.parametrize(
    "case", FAST + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW], ids=_ids
)
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
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/proj"),
        helper.make_node("Slice", ["h", "start", "ends", "axes"], ["s"], name="/pick"),
        helper.make_node("MatMul", ["s", "w2"], ["y"], name="/out"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [x, start],
        [y],
        [w1, w2, ends, axes],
        value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 8, 8])],
    )
    path = tmp_path / "sliced.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path


def test_an_operator_the_floor_cannot_place_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError) as caught:
        read_stream_workload(_sliced_by_data(tmp_path), parse_stream_mapping([{"name": "default"}]))
    text = str(caught.value)
    assert (
        "'/pick' (Slice)" in text and "input 'start' is not a constant" in text and "\n" not in text
    )


# ----- operators beyond matrix products on a core with a vector unit ----------------------------
VECTOR = (HARDWARE / "tpu_like_quad_core_vector.yaml", MAPPINGS / "llm_vector_quad_core.yaml")


def _vector_workload(name: str, mapping=VECTOR[1]):
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import HardwareFacts

    facts = HardwareFacts.of(load_multicore_accelerator(VECTOR[0]))
    mapping = mapping if not isinstance(mapping, Path) else load_stream_mapping(mapping)
    return read_stream_workload(
        DATA / f"{name}.onnx",
        mapping,
        vector_classes=facts.vector_classes,
        vector_memory_bits=facts.vector_memory_bits,
    )


def test_norms_softmax_and_activations_become_vector_layers_on_the_vector_core(caplog):
    workload = _vector_workload("gpt2_decode")
    assert workload.mac_count() == MACS["gpt2_decode"]  # the matrix products are untouched
    vector = [layer for layer in workload.layers if layer.layer.vector_op is not None]
    classes = {layer.layer.vector_op for layer in vector}
    # LayerNorm (reduce_mean, sub, pow, sqrt, div, mul, add), Softmax, GELU (tanh, pow, mul, add)
    assert {
        "reduce_mean",
        "sub",
        "pow",
        "sqrt",
        "div",
        "mul",
        "add",
        "reduce_max",
        "exp",
        "reduce_sum",
        "tanh",
    } <= classes
    assert all(
        set(layer.mapping.core_allocation) == {5} for layer in vector
    )  # the SIMD core's vector unit
    layer_norm = next(layer for layer in vector if layer.name.endswith("ln_1/ReduceMean"))
    assert layer_norm.layer.equation == "O[b][d]+=I[b][d][c]*W[]" and layer_norm.sizes == {
        "B": 1,
        "D": 1,
        "C": 768,
    }
    assert "IsNaN" not in caplog.text  # the exporter's NaN guard does no work: not named


@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_vector_layers_are_scheduled_with_a_cost(mode, cache):
    hardware, mapping = VECTOR
    result = run_stream(hardware, DATA / "llama_tiny_decode.onnx", mapping, mode, cache=cache)
    problem = result.problem
    on_vector = problem.core == 5
    assert on_vector.sum() > 50
    assert (problem.runtime[on_vector] > 0).all() and (problem.onchip_energy[on_vector] > 0).all()
    names = {problem.layer_names[int(i)] for i in problem.layer[on_vector]}
    # RMSNorm (pow, reduce_mean, add, sqrt, div, mul), rotary (mul, neg, add), SiLU (sigmoid, mul), Softmax
    assert any("input_layernorm/ReduceMean" in n for n in names) and any(
        "mlp/act_fn/Sigmoid" in n for n in names
    )
    assert any("self_attn/Neg" in n for n in names)


def test_a_vector_layer_on_a_core_without_its_class_is_a_one_line_error():
    mapping = parse_stream_mapping(
        [
            {
                "name": "default",
                "core_allocation": [0, 1, 2, 3],
                "core_allocation_is_fixed": True,
                "inter_core_tiling": ["K, 4"],
            },
            {"name": "Tanh", "core_allocation": [0]},
        ]
    )
    with pytest.raises(InputError) as caught:
        _vector_workload("gpt2_decode", mapping)
    text = str(caught.value)
    assert "(Tanh)" in text and "mapping entry 'Tanh' puts this 'tanh' layer on core(s) [0]" in text
    assert "use core(s) [5]" in text and "\n" not in text


def test_layer_normalization_at_opset_17_gives_the_opset_14_layers():
    def layers(name):
        return [
            (layer.layer.vector_op, layer.layer.equation, layer.sizes)
            for layer in _vector_workload(name).layers
        ]

    assert layers("gpt2_prefill_mask_op17") == layers("gpt2_prefill_mask")


@pytest.mark.slow
def test_search_figures_of_an_llm_are_what_running_its_allocation_gives(cache, tmp_path):
    """GPT-2 decode with its matrix products and Softmax layers (four layers of one node, each with
    its own core in the written allocation) free to go to any compute core: the chosen point's
    figures equal `run` of the written allocation."""
    import json

    from zigzag.multicore.pipeline import search_allocation

    flexible = tmp_path / "flexible.yaml"
    flexible.write_text(
        "- name: default\n  core_allocation: [0, 1, 2, 3]\n  inter_core_tiling: [K, 1]\n"
    )
    hardware = QUAD[0]
    search_allocation(
        hardware,
        DATA / "gpt2_decode.onnx",
        flexible,
        "lbl",
        individuals=4,
        generations=1,
        seed=0,
        cache=cache,
        output=tmp_path / "search",
    )
    rerun = run_stream(
        hardware,
        DATA / "gpt2_decode.onnx",
        tmp_path / "search" / "allocation.yaml",
        "lbl",
        cache=cache,
    )
    chosen = json.loads((tmp_path / "search" / "summary.json").read_text())["search"]
    assert (chosen["energy"], chosen["latency"]) == (rerun.energy, rerun.latency)


def test_per_token_figures_with_the_dram_link_busy_share(cache, tmp_path):
    """GPT-2 decode on the quad core: one token per step; the step streams the weights over the one
    DRAM link, busy almost all of the step and moving about what it can carry (DRAM-bound)."""
    import json
    import subprocess
    import sys

    from zigzag.multicore.schedule.dram_links import dram_link_shares
    from zigzag.multicore.schedule.tokens import token_figures

    result = run_stream(  # Stream's link model, named: its reservations are what this checks
        QUAD[0],
        DATA / "gpt2_decode.onnx",
        QUAD[1],
        "lbl",
        cache=cache,
        output=tmp_path,
        latency_model="zigzag",
    )
    tokens = json.loads((tmp_path / "summary.json").read_text())["per_token"]
    assert (tokens["phase"], tokens["batch"], tokens["tokens"], tokens["context"]) == (
        "decode",
        1,
        1,
        127,
    )
    assert tokens["tpot_cycles"] == tokens["step_cycles"] == result.latency
    assert tokens["energy_per_token_pJ"] == pytest.approx(result.energy)
    shares = dram_link_shares(result)
    assert list(shares) == ["6 <-> Any"] and 0.9 < shares["6 <-> Any"]["busy"] <= 1.0
    # bound by the weights streamed from DRAM: the bits moved fill the link; Stream's reservations
    # (each streaming node's bandwidth need x its run time) are far above it
    assert 0.9 < tokens["dram_link_demand"] < 1.05 < tokens["dram_link_reserved"]
    # the step against its DRAM link's bound, stated in the figures and the table (issue 45)
    assert tokens["bound_term"] == "6 <-> Any" and tokens["latency_model"] == "zigzag"
    assert tokens["bound_ratio"] == pytest.approx(1 / tokens["dram_link_demand"])
    assert tokens["below_bound"] == pytest.approx(max(0.0, 1 - tokens["bound_ratio"]))
    assert (tokens["bound_note"] is not None) == (tokens["below_bound"] > 0)
    prefill = token_figures(result, {"phase": "prefill", "batch": 2, "tokens": 64}, clock_ghz=1.0)
    assert prefill["ttft_s"] == result.latency * 1e-9 and prefill["tokens_per_s"] == pytest.approx(
        128 / prefill["ttft_s"]
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "stream",
            "run",
            "--accelerator",
            str(QUAD[0]),
            "--workload",
            str(DATA / "gpt2_decode.onnx"),
            "--mapping",
            str(QUAD[1]),
            "--mode",
            "lbl",
            "--cache",
            str(cache),
            "--output",
            str(tmp_path / "cli"),
        ],
        capture_output=True,
        text=True,
    )
    assert (
        done.returncode == 0
        and "time per output token" in done.stdout
        and "DRAM link busy" in done.stdout
    )


def test_llm_default_honours_the_dram_link_bound(tmp_path, cache):
    """Issue 45: with default options a multi-core LLM decode step takes ``bandwidth_bound``
    (``auto``), so its time per token is never below its busiest DRAM link's bound; Stream's
    model stays selectable and still reports the step below it (the CNN default is unchanged)."""
    import json

    run_stream(QUAD[0], DATA / "gpt2_decode.onnx", QUAD[1], "lbl", cache=cache, output=tmp_path)
    tokens = json.loads((tmp_path / "summary.json").read_text())["per_token"]
    assert tokens["latency_model"] == "bandwidth_bound"
    assert tokens["bound_ratio"] >= 1 and tokens["below_bound"] == 0
    assert tokens["bound_note"] is None
    stream = run_stream(
        QUAD[0], DATA / "gpt2_decode.onnx", QUAD[1], "lbl", cache=cache, latency_model="zigzag"
    )
    assert stream.latency < tokens["tpot_cycles"]
    from zigzag.multicore.schedule.tokens import resolve_latency_model

    assert resolve_latency_model("auto", DATA / "gpt2_decode.onnx") == "bandwidth_bound"
    assert resolve_latency_model("zigzag", DATA / "gpt2_decode.onnx") == "zigzag"
    cnn = TESTS / "data" / "co" / "inputs" / "toy_residual.onnx"  # not an LLM step
    assert resolve_latency_model("auto", cnn) == "zigzag"


@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_attention_split_by_heads_across_the_cores(mode, cache):
    """A default entry with inter_core_tiling [H, 4]: Q.K^T and P.V (12 heads) go three heads per
    core; the projections, without a head loop, are cut by output channels instead."""
    import numpy as np

    from zigzag.multicore.inputs import cn_graph_from_files

    mapping = MAPPINGS / "llm_heads_quad_core.yaml"
    graph = cn_graph_from_files(QUAD[0], DATA / "gpt2_decode.onnx", mapping, mode)
    attention = [
        i for i, info in graph.layers.items() if info.op_type == "MatMul" and "H" in info.sizes
    ]
    projections = [
        i for i, info in graph.layers.items() if info.op_type == "MatMul" and "H" not in info.sizes
    ]
    assert len(attention) == 4 and projections
    for layer in attention:
        cns = np.flatnonzero(graph.layer == layer)
        assert sorted(set(graph.core[cns].tolist())) == [0, 1, 2, 3]
        assert graph.layers[layer].inter_core_tiling == (("H", 4),)
    for layer in projections:
        assert graph.layers[layer].inter_core_tiling[0][0] == "K"
    result = run_stream(QUAD[0], DATA / "gpt2_decode.onnx", mapping, mode, cache=cache)
    assert result.latency > 0


def test_the_kv_cache_is_its_own_data_read_from_dram(cache, tmp_path):
    """GPT-2 decode on the quad core with a vector core: each of the four KV-cache Concats (past K or
    V of 127 tokens, a graph input, with the new token's) appends the new token with a `copy` layer
    over that token only; the layer reading the joined data fetches the past cache as a constant
    (a cache operand) and gets the new token from its producer; the cache's DRAM reads are
    counted apart from the weights and the activations."""
    import json

    workload = _vector_workload("gpt2_decode")
    appends = [layer for layer in workload.layers if layer.type == "cache_append"]
    assert len(appends) == 4 and {layer.layer.vector_op for layer in appends} == {"copy"}
    assert all(layer.sizes["D"] == 1 and layer.sizes["H"] == 12 for layer in appends)
    readers = [layer for layer in workload.layers if layer.cache_operands]
    assert len(readers) == 4 and all(
        op in layer.input_operand_source for layer in readers for op, *_ in layer.cache_operands
    )
    hardware, mapping = VECTOR
    run_stream(hardware, DATA / "gpt2_decode.onnx", mapping, "lbl", cache=cache, output=tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    tokens = summary["per_token"]
    cache_bits = (
        2 * 2 * 12 * 127 * 64 * 8
    )  # 2 blocks x (K, V) x heads x past tokens x head size x 8 bits
    assert tokens["dram_read_bits_kv_cache"] == cache_bits
    parts = sum(tokens[f"dram_read_bits_{role}"] for role in ("weights", "kv_cache", "activations"))
    assert parts == pytest.approx(summary["dram_read_bits"])
