"""LOMA temporal loops, prime factorisation and LPF merging (docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation)."""

import json
import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zigzag.mapping_search.loop_factors import (
    effective_lpf_limit,
    loop_prime_factors,
    nb_orderings,
    prime_factors,
    temporal_loop_sizes,
)
from support import TESTS

ORACLE = json.loads((TESTS / "data" / "loma_oracle.json").read_text())

LAYER2 = {"B": 1, "K": 64, "C": 64, "OY": 56, "OX": 56, "FY": 3, "FX": 3}
LAYER2_TEMPORAL = {"K": 2, "C": 2, "OY": 56, "OX": 56, "FY": 3, "FX": 3}


def omega(n: int) -> int:
    return sum(prime_factors(n).values())


def product_per_dim(lpfs):
    result = {}
    for dim, size in lpfs:
        result[dim] = result.get(dim, 1) * size
    return result


# --- B.1 -------------------------------------------------------------------------------------


def test_temporal_loops_layer2():
    assert temporal_loop_sizes(LAYER2, [("K", 32), ("C", 32)]) == LAYER2_TEMPORAL
    assert list(temporal_loop_sizes(LAYER2, [("K", 32), ("C", 32)])) == list(LAYER2_TEMPORAL)


def test_temporal_loops_fractional_unrolling():
    assert temporal_loop_sizes(LAYER2, [("K", 32), ("C", 32), ("OX", 28.0)])["OX"] == 2
    assert temporal_loop_sizes({"B": 1, "C": 512, "K": 1000}, [("K", 31.25), ("C", 32)]) == {
        "C": 16,
        "K": 32,
    }


def test_temporal_loops_repeated_and_deleted_dims():
    # Repeated unrollings divide progressively; once deleted, a dim is skipped.
    assert temporal_loop_sizes({"K": 64}, [("K", 4), ("K", 4)]) == {"K": 4}
    assert temporal_loop_sizes({"K": 64, "C": 3}, [("K", 64), ("K", 2), ("C", 8)]) == {}
    assert temporal_loop_sizes({"K": 10}, [("K", 3)]) == {"K": 4}  # ceil
    assert temporal_loop_sizes({"K": 5}, [("Z", 2)]) == {"K": 5}


@pytest.mark.parametrize("case", ORACLE["temporal"], ids=lambda c: str(c["loop_sizes"]))
def test_temporal_loops_match_reference(case):
    got = temporal_loop_sizes(dict(case["loop_sizes"]), [tuple(u) for u in case["unrollings"]])
    assert list(map(list, got.items())) == case["temporal"]


# --- prime factorisation ---------------------------------------------------------------------


def test_prime_factors_examples():
    assert prime_factors(1) == {}
    assert prime_factors(2) == {2: 1}
    assert prime_factors(56) == {2: 3, 7: 1}
    assert list(prime_factors(2310)) == [2, 3, 5, 7, 11]
    assert prime_factors(1000003) == {1000003: 1}
    assert prime_factors(2**20 * 9) == {2: 20, 3: 2}
    with pytest.raises(ValueError):
        prime_factors(0)


@given(st.integers(min_value=1, max_value=10**7))
def test_prime_factors_properties(n):
    factors = prime_factors(n)
    assert math.prod(p**m for p, m in factors.items()) == n
    assert list(factors) == sorted(factors)
    assert all(
        prime_factors(p) == {p: 1} and all(p % d for d in range(2, math.isqrt(p) + 1))
        for p in factors
    )


# --- B.2 / B.3 -------------------------------------------------------------------------------


def test_effective_lpf_limit():
    assert effective_lpf_limit(None, 6) is None
    assert effective_lpf_limit(2, 6) == 6
    assert effective_lpf_limit(7, 6) == 7


LAYER2_TABLE = [
    (2, [("K", 2), ("C", 2), ("OY", 56), ("OX", 56), ("FY", 3), ("FX", 3)], 720),
    (4, [("K", 2), ("C", 2), ("OY", 56), ("OX", 56), ("FY", 3), ("FX", 3)], 720),
    (5, [("K", 2), ("C", 2), ("OY", 56), ("OX", 56), ("FY", 3), ("FX", 3)], 720),
    (6, [("K", 2), ("C", 2), ("OY", 56), ("OX", 56), ("FY", 3), ("FX", 3)], 720),
    (7, [("K", 2), ("C", 2), ("OY", 56), ("OX", 7), ("OX", 8), ("FY", 3), ("FX", 3)], 5040),
    (
        8,
        [("K", 2), ("C", 2), ("OY", 7), ("OY", 8), ("OX", 7), ("OX", 8), ("FY", 3), ("FX", 3)],
        40320,
    ),
    (
        10,
        [
            ("K", 2),
            ("C", 2),
            ("OY", 2),
            ("OY", 4),
            ("OY", 7),
            ("OX", 2),
            ("OX", 4),
            ("OX", 7),
            ("FY", 3),
            ("FX", 3),
        ],
        3628800,
    ),
    (
        12,
        [("K", 2), ("C", 2)]
        + [("OY", 2)] * 3
        + [("OY", 7)]
        + [("OX", 2)] * 3
        + [("OX", 7), ("FY", 3), ("FX", 3)],
        13305600,
    ),
]


