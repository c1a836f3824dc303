"""Spatial mapping generation (docs/models/mapping-search.md#spatial-mappings), checked against the reference.

The figures in the named tests are the spec's oracles; ``spatial_oracle.json`` holds the
reference's ranked candidate lists for many more cases (``tools/make_spatial_oracle.py``).
"""

from __future__ import annotations

import json
import logging
from functools import cache
from pathlib import Path

import pytest
import yaml

from support import TESTS, REFERENCE as REF
from zigzag.errors import InputError, MappingError
from zigzag.io.loaders import accelerator_from_dict, load_accelerator, load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import (
    effective_hints,
    fitting_spatial_mappings,
    generate_spatial_mappings,
    innermost_overflow,
    limit_to_capacity,
    maximal_unrollings,
    spatial_mapping_candidates,
)

DATA = TESTS / "data"
MAPPINGS = DATA / "mappings"
NO_SM = MAPPINGS / "default_no_sm_tpu.yaml"
ORACLE_PATH = DATA / "spatial_oracle.json"


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _path(text: str) -> Path:
    return REF / text[5:] if text.startswith("@ref/") else DATA.parent.parent / text


@cache
def _accelerator(name: str):
    return load_accelerator(REF / "hardware" / f"{name}.yaml")


@cache
def _layers(mapping: Path) -> dict:
    workload = load_workload(REF / "workload" / "resnet18.yaml", mapping)
    return {layer.id: layer for layer in workload.layers}


def _layer(layer_id: int, mapping: Path = NO_SM):
    return _layers(mapping)[layer_id]


def _with_entry(layer_id: int, **entry):
    """Layer ``layer_id`` of resnet18.yaml under a one-entry mapping ``default``."""
    workload = load_workload(
        REF / "workload" / "resnet18.yaml", [MappingEntry(name="default", **entry)]
    )
    return next(layer for layer in workload.layers if layer.id == layer_id)


def _patched(name: str, patch: dict):
    """A shipped accelerator with ``{dotted.path: value}`` changes to its YAML document."""
    data = yaml.safe_load((REF / "hardware" / f"{name}.yaml").read_text())
    for dotted, value in patch.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return accelerator_from_dict(validate_accelerator(data, f"{name} (patched)"))


def _pairs(mapping: dict) -> list:
    """A mapping as nested lists of pairs, so that comparisons see key order."""
    return [[oa, [[dim, f] for dim, f in unrolling.items()]] for oa, unrolling in mapping.items()]


def _ranked(layer, accelerator, **kwargs) -> list:
    return [(_pairs(m), i) for m, i in spatial_mapping_candidates(layer, accelerator, **kwargs)]


def sm(**oa_dims) -> list:
    """``sm(D1="OX 32", D2="FX 3 C 8")`` -> pairs form."""
    result = []
    for oa, text in oa_dims.items():
        words = text.split()
        result.append([oa, [[words[i], int(words[i + 1])] for i in range(0, len(words), 2)]])
    return result


# ----- A.1 / A.2 ---------------------------------------------------------------------------------
def test_max_unrolling_tpu_like_is_not_limited():
    expected = {"B": 1, "K": 32, "C": 32, "OY": 32, "OX": 32, "FY": 3, "FX": 3}
    result = maximal_unrollings(_layer(2), _accelerator("tpu_like"))
    assert result == {"D1": expected, "D2": expected}
    assert list(result["D1"]) == list(expected)


def test_bandwidth_limits_non_irrelevant_dims_on_served_oa_dims():
    # rf_2B (O, 16-bit write-from-low port) now serves D2: O's r dims (K, OY, OX; B has size 1)
    # are limited to 16 // 16 = 1 there; C, FY, FX (ir for O) and D1 stay free.
    accelerator = _patched("tpu_like", {"memories.rf_2B.served_dimensions": ["D2"]})
    result = maximal_unrollings(_layer(2), accelerator)
    assert result["D2"] == {"B": 1, "K": 1, "C": 32, "OY": 1, "OX": 1, "FY": 3, "FX": 3}
    assert result["D1"] == maximal_unrollings(_layer(2), _accelerator("tpu_like"))["D1"]


def test_bandwidth_limit_skipped_without_port():
    # No port serves (O, fl): the reference crashes; we leave the unrollings unlimited. A file saying
    # so is rejected when read, so the accelerator is changed after validation, as Python code may build it.
    data = validate_accelerator(
        yaml.safe_load((REF / "hardware" / "tpu_like.yaml").read_text()), "tpu_like"
    )
    data["memories"]["rf_2B"]["served_dimensions"] = ["D2"]
    data["memories"]["rf_2B"]["ports"][3]["allocation"] = ["O, fh"]
    with pytest.raises(InputError, match=r"memories\.rf_2B\.ports: no port carries 'O, fl'"):
        validate_accelerator(data, "tpu_like (patched)")
    assert maximal_unrollings(_layer(2), accelerator_from_dict(data))["D2"]["K"] == 32


