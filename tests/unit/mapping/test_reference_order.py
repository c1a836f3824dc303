"""Reproduction of the reference's set iteration order (docs/models/mapping-search.md#spatial-mappings)."""

import json

import pytest

from zigzag.mapping.reference_order import (
    reference_combinations,
    reference_hash,
    reference_set_order,
    reference_set_pop,
)
from support import TESTS

ORACLE = json.loads((TESTS / "data" / "loma_oracle.json").read_text())

LAYER_DIM_HASHES = {
    "B": 2274680621932004355,
    "K": 808955158820251385,
    "C": 1154411953581605750,
    "G": 1958728070581703856,
    "OY": 1775822064850599801,
    "OX": 1754239838488883382,
    "FY": 1607686027741749687,
    "FX": 529600628638832194,
    "IY": 51716179336379593,
    "IX": 1920205184214324622,
    "D": 636768403010484021,
    "H": 388853881137512038,
}
OA_DIM_HASHES = {
    "D1": 2048910558639910025,
    "D2": 386846459442819546,
    "D3": 286093410687053097,
    "D4": 1190809941726157689,
}


@pytest.mark.parametrize("name, expected", LAYER_DIM_HASHES.items())
def test_layer_dim_hashes(name, expected):
    assert reference_hash(name, "layer_dim") == expected


@pytest.mark.parametrize("name, expected", OA_DIM_HASHES.items())
def test_oa_dim_hashes(name, expected):
    assert reference_hash(name, "oa_dim") == expected


# Produced with the reference (zigzag-dse 3.8.5): hash(LayerOperand(n)) / hash(MemoryOperand(n)).
OPERAND_HASHES = [
    ("I", "layer_operand", 482741346119440542),
    ("W", "layer_operand", 2011023895775808636),
    ("O", "layer_operand", 1450052191926399694),
    ("I1", "memory_operand", 1172929494150382757),
    ("I2", "memory_operand", 2014740523613809775),
    ("O", "memory_operand", 760636358684117364),
]


@pytest.mark.parametrize("name, kind, expected", OPERAND_HASHES)
def test_operand_hashes(name, kind, expected):
    assert reference_hash(name, kind) == expected


def test_operand_orders():
    assert reference_set_order(["I1", "I2", "O"], "memory_operand") == ["O", "I1", "I2"]
    assert reference_set_order(["O", "W", "I"], "layer_operand") == ["I", "W", "O"]


def test_kinds_hash_differently():
    hashes = {
        reference_hash("D1", kind)
        for kind in ("layer_dim", "oa_dim", "layer_operand", "memory_operand")
    }
    assert len(hashes) == 4


@pytest.mark.parametrize(
    "names, kind, expected",
    [
        ("B K C OY OX FY FX", "layer_dim", "FY FX B OX C K OY"),
        ("B K G OX OY C FX FY", "layer_dim", "FY FX B G OX C K OY"),
        ("C D K", "layer_dim", "K D C"),
        ("B G OY OX", "layer_dim", "G OY B OX"),
        ("C FX FY", "layer_dim", "FX C FY"),
        ("D1 D2", "oa_dim", "D1 D2"),
        ("D1 D2 D3", "oa_dim", "D1 D2 D3"),
        ("D1 D2 D3 D4", "oa_dim", "D1 D2 D4 D3"),
    ],
)
def test_spec_iteration_orders(names, kind, expected):
    assert reference_set_order(names.split(), kind) == expected.split()


def test_duplicates_are_dropped_first_kept():
    assert reference_set_order(["K", "C", "K"], "layer_dim") == reference_set_order(
        ["K", "C"], "layer_dim"
    )


def test_pop_and_combinations():
    names = "B K C OY OX FY FX".split()
    assert reference_set_pop(names, "layer_dim") == "FY"
    assert reference_set_pop(["D2", "D1"], "oa_dim") == "D1"
    assert list(reference_combinations(["C", "D", "K"], "layer_dim", 2)) == [
        ("K", "D"),
        ("K", "C"),
        ("D", "C"),
    ]


@pytest.mark.parametrize("case", ORACLE["set_order"], ids=lambda c: f"{c['kind']}-{c['names']}")
def test_order_matches_reference(case):
    assert reference_set_order(case["names"], case["kind"]) == case["order"]
