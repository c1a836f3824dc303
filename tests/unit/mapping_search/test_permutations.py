"""Williams multiset permutation order and ordering constraints (docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation)."""

import hashlib
import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zigzag.mapping_search.loop_factors import loop_prime_factors, nb_orderings
from zigzag.mapping_search.permutations import (
    OrderingConstraints,
    multiset_permutations,
    ordering_constraints,
    satisfies,
)
from support import TESTS

ORACLE = json.loads((TESTS / "data" / "loma_oracle.json").read_text())
LAYER2_TEMPORAL = {"K": 2, "C": 2, "OY": 56, "OX": 56, "FY": 3, "FX": 3}


def as_items(multiset):
    return [tuple(x) if isinstance(x, list) else x for x in multiset]


def matches_record(sequence, record):
    text = json.dumps(sequence, separators=(",", ":"))
    assert len(sequence) == record["count"]
    assert hashlib.sha256(text.encode()).hexdigest() == record["sha256"]
    if "sequence" in record:
        assert json.loads(text) == record["sequence"]


# --- B.4 oracles ---------------------------------------------------------------------------------


def test_williams_order_small_oracle():
    got = ["".join(map(str, p)) for p in multiset_permutations([1, 1, 2, 3])]
    assert got == [
        "3211",
        "1321",
        "3121",
        "1312",
        "1132",
        "3112",
        "2311",
        "1231",
        "2131",
        "1213",
        "1123",
        "2113",
    ]


def test_williams_order_lpf_oracle():
    k, c, oy = ("K", 2), ("C", 2), ("OY", 7)
    assert list(multiset_permutations([k, c, oy])) == [
        (oy, k, c),
        (c, oy, k),
        (oy, c, k),
        (k, oy, c),
        (c, k, oy),
        (k, c, oy),
    ]


def test_layer2_first_orderings():
    orderings = multiset_permutations(loop_prime_factors(LAYER2_TEMPORAL, 6))
    assert list(itertools.islice(orderings, 3)) == [
        (("OY", 56), ("OX", 56), ("K", 2), ("FY", 3), ("FX", 3), ("C", 2)),
        (("C", 2), ("OY", 56), ("OX", 56), ("K", 2), ("FY", 3), ("FX", 3)),
        (("OY", 56), ("C", 2), ("OX", 56), ("K", 2), ("FY", 3), ("FX", 3)),
    ]


def test_degenerate_inputs():
    assert list(multiset_permutations([("K", 1)])) == [(("K", 1),)]
    assert list(multiset_permutations([5, 5, 5])) == [(5, 5, 5)]
    assert list(multiset_permutations([])) == [()]


def test_input_is_not_modified():
    items = [1, 3, 2]
    list(multiset_permutations(items))
    assert items == [1, 3, 2]


@pytest.mark.parametrize("case", ORACLE["permutations"], ids=lambda c: str(c["items"]))
def test_order_matches_reference(case):
    matches_record(list(multiset_permutations(as_items(case["items"]))), case)


@given(st.lists(st.integers(min_value=0, max_value=3), max_size=7))
def test_permutation_properties(items):
    orderings = list(multiset_permutations(items))
    assert len(orderings) == nb_orderings(items)
    assert len(set(orderings)) == len(orderings)
    assert all(sorted(p) == sorted(items) for p in orderings)
    assert orderings[0] == tuple(sorted(items, reverse=True))
    for previous, current in zip(orderings, orderings[1:]):  # each step is one prefix shift
        assert any(
            current == (previous[k],) + previous[:k] + previous[k + 1 :]
            for k in range(1, len(items))
        )


# --- D.2 constraints -----------------------------------------------------------------------------


def test_ordering_constraints_from_user_ordering():
    constraints = ordering_constraints([("OX", None), ("FX", 3)])
    assert constraints == OrderingConstraints(dim_at=((0, "OX"),), loop_at=((1, ("FX", 3)),))
    assert constraints.fixed_loops == [("FX", 3)]
    assert constraints
    assert not ordering_constraints([])


def test_wildcard_counts_from_the_outermost_end():
    constraints = ordering_constraints([("K", None), ("*", None), ("C", 2), ("OX", None)])
    assert constraints.dim_at == ((0, "K"), (-1, "OX"))
    assert constraints.loop_at == ((-2, ("C", 2)),)


def test_satisfies():
    ordering = (("OX", 56), ("FX", 3), ("K", 2))
    assert satisfies(ordering, ordering_constraints([("OX", None), ("FX", 3)]))
    assert not satisfies(ordering, ordering_constraints([("OX", None), ("FX", 2)]))
    assert not satisfies(ordering, ordering_constraints([("FX", None)]))
    assert satisfies(
        ordering, OrderingConstraints(dim_at=((-1, "K"),), loop_at=((-3, ("OX", 56)),))
    )
    assert not satisfies(ordering, OrderingConstraints(dim_at=((3, "K"),)))  # reference: IndexError
    assert not satisfies(ordering, OrderingConstraints(loop_at=((-4, ("OX", 56)),)))
    assert satisfies(ordering, OrderingConstraints())


def constrained(temporal, lpf_limit, user_ordering):
    constraints = ordering_constraints(user_ordering)
    lpfs = loop_prime_factors(temporal, lpf_limit, constraints.fixed_loops)
    return [p for p in multiset_permutations(lpfs) if satisfies(p, constraints)]


def test_layer2_user_ordering_oracle():
    orderings = constrained(LAYER2_TEMPORAL, 6, [("OX", None), ("FX", 3)])
    assert len(orderings) == 24
    assert orderings[0] == (("OX", 56), ("FX", 3), ("OY", 56), ("K", 2), ("FY", 3), ("C", 2))


def test_gemm_l1_user_ordering_oracle():
    orderings = constrained(
        {"D0": 16, "D1": 16, "D2": 16}, 3, [("D1", None), ("D2", None), ("D0", None)]
    )
    assert orderings == [(("D1", 16), ("D2", 16), ("D0", 16))]


def test_distinct_prime_fixed_loop_is_placed():
    # The reference crashes on [OX, 56]; here the loop exists and sits at its position.
    orderings = constrained(LAYER2_TEMPORAL, 6, [("K", None), ("OX", 56)])
    assert len(orderings) == 24
    assert all(p[0][0] == "K" and p[1] == ("OX", 56) for p in orderings)


@pytest.mark.parametrize("case", ORACLE["constrained"], ids=lambda c: str(c["items"]))
def test_constrained_order_matches_reference(case):
    constraints = OrderingConstraints(
        dim_at=tuple((p, d) for p, d in case["dim_at"]),
        loop_at=tuple((p, tuple(loop)) for p, loop in case["loop_at"]),
    )
    got = [p for p in multiset_permutations(as_items(case["items"])) if satisfies(p, constraints)]
    matches_record(got, case)