def test_hints_are_completed_without_mutating_the_layer():
    layer = _layer(2, MAPPINGS / "spatial_hint_partly_invalid_tpu.yaml")
    before = dict(layer.mapping.spatial_mapping_hint)
    hints = effective_hints(layer, _accelerator("tpu_like"))
    assert hints["D1"] == ["K", "Z"]
    assert hints["D2"] == ["FY", "FX", "B", "OX", "C", "K", "OY"]
    assert layer.mapping.spatial_mapping_hint == before == {"D1": ("K", "Z"), "D2": ("G",)}


# ----- A.4 ---------------------------------------------------------------------------------------
def test_fully_specified_add_layer_keeps_empty_oa_dim():
    layer = _layer(4, REF / "mapping" / "tpu_like.yaml")
    result = generate_spatial_mappings(layer, _accelerator("tpu_like"))
    assert [_pairs(m) for m in result] == [sm(D1="G 32", D2="")]


def test_fully_specified_first_layer_is_clipped_to_layer_size():
    layer = _layer(0, REF / "mapping" / "tpu_like.yaml")
    result = generate_spatial_mappings(layer, _accelerator("tpu_like"), nb_mappings=5)
    assert [_pairs(m) for m in result] == [sm(D1="C 3", D2="K 32")]


# ----- A.5.2 / A.5.3 -----------------------------------------------------------------------------
TIE_BLOCK = [
    "OX C",
    "OX K",
    "OX OY",
    "C OX",
    "C K",
    "C OY",
    "K OX",
    "K C",
    "K OY",
    "OY OX",
    "OY C",
    "OY K",
]


def test_layer2_tpu_like_ranking():
    ranked = _ranked(_layer(2), _accelerator("tpu_like"))
    assert len(ranked) == 789
    tie = [sm(D1=f"{a} 32", D2=f"{b} 32") for a, b in (pair.split() for pair in TIE_BLOCK)]
    assert ranked[:12] == [(m, 1055.0) for m in tie]
    assert [i for _, i in ranked[12:36]] == [527.0] * 24
    assert ranked[12][0] == sm(D1="OX 32", D2="C 16")
    assert ranked[36][1] < 527.0


def test_layer2_tpu_like_top3_generated():
    result = generate_spatial_mappings(_layer(2), _accelerator("tpu_like"))
    assert [_pairs(m) for m in result] == [
        sm(D1="OX 32", D2="C 32"),
        sm(D1="OX 32", D2="K 32"),
        sm(D1="OX 32", D2="OY 32"),
    ]


def test_layer30_tpu_like_ranking():
    ranked = _ranked(_layer(30), _accelerator("tpu_like"))
    assert len(ranked) == 287
    assert ranked[:3] == [
        (sm(D1="C 32", D2="K 32"), 1055.0),
        (sm(D1="K 32", D2="C 32"), 1055.0),
        (sm(D1="C 32", D2="K 16"), 527.0),
    ]
    assert (sm(D1="C 32", D2="C 16"), 512.0) in ranked


MIXING_ORDER = [
    ("C 32", 1055),
    ("FX 3 C 8", 791),
    ("C 8 FY 3", 791),
    ("FX 3 C 2 FY 3", 593),
    ("C 16", 527),
    ("FX 3 C 4", 395),
    ("C 4 FY 3", 395),
    ("FX 3 FY 3", 296),
    ("C 8", 263),
    ("FX 3 C 2", 197),
    ("C 2 FY 3", 197),
    ("C 4", 131),
    ("FX 3", 98),
    ("FY 3", 98),
    ("C 2", 65),
    ("FX 1", 32),
    ("C 1", 32),
    ("FY 1", 32),
]


def test_mixing_with_hint_full_order():
    layer = _layer(2, MAPPINGS / "spatial_mix_hint_tpu.yaml")
    ranked = _ranked(layer, _accelerator("tpu_like"), enable_mixing=True)
    assert ranked == [(sm(D1="K 32", D2=d2), float(i)) for d2, i in MIXING_ORDER]