@pytest.mark.parametrize("limit, lpfs, count", LAYER2_TABLE)
def test_layer2_lpf_table(limit, lpfs, count):
    got = loop_prime_factors(LAYER2_TEMPORAL, limit)
    assert got == lpfs
    assert nb_orderings(got) == count


@pytest.mark.parametrize(
    "temporal, lpfs, count",
    [
        (
            {"K": 2, "OX": 112, "OY": 112, "FX": 7, "FY": 7},
            [("K", 2), ("OX", 112), ("OY", 7), ("OY", 16), ("FX", 7), ("FY", 7)],
            720,
        ),
        ({"C": 16, "K": 32}, [("C", 2), ("C", 2), ("C", 4), ("K", 2), ("K", 4), ("K", 4)], 180),
        (
            {"G": 64, "OY": 28, "OX": 28, "FX": 3, "FY": 3},
            [("G", 64), ("OY", 28), ("OX", 4), ("OX", 7), ("FX", 3), ("FY", 3)],
            720,
        ),
    ],
)
def test_other_lpf_oracles_at_limit_6(temporal, lpfs, count):
    got = loop_prime_factors(temporal, 6)
    assert got == lpfs
    assert nb_orderings(got) == count


def test_no_limit_keeps_all_primes():
    got = loop_prime_factors(LAYER2_TEMPORAL, None)
    assert len(got) == 12
    assert nb_orderings(got) == 13305600


def test_no_temporal_loop_gives_pseudo_loop():
    assert loop_prime_factors({}, 6, pseudo_dim="B") == [("B", 1)]
    assert loop_prime_factors({}, 0, pseudo_dim="B") == [("B", 1)]  # the reference crashes here
    assert loop_prime_factors({}, 6) == []


# --- D.2 static sizes --------------------------------------------------------------------------


def test_prime_fixed_loop_is_never_merged():
    # [OX, *], [FX, 3] oracle case: the fixed prime changes nothing at limit 6.
    assert loop_prime_factors(LAYER2_TEMPORAL, 6, [("FX", 3)]) == LAYER2_TABLE[3][1]
    got = loop_prime_factors({"OX": 56}, 1, [("OX", 2)])
    assert got == [("OX", 2), ("OX", 28)]


def test_fixed_loop_with_distinct_primes():
    # The reference crashes (ValueError: factorial() not defined for negative values).
    assert loop_prime_factors(LAYER2_TEMPORAL, 6, [("OX", 56)]) == LAYER2_TABLE[3][1]
    got = loop_prime_factors(LAYER2_TEMPORAL, 8, [("OX", 56)])
    assert got == [
        ("K", 2),
        ("C", 2),
        ("OY", 2),
        ("OY", 4),
        ("OY", 7),
        ("OX", 56),
        ("FY", 3),
        ("FX", 3),
    ]
    assert loop_prime_factors({"OX": 840}, 2, [("OX", 14)]) == [("OX", 14), ("OX", 60)]


def test_merging_stops_when_only_fixed_loops_are_left():
    # The reference merges 8 * 8 here (negative count, then crashes); we stop at 7 LPFs.
    got = loop_prime_factors(LAYER2_TEMPORAL, 6, [("OX", 7)])
    assert got == [("K", 2), ("C", 2), ("OY", 56), ("OX", 7), ("OX", 8), ("FY", 3), ("FX", 3)]


def test_prime_power_fixed_loop_is_appended():
    # As in the reference, a composite fixed size sits after the dim's primes.
    assert loop_prime_factors({"K": 24}, None, [("K", 4)]) == [("K", 2), ("K", 3), ("K", 4)]
    assert loop_prime_factors({"K": 32}, None, [("K", 4), ("K", 4)]) == [
        ("K", 2),
        ("K", 4),
        ("K", 4),
    ]


