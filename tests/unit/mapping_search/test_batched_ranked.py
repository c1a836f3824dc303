"""The batched search of a spatial mapping whose figures leave float64's exact range (a Llama-3-8B prefill's
matrix products at 2,048 tokens): the batched model ranks, the scalar model decides; the result is the
scalar loop's, mapping included (zigzag/mapping_search/batched/ranked.py)."""

from __future__ import annotations

import pytest

from support import REPO
from zigzag.io.loaders import build_workload, load_accelerator, load_mapping
from zigzag.mapping_search import batched
from zigzag.mapping_search.batched.candidates import FiguresTooLarge
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions

HARDWARE = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"


@pytest.fixture(scope="module")
def q_proj():
    workload = build_workload(
        "llama-3-8b", load_mapping(MAPPING), layers=1, phase="prefill", tokens=2048
    )
    layer = next(layer for layer in workload.layers if layer.name.endswith("q_proj/MatMul"))
    return layer, load_accelerator(HARDWARE)


def _figures(result):
    return (
        result.energy_total,
        result.latency_total2,
        repr(result.temporal_mapping),
        repr(result.spatial_mapping),
    )


@pytest.mark.parametrize(
    "opt, latency_model",
    [("latency", "bandwidth_bound"), ("energy", "zigzag"), ("EDP", "zigzag")],
)
def test_ranked_search_gives_the_scalar_result(q_proj, monkeypatch, opt, latency_model):
    layer, accelerator = q_proj
    options = SearchOptions(lpf_limit=4, opt=opt, latency_model=latency_model)
    calls = []
    rank = batched.rank_then_rescore

    def counted(*args, **kwargs):
        calls.append(1)
        return rank(*args, **kwargs)

    monkeypatch.setattr(batched, "rank_then_rescore", counted)
    ranked, _ = search_layer(layer, accelerator, options, show_progress=False)
    assert calls  # the ranked path ran
    monkeypatch.setenv(batched.ENGINE_ENV, "scalar")
    scalar, _ = search_layer(layer, accelerator, options, show_progress=False)
    assert _figures(ranked) == _figures(scalar)


def test_the_exact_model_still_refuses_those_figures(q_proj):
    """Without ``approximate`` the batched model refuses the layer (the scalar loop's old hand-over)."""
    from zigzag.mapping_search.spatial_mapping import convert
    from zigzag.mapping_search.batched.candidates import LoopTable
    from zigzag.mapping_search.batched.model import BatchCostModel
    from zigzag.mapping_search.loma import layer_temporal_loops, ordering_factors
    from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

    layer, accelerator = q_proj
    array = generate_spatial_mappings(layer, accelerator)[0]
    fractional, integer = convert(array, layer, accelerator)
    _, factors = ordering_factors(layer, layer_temporal_loops(layer, fractional), 4)
    with pytest.raises(FiguresTooLarge):
        BatchCostModel(layer, accelerator, fractional, integer, LoopTable(factors))