def test_partly_invalid_hint():
    layer = _layer(2, MAPPINGS / "spatial_hint_partly_invalid_tpu.yaml")
    ranked = _ranked(layer, _accelerator("tpu_like"))
    assert len(ranked) == 164
    assert [m for m, _ in ranked[:3]] == [
        sm(D1="K 32", D2="OX 32"),
        sm(D1="K 32", D2="C 32"),
        sm(D1="K 32", D2="OY 32"),
    ]


def test_eyeriss_layer8_top():
    ranked = _ranked(_layer(8), _accelerator("eyeriss_like"))
    assert len(ranked) == 591
    assert ranked[0][0] == sm(D1="OX 14", D2="C 12")


def test_ascend_add_layer_keeps_factor_one_entries():
    ranked = _ranked(_layer(4), _accelerator("ascend_like"))
    assert len(ranked) == 1024
    assert ranked[0][0] == sm(D1="G 16", D2="G 1", D3="G 1", D4="G 1")


# ----- A.3 / A.6 ---------------------------------------------------------------------------------
def test_unrolling_beyond_layer_size_is_removed_from_first_popped_oa_dim():
    layer = _layer(2, MAPPINGS / "spatial_overlap_tpu.yaml")
    result = generate_spatial_mappings(layer, _accelerator("tpu_like"))
    assert [_pairs(m) for m in result] == [sm(D1="", D2="C 32")]


SMALL_OUTPUT_RF = {
    "memories.rf_2B.size": 128,
    "memories.rf_2B.served_dimensions": ["D1", "D2"],
    "memories.rf_2B.ports.3.bandwidth_max": 1024,
}


def test_capacity_limit_shares_new_factor_between_equal_old_factors():
    # 8 outputs fit; K 4 x OX 4 is cut down to 3 x 3 = 9 (the old->new table is keyed by the old
    # factor, so both 4s take the last new value, 3): the reference's quirk, reproduced.
    layer = _layer(2, MAPPINGS / "spatial_capacity_tpu.yaml")
    result = generate_spatial_mappings(layer, _patched("tpu_like", SMALL_OUTPUT_RF))
    assert [_pairs(m) for m in result] == [sm(D1="K 3", D2="OX 3")]


# A weight register shared by the whole array (served D1 and D2) holding two 8-bit weights, fed
# 16 bits at a time: each array dim may unroll a weight dim twice, but not both together.
SHARED_WEIGHT_RF = {
    "memories.rf_128B.size": 16,
    "memories.rf_128B.served_dimensions": ["D1", "D2"],
    **{f"memories.rf_128B.ports.{i}.bandwidth_{m}": 16 for i in (0, 1) for m in ("min", "max")},
}


def test_overflowing_candidates_give_way_to_smaller_unrollings():
    layer, accelerator = _layer(30), _patched("tpu_like", SHARED_WEIGHT_RF)  # K 1000, C 512, 1x1
    ranked = spatial_mapping_candidates(layer, accelerator)
    # the four best (C 2 x K 2, ...) keep 4 weights even after the capacity limit (equal old
    # factors share the new value, the reference's quirk): no loop ordering could fit them
    for mapping, _ in ranked[:4]:
        failure = innermost_overflow(
            limit_to_capacity(mapping, layer, accelerator), layer, accelerator
        )
        assert str(failure) == "W needs 32 bits of rf_128B, which holds 16 bits"
    reference = generate_spatial_mappings(layer, accelerator)
    assert reference == [limit_to_capacity(m, layer, accelerator) for m, _ in ranked[:3]]
    result = fitting_spatial_mappings(layer, accelerator)
    assert [_pairs(m) for m in result] == [
        sm(D1="FY 1", D2="C 2"),
        sm(D1="FY 1", D2="K 2"),
        sm(D1="FX 1", D2="C 2"),
    ]  # the next ones in the ranking (indicator 2.0), in its order
    assert all(innermost_overflow(m, layer, accelerator) is None for m in result)
    best, stats = search_layer(layer, accelerator, SearchOptions(lpf_limit=4))
    assert stats.spatial_mappings == 3 and best.latency > 0


def test_nothing_fitting_keeps_the_best_for_the_search_to_report():
    # an output register of 8 bits cannot hold one 16-bit partial sum, whatever the unrolling
    accelerator = _patched("tpu_like", {"memories.rf_2B.size": 8})
    layer = _layer(30)
    ranked = spatial_mapping_candidates(layer, accelerator)
    assert fitting_spatial_mappings(layer, accelerator) == [m for m, _ in ranked[:3]]
    message = "operand O needs at least 16 bits in memory rf_2B, which holds 8 bits"
    with pytest.raises(MappingError, match=message):
        search_layer(layer, accelerator, SearchOptions(lpf_limit=4))