@pytest.mark.parametrize(
    "temporal, fixed",
    [
        ({"K": 8}, [("C", 2)]),
        ({"K": 8}, [("K", 3)]),
        ({"K": 8}, [("K", 16)]),
        ({"K": 8}, [("K", 4), ("K", 4)]),
        ({"K": 8}, [("K", 1)]),
        ({}, [("K", 2)]),
    ],
)
def test_impossible_fixed_loops_raise(temporal, fixed):
    with pytest.raises(ValueError):
        loop_prime_factors(temporal, 6, fixed)


# --- differential against the reference --------------------------------------------------------


def case_id(case):
    return f"{case['sizes']}-{case['lpf_limit']}-{case['fixed']}"


@pytest.mark.parametrize("case", ORACLE["lpfs"], ids=case_id)
def test_lpfs_match_reference(case):
    sizes = dict(case["sizes"])
    fixed = [tuple(f) for f in case["fixed"]]
    expected_fixed = Counter(fixed)
    needed = {}
    for dim, size in fixed:
        needed[dim] = needed.get(dim, 1) * size
    if any(sizes[dim] % product for dim, product in needed.items()):
        with pytest.raises(ValueError):
            loop_prime_factors(sizes, case["lpf_limit"], fixed)
        return
    got = loop_prime_factors(sizes, case["lpf_limit"], fixed, pseudo_dim="K")
    if case["works"]:
        assert got == [tuple(x) for x in case["lpfs"]]
        if len(got) <= 18:  # the reference's float division is exact up to there
            assert nb_orderings(got) == case["nb_orderings"]
    else:  # where the reference breaks, we keep the promise: fixed loops exist, sizes multiply out
        assert not expected_fixed - Counter(got)
        assert product_per_dim(got) == sizes


def test_reference_oracle_has_working_fixed_cases():
    kinds = Counter(bool(c["fixed"]) and c["works"] for c in ORACLE["lpfs"])
    assert kinds[True] >= 50


# --- properties ---------------------------------------------------------------------------------

DIMS = ["K", "C", "OY", "OX", "FY", "FX", "B", "G"]
temporal_maps = st.lists(
    st.tuples(st.sampled_from(DIMS), st.integers(min_value=2, max_value=5000)),
    min_size=1,
    max_size=6,
    unique_by=lambda x: x[0],
).map(dict)
limits = st.one_of(st.none(), st.integers(min_value=-1, max_value=14))


@given(temporal_maps, limits)
def test_merging_properties(temporal, limit):
    got = loop_prime_factors(temporal, limit)
    assert product_per_dim(got) == temporal
    assert list(dict.fromkeys(dim for dim, _ in got)) == list(temporal)
    total = sum(omega(size) for size in temporal.values())
    effective = effective_lpf_limit(limit, len(temporal))
    assert len(got) == (total if effective is None else min(total, effective))
    assert all(size >= 2 for _, size in got)


@given(temporal_maps, limits, st.data())
def test_fixed_loops_properties(temporal, limit, data):
    dim = data.draw(st.sampled_from(list(temporal)))
    divisors = [d for d in range(2, temporal[dim] + 1) if temporal[dim] % d == 0]
    size = data.draw(st.sampled_from(divisors))
    got = loop_prime_factors(temporal, limit, [(dim, size)])
    assert (dim, size) in got
    assert product_per_dim(got) == temporal
    reduced_total = sum(omega(s) for s in temporal.values()) - omega(size) + 1
    effective = effective_lpf_limit(limit, len(temporal))
    if effective is None:
        assert len(got) == reduced_total
    else:
        assert min(reduced_total, effective) <= len(got) <= reduced_total
        if len(got) > effective:  # merging stopped: no dim has two free LPFs left
            free = Counter(got) - Counter([(dim, size)])
            assert all(sum(c for (d, _), c in free.items() if d == x) <= 1 for x in temporal)


@given(st.lists(st.tuples(st.sampled_from(DIMS), st.sampled_from([2, 3, 4, 7])), max_size=30))
def test_nb_orderings_is_multinomial(lpfs):
    counts = Counter(lpfs)
    expected = math.factorial(len(lpfs)) // math.prod(math.factorial(c) for c in counts.values())
    assert nb_orderings(lpfs) == expected


def test_nb_orderings_exact_for_28_lpfs():
    lpfs = [("K", 2)] * 10 + [("C", 3)] * 9 + [(d, 5) for d in "ABCDEFGHI"]
    assert nb_orderings(lpfs) == math.factorial(28) // (math.factorial(10) * math.factorial(9))
