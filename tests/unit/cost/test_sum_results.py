"""The network sum with its running sums kept in place (zigzag/cost/result.py: ``sum_results``) gives
``CumulativeResult() + r1 + r2 + ...`` exactly: figures, breakdowns, their order, and leaves the
results it adds as they were."""

from __future__ import annotations

import copy
import dataclasses
import functools
import operator

import yaml

from support import DATA, REPO
from zigzag.cost.layer_result import LayerCostResult
from zigzag.cost.result import CostResult, CumulativeResult, sum_results
from zigzag.hardware.zigzag_views import FourWay
from zigzag.io.loaders import load_accelerator, load_workload
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions


def layer_results() -> list:
    entries = yaml.safe_load((REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text())
    layers = load_workload(
        str(DATA / "workflow" / "small_convs.yaml"), [MappingEntry.from_dict(e) for e in entries]
    ).layers
    accelerator = load_accelerator(REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml")
    return [search_layer(layer, accelerator, SearchOptions(lpf_limit=2))[0] for layer in layers]


def odd(result, operand: str):
    """``result`` with one level less for ``operand`` and an operand of its own ("X"), on the
    vector unit: what the sum must merge besides equal hierarchies."""
    trimmed = {}
    for name in ("mem_energy_breakdown", "mem_energy_breakdown_further", "memory_word_access"):
        value = dict(getattr(result, name))
        value[operand] = value[operand][:-1]
        value["X"] = value[operand]
        trimmed[name] = value
    return dataclasses.replace(result, compute_unit="vector_unit", **trimmed)


def test_sum_in_place_equals_pairwise_addition():
    results = layer_results()
    operand = next(iter(results[0].mem_energy_breakdown))
    mixed = [
        results[0],
        odd(results[1], operand),
        results[2],
        results[0] + results[3],  # a cumulative result among layer results
        odd(results[3], operand),
    ]
    before = copy.deepcopy(mixed)
    for sequence in (results, mixed, mixed[1:], []):
        expected = functools.reduce(operator.add, sequence, CumulativeResult())
        summed = sum_results(iter(sequence))
        assert repr(summed) == repr(expected)
        assert summed.to_dict() == expected.to_dict()
        for name in ("mem_energy_breakdown", "memory_word_access"):
            assert list(getattr(summed, name)) == list(getattr(expected, name))  # same order
    assert repr(mixed) == repr(before)  # the results added are left as they were


def test_sum_of_layer_results_equals_sum_of_their_cost_results():
    """The sum reads a LayerCostResult's per-direction levels (FourWay) as plain dicts: the same
    figures as the CostResults they were made from."""
    results = layer_results()
    layers = [
        LayerCostResult.of(r, None, None, access_same_data_considered_as_no_access=True)
        for r in results
    ]
    assert all(
        type(r.memory_word_access[op][0]) is FourWay for r in layers for op in r.memory_word_access
    )
    assert repr(sum_results(layers)) == repr(sum_results(results))


def test_layer_result_made_at_once_equals_the_dataclass_constructor():
    """``LayerCostResult.of`` sets the fields without the generated ``__init__``: the same
    object, field for field, as the constructor gives."""
    result = layer_results()[0]
    made = LayerCostResult.of(result, None, None, latency_model="zigzag")
    built = LayerCostResult(
        **{f.name: getattr(result, f.name) for f in dataclasses.fields(CostResult)},
        layer=None,
        accelerator=None,
        access_same_data_considered_as_no_access=True,
        latency_model="zigzag",
    )
    assert made == built and repr(made) == repr(built)
    assert vars(made) == vars(built)