# ----- errors ------------------------------------------------------------------------------------
def test_unknown_oa_dim_in_mapping():
    layer = _with_entry(2, spatial_mapping={"D1": (("K", 32),), "D3": (("C", 2),)})
    message = r"mapping entry 'default': spatial_mapping\.D3: .*no array dimension 'D3'"
    with pytest.raises(InputError, match=message):
        spatial_mapping_candidates(layer, _accelerator("tpu_like"))


def test_mixed_mapping_overfilling_an_oa_dim():
    layer = _with_entry(2, spatial_mapping={"D1": (("K", 32), ("C", 2)), "D2": (("OX", 4),)})
    with pytest.raises(
        InputError, match=r"spatial_mapping\.D1: .*K 32 x C 2 = 64 exceeds the size 32 of D1"
    ):
        generate_spatial_mappings(layer, _accelerator("tpu_like"))


def test_mixed_mapping_fitting_after_clipping_is_accepted():
    layer = _with_entry(0, spatial_mapping={"D1": (("C", 32), ("FX", 7)), "D2": (("K", 32),)})
    result = generate_spatial_mappings(layer, _accelerator("tpu_like"))
    assert [_pairs(m) for m in result] == [sm(D1="C 3 FX 7", D2="K 32")]


# O's 8-bit port on D2 cannot carry one 16-bit partial sum (K, OY, OX, B blocked on D2), W's 4-bit
# port on D2 not one 8-bit weight (K, C, FY, FX, B blocked): nothing can be unrolled on D2.
NARROW_OUTPUT_PORT = {
    "memories.rf_2B.served_dimensions": ["D2"],
    "memories.rf_2B.ports.3.bandwidth_min": 8,
    "memories.rf_2B.ports.3.bandwidth_max": 8,
}
NARROW_PORTS = {
    **NARROW_OUTPUT_PORT,
    "memories.rf_128B.served_dimensions": ["D2"],
    "memories.rf_128B.ports.0.bandwidth_min": 4,
    "memories.rf_128B.ports.0.bandwidth_max": 4,
}


def test_hint_allowing_only_unfeedable_dims():
    accelerator = _patched("tpu_like", NARROW_OUTPUT_PORT)
    layer = _with_entry(
        2, spatial_mapping={"D1": (("C", 32),)}, spatial_mapping_hint={"D2": ("K", "OX")}
    )
    with pytest.raises(
        InputError, match=r"spatial_mapping_hint\.D2: none of .* can be unrolled on D2"
    ):
        spatial_mapping_candidates(layer, accelerator)


def test_no_feedable_dim_at_all_is_a_mapping_error():
    with pytest.raises(MappingError, match="no valid spatial mapping on D2"):
        spatial_mapping_candidates(_layer(2), _patched("tpu_like", NARROW_PORTS))


def test_given_unrolling_on_unfeedable_dim_is_a_mapping_error():
    layer = _with_entry(2, spatial_mapping={"D1": (("C", 32),), "D2": (("K", 32),)})
    with pytest.raises(MappingError, match="K cannot be unrolled on D2"):
        spatial_mapping_candidates(layer, _patched("tpu_like", NARROW_PORTS))


# ----- the reference's ranked lists --------------------------------------------------------------
ORACLE = json.loads(ORACLE_PATH.read_text())["cases"] if ORACLE_PATH.exists() else {}


ORACLE_PARAMS = [
    pytest.param(name, marks=[pytest.mark.slow] if case.get("count", 0) > 30000 else [], id=name)
    for name, case in ORACLE.items()
]


@pytest.mark.parametrize("name", ORACLE_PARAMS)
def test_matches_reference_ranking(name):
    case = ORACLE[name]
    hardware = Path(case["hardware"]).stem
    patch = case.get("hardware_patch")
    accelerator = _patched(hardware, patch) if patch else _accelerator(hardware)
    layer = _layers(_path(case["mapping"]))[case["layer"]]
    ranked = _ranked(layer, accelerator, enable_mixing=case["mixing"])
    assert len(ranked) == case["count"]
    assert [m for m, _ in ranked[: len(case["candidates"])]] == [
        c["mapping"] for c in case["candidates"]
    ]
    for (_, ours), theirs in zip(ranked, case["candidates"]):
        assert theirs["indicator"] is None or ours == theirs["indicator"]
    generated = generate_spatial_mappings(layer, accelerator, enable_mixing=case["mixing"])
    assert [_pairs(m) for m in generated] == case["generated"]


def test_oracle_covers_the_requested_cases():
    assert len(ORACLE) >= 72 and not any("skipped" in c or "error" in c for c in ORACLE.values())
