"""The CN dependencies through reshaping nodes, fast path against the element-by-element definition.

``ElementMaps.read_pairs`` cuts the work to the box of held positions and to cells on which the
producer CN does not change; ``ElementMaps.owners`` and ``new_outputs`` write whole windows; a pair
reached twice is joined once. Here every CN graph built that way must equal, array for array, the
one built from the plain definitions (``PlainMaps``: every (position, consumer CN) of the consumer's
coverage joined with every producer CN covering the element held there, coverage counts from
:func:`coverage`) on ResNet-18, the transformer exports of tests/data/stream_llm/ and small
grouped-query attention blocks with a long KV cache (a Concat-heavy CNN:
tests/test_stream_examples_and_edge_cases.py).
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.llm_graphs import gqa_attention
from support.cn_graphs import PlainMaps

from zigzag.multicore import edges as edges_module
from zigzag.multicore import propagation
from zigzag.multicore.inputs import cn_graph_from_files
from support import REPO, TESTS

ROOT = REPO
LLM = TESTS / "data" / "stream_llm"
HARDWARE = ROOT / "inputs" / "stream" / "hardware"
MAPPINGS = ROOT / "inputs" / "stream" / "mapping"
QUAD = (HARDWARE / "tpu_like_quad_core.yaml", MAPPINGS / "llm_quad_core.yaml")
MESH_4X4 = (HARDWARE / "tpu_like_mesh_4x4.yaml", MAPPINGS / "llm_mesh_4x4.yaml")
VECTOR = (HARDWARE / "tpu_like_quad_core_vector.yaml", MAPPINGS / "llm_vector_quad_core.yaml")
RESNET = (
    HARDWARE / "tpu_like_quad_core.yaml",
    MAPPINGS / "tpu_like_quad_core_resnet18_fixed_split.yaml",
)


def _plain(build, monkeypatch):
    """``build()`` with the plain definitions of the dependencies in place."""
    with monkeypatch.context() as patch:
        patch.setattr(edges_module, "ElementMaps", PlainMaps)
        return build()


def assert_same_graph(fast, plain):
    assert len(fast) == len(plain) and fast.nb_edges == plain.nb_edges
    arrays = [f.name for f in fields(fast) if isinstance(getattr(fast, f.name), np.ndarray)]
    assert "edge_src" in arrays and "data_produced_unique" in arrays
    for name in arrays:
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name


#: (workload, (hardware, mapping), mode); the transformer exports have 2 blocks at the real widths
CASES = [
    ("resnet18", RESNET, "lbl"),
    ("gpt2_decode", QUAD, "lbl"),
    ("llama_tiny_decode", MESH_4X4, "lbl"),
    ("llama_tiny_decode", MESH_4X4, "fused"),
    ("bert_base", QUAD, "fused"),
    ("llama_tiny_decode", VECTOR, "lbl"),
    ("gpt2_decode", VECTOR, "fused"),
    ("llama_tiny_prefill", VECTOR, "fused"),
]
SLOW = [
    ("gpt2_prefill_mask", MESH_4X4, "fused"),
    ("llama_tiny_prefill", MESH_4X4, "fused"),
    ("llama_tiny_prefill", QUAD, "lbl"),
    ("qwen2_05b_decode", QUAD, "fused"),
    ("mixtral_small_decode", QUAD, "lbl"),
]


@pytest.mark.parametrize(
    "case",
    CASES + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW],
    ids=lambda c: f"{c[0]}-{c[1][0].stem}-{c[2]}",
)
def test_cn_graph_equals_the_one_from_the_plain_definitions(case, monkeypatch):
    name, (hardware, mapping), mode = case
    workload = (
        ROOT / "inputs/stream/workload/resnet18.onnx"
        if name == "resnet18"
        else LLM / f"{name}.onnx"
    )

    def build():
        return cn_graph_from_files(hardware, workload, mapping, mode)

    assert_same_graph(build(), _plain(build, monkeypatch))


@pytest.mark.parametrize(
    "form, tokens, context, mode",
    [
        ("folded", 1, 600, "lbl"),
        ("folded", 1, 600, "fused"),
        ("repeat_kv", 24, 0, "fused"),
        ("repeat_kv", 4, 300, "lbl"),
    ],
)
def test_attention_with_a_kv_cache_equals_the_plain_definitions(
    form, tokens, context, mode, tmp_path, monkeypatch
):
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
        edges = [
            np.sort(rng.choice(np.arange(1, n + 1), size=min(n, 2), replace=False)) for n in shape
        ]
        block = [np.searchsorted(e, np.arange(n), side="right") for e, n in zip(edges, shape)]
        ids = sum(np.ix_(*block)[a] * 3**a for a in range(ndim))
        own = np.stack([np.where(ids % 5 == 4, -1, ids + r) for r in range(ranks)])
    count = data.draw(st.integers(1, 5))
    start = np.array([[data.draw(st.integers(0, n - 1)) for n in shape] for _ in range(count)])
    stop = np.array(
        [[data.draw(st.integers(a + 1, n)) for a, n in zip(row, shape)] for row in start]
    )
    cells, first, last = propagation._cells(own, start, stop)
    for i in range(count):
        window = (slice(None),) + tuple(slice(a, b) for a, b in zip(start[i], stop[i]))
        cell_window = (slice(None),) + tuple(slice(a, b) for a, b in zip(first[i], last[i]))
        assert set(np.unique(cells[cell_window])) == set(np.unique(own[window]))


def test_overlapping_producer_windows_give_the_plain_pairs(monkeypatch):
    """Producer CNs whose outputs overlap (each window doubled along a cut dim, so most elements
    have two owners): the owner maps by rank and the cells over both ranks still give the plain
    definition's pairs."""
    seen = []
    real = propagation.complex_pair_edges

    def capture(producer, consumer, paths, file=None, maps=None):
        seen.append((producer, consumer, paths))
        return real(producer, consumer, paths, file, maps)

    monkeypatch.setattr(edges_module, "complex_pair_edges", capture)
    cn_graph_from_files(MESH_4X4[0], LLM / "llama_tiny_decode.onnx", MESH_4X4[1], "lbl")
    checked = 0
    for producer, consumer, paths in seen:
        dims = producer.tiled.layer.layer.operand_dims[producer.tiled.layer.layer.output]
        cut = [
            producer.column(d)
            for d in dims
            if len(np.unique(producer.start[:, producer.column(d)])) > 1
        ]
        if not cut:
            continue
        stop = producer.stop.copy()
        stop[:, cut[0]] += producer.stop[:, cut[0]] - producer.start[:, cut[0]]
        wide = replace(
            producer, stop=stop, data_produced_unique=producer.data_produced_unique.copy()
        )
        maps = propagation.ElementMaps()
        assert len(maps.owners(wide)) == 2
        for path in paths:
            fast = propagation._path_pairs(maps, wide, consumer, path, None)
            plain = propagation._path_pairs(PlainMaps(), wide, consumer, path, None)
            assert fast[0] == plain[0] and np.array_equal(fast[1], plain[1])
        checked += 1
    assert checked >= 4
