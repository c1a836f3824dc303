"""The CN dependencies through reshaping nodes, fast path against the element-by-element definition.

``ElementMaps.read_pairs`` cuts the work to the box of held positions and to cells on which the
producer CN does not change; ``ElementMaps.owners`` and ``new_outputs`` write whole windows; a pair
reached twice is joined once. Here every CN graph built that way must equal, array for array, the
one built from the plain definitions: every (position, consumer CN) of the consumer's coverage joined
with every producer CN covering the element held there, coverage counts from :func:`coverage` (and,
for a Concat-heavy CNN, every simple path walked again), on ResNet-18, the transformer exports of
tests/data/stream_llm/ and small grouped-query attention blocks with a long KV cache.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_graphs import gqa_attention
from test_stream_examples_and_edge_cases import _filtered_simple_paths, dense_block

from zigzag.stream import edges as edges_module
from zigzag.stream import propagation
from zigzag.stream.cn_graph import build_cn_graph
from zigzag.stream.inputs import cn_graph_from_files
from zigzag.stream.mapping import parse_stream_mapping
from zigzag.stream.workload import read_stream_workload

ROOT = Path(__file__).resolve().parents[1]
LLM = Path(__file__).parent / "data" / "stream_llm"
HARDWARE = ROOT / "inputs" / "stream" / "hardware"
MAPPINGS = ROOT / "inputs" / "stream" / "mapping"
QUAD = (HARDWARE / "tpu_like_quad_core.yaml", MAPPINGS / "llm_quad_core.yaml")
MESH_4X4 = (HARDWARE / "tpu_like_mesh_4x4.yaml", MAPPINGS / "llm_mesh_4x4.yaml")
RESNET = (HARDWARE / "tpu_like_quad_core.yaml", MAPPINGS / "tpu_like_quad_core_resnet18_fixed_split.yaml")


def element_read_pairs(maps, producer, consumer, operand, held):
    """The plain definition: every (position, CN) of the consumer's coverage holding a producer
    element, joined with every final-output CN of the producer covering that element."""
    elements, readers, _ = maps.coverage(consumer, operand, False)
    found = held[elements]
    keep = found != propagation.EMPTY
    found, readers = found[keep], readers[keep]
    p_elem, p_cn, _ = maps.coverage(producer, producer.tiled.layer.layer.output, True)
    order = np.argsort(p_elem, kind="stable")
    p_elem, p_cn = p_elem[order], p_cn[order]
    first = np.searchsorted(p_elem, found, "left")
    count = np.searchsorted(p_elem, found, "right") - first
    at = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(count.sum())
    keys = np.unique(p_cn[at].astype(np.int64) * consumer.count + np.repeat(readers, count))
    return np.stack([keys // consumer.count, keys % consumer.count], axis=1)


class _Forgetful(dict):
    """A memo that keeps nothing: every pair is joined again."""

    def __setitem__(self, key, value):
        pass


class _PlainMaps(propagation.ElementMaps):
    def __init__(self):
        super().__init__()
        self.joined = _Forgetful()

    def new_outputs(self, cns):
        return self.coverage(cns, cns.tiled.layer.layer.output, True)[2]

    read_pairs = element_read_pairs


def _plain(build, monkeypatch, paths: bool = False):
    """``build()`` with the plain definitions in place (``paths``: also every simple path, which
    networkx enumerates too slowly for the transformers)."""
    with monkeypatch.context() as patch:
        if paths:
            patch.setattr(edges_module, "propagation_paths", _filtered_simple_paths)
        patch.setattr(edges_module, "ElementMaps", _PlainMaps)
        return build()


def assert_same_graph(fast, plain):
    assert len(fast) == len(plain) and fast.nb_edges == plain.nb_edges
    arrays = [f.name for f in fields(fast) if isinstance(getattr(fast, f.name), np.ndarray)]
    assert "edge_src" in arrays and "data_produced_unique" in arrays
    for name in arrays:
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name


@pytest.fixture(scope="module")
def dense_workload(tmp_path_factory):
    path = dense_block(tmp_path_factory.mktemp("dense") / "dense.onnx")
    return read_stream_workload(path, parse_stream_mapping([{"name": "default", "core_allocation": [0]}]))


@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_concat_heavy_cn_graph_equals_the_one_from_the_plain_definitions(dense_workload, mode, monkeypatch):
    fast = build_cn_graph(dense_workload, mode, weight_capacity=1 << 30)
    plain = _plain(lambda: build_cn_graph(dense_workload, mode, weight_capacity=1 << 30), monkeypatch, paths=True)
    assert fast.nb_edges > len(fast)
    assert_same_graph(fast, plain)


#: (workload, (hardware, mapping), mode); the transformer exports have 2 blocks at the real widths
CASES = [
    ("resnet18", RESNET, "lbl"),
    ("gpt2_decode", QUAD, "lbl"),
    ("llama_tiny_decode", MESH_4X4, "lbl"),
    ("llama_tiny_decode", MESH_4X4, "fused"),
    ("bert_base", QUAD, "fused"),
]
SLOW = [
    ("gpt2_prefill_mask", MESH_4X4, "fused"),
    ("llama_tiny_prefill", MESH_4X4, "fused"),
    ("llama_tiny_prefill", QUAD, "lbl"),
    ("qwen2_05b_decode", QUAD, "fused"),
    ("mixtral_small_decode", QUAD, "lbl"),
]


@pytest.mark.parametrize("case", CASES + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW],
                         ids=lambda c: f"{c[0]}-{c[1][0].stem}-{c[2]}")
def test_cn_graph_equals_the_one_from_the_plain_definitions(case, monkeypatch):
    name, (hardware, mapping), mode = case
    workload = ROOT / "inputs/stream/workload/resnet18.onnx" if name == "resnet18" else LLM / f"{name}.onnx"

    def build():
        return cn_graph_from_files(hardware, workload, mapping, mode)

    assert_same_graph(build(), _plain(build, monkeypatch))


@pytest.mark.parametrize("form, tokens, context, mode", [("folded", 1, 600, "lbl"), ("folded", 1, 600, "fused"),
                                                         ("repeat_kv", 24, 0, "fused"), ("repeat_kv", 4, 300, "lbl")])
def test_attention_with_a_kv_cache_equals_the_plain_definitions(form, tokens, context, mode, tmp_path, monkeypatch):
    """One grouped-query attention block: a long cache holding one new token (the box cut), the
    repeated KV heads of a prefill (an Expand on the path)."""
    workload = tmp_path / "attention.onnx"
    onnx.save(gqa_attention(form, seq=tokens, past=context), str(workload))

    def build():
        return cn_graph_from_files(MESH_4X4[0], workload, MESH_4X4[1], mode)

    assert_same_graph(build(), _plain(build, monkeypatch))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cells_hold_the_values_of_every_window(data):
    """Each window's distinct values, read from the cells, are the ones its positions hold."""
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    ranks = data.draw(st.integers(1, 2))
    # values constant on random blocks (producer tiles), sometimes arbitrary (a scattered map)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    if data.draw(st.booleans()):
        own = rng.integers(-1, 4, size=(ranks,) + shape)
    else:
        edges = [np.sort(rng.choice(np.arange(1, n + 1), size=min(n, 2), replace=False)) for n in shape]
        block = [np.searchsorted(e, np.arange(n), side="right") for e, n in zip(edges, shape)]
        ids = sum(np.ix_(*block)[a] * 3**a for a in range(ndim))
        own = np.stack([np.where(ids % 5 == 4, -1, ids + r) for r in range(ranks)])
    count = data.draw(st.integers(1, 5))
    start = np.array([[data.draw(st.integers(0, n - 1)) for n in shape] for _ in range(count)])
    stop = np.array([[data.draw(st.integers(a + 1, n)) for a, n in zip(row, shape)] for row in start])
    cells, first, last = propagation._cells(own, start, stop)
    for i in range(count):
        window = (slice(None),) + tuple(slice(a, b) for a, b in zip(start[i], stop[i]))
        cell_window = (slice(None),) + tuple(slice(a, b) for a, b in zip(first[i], last[i]))
        assert set(np.unique(cells[cell_window])) == set(np.unique(own[window]))
