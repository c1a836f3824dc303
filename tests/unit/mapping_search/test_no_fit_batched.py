"""The batched no-fit diagnosis (zigzag/mapping_search/batched/no_fit.py) names the failure the scalar
one names (zigzag.mapping_search.loma.no_fit_diagnosis), word for word, for every kind of failure:
an operand's first take overflowing a memory, the operands' smallest takes overflowing together,
a top memory unable to hold its whole operand."""

from __future__ import annotations

import random

import yaml

from support import DATA, REPO
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import loma, spatial_mapping
from zigzag.mapping_search.batched import no_fit
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def _variant(sizes: dict):
    document = yaml.safe_load(BASE.read_text())
    for name, size in sizes.items():
        document["memories"][name]["size"] = size
    return accelerator_from_dict(validate_accelerator(document, "small"))


def _fields(failure):
    if failure is None:
        return None
    return (failure.memory, failure.operands, failure.needed, failure.available, failure.whole)


def _cases(seed: int, count: int, ordering=None):
    """Seeded variants of the 32x32 example with small memories, a layer and a spatial mapping
    (``ordering``: every mapping entry's ``temporal_ordering``, position constraints)."""
    mapping = yaml.safe_load((REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text())
    if ordering is not None:
        mapping = [{**entry, "temporal_ordering": ordering} for entry in mapping]
    layers = load_workload(str(WORKLOAD), [MappingEntry.from_dict(e) for e in mapping]).layers
    rng = random.Random(seed)
    for _ in range(count):
        sizes = {
            "unified_buffer": 2 ** rng.randint(10, 20),
            "accumulators": 2 ** rng.randint(6, 16),
            "dram": 2 ** rng.randint(14, 24),
            "w_reg": rng.choice([8, 16]),
            "acc_reg": rng.choice([16, 32]),
        }
        accelerator = _variant(sizes)
        layer = rng.choice(layers)
        array_mapping = rng.choice(generate_spatial_mappings(layer, accelerator, nb_mappings=3))
        fractional, _ = spatial_mapping.convert(array_mapping, layer, accelerator)
        yield layer, accelerator, fractional, rng.random() < 0.5


def _same(cases) -> set:
    """Both diagnoses of each case compared; the kinds of failure named."""
    kinds = set()
    for layer, accelerator, fractional, even in cases:
        options = dict(even=even, lpf_limit=4, sample=100)
        expected = loma.no_fit_diagnosis(layer, accelerator, fractional, **options)
        found = no_fit.no_fit_diagnosis(layer, accelerator, fractional, **options)
        assert _fields(found) == _fields(expected)
        assert str(loma.no_fit_message(layer, "v", found)) == str(
            loma.no_fit_message(layer, "v", expected)
        )
        kinds.add(None if expected is None else ("together" in expected.operands, expected.whole))
    return kinds


def test_batched_diagnosis_names_the_scalar_failure(monkeypatch):
    fallbacks = []
    scalar = no_fit.scalar_diagnosis
    monkeypatch.setattr(
        no_fit, "scalar_diagnosis", lambda *a, **k: fallbacks.append(1) or scalar(*a, **k)
    )
    kinds = _same(_cases(2, 16)) - {None}
    assert fallbacks == []  # every case found by the batched pass
    # alone and not the top memory, together, and the top memory's whole operand
    assert kinds == {(False, False), (True, False), (False, True)}


def test_batched_diagnosis_under_ordering_constraints():
    """Only the sampled orderings the user's temporal_ordering allows are diagnosed, in both."""
    kinds = _same(_cases(3, 4, [["K", None]]))  # the innermost loop a K loop
    kinds |= _same(_cases(4, 4, [["*", None], ["OX", None]]))  # the outermost an OX loop
    assert kinds - {None}
