"""Hypothesis settings and document mutations shared by the fuzzing tests (tests/errors/).

Examples are bounded and derandomised, so a run is deterministic; ZIGZAG_FUZZ_EXAMPLES=2000 fuzzes
harder (examples per test; default 120).
"""

from __future__ import annotations

import copy
import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("ZIGZAG_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Values a user might write by mistake, including ones of the right shape but the wrong meaning.
DOMAIN_TEXT = [
    "K, 32",
    "KK, 32",
    "C, 0",
    "I1, tl",
    "I2, fh",
    "O, th",
    "D1",
    "D3",
    "K",
    "OX",
    "*",
    "all",
    "ix=2*ox+1*fx",
    "ix=ox",
    "r_port_1",
    "w_port_1",
    "read",
    "read_write",
    "default",
    "Conv",
    "Gemm",
    "Pooling",
    "O[k]+=W[k][c]*I[c]",
    "",
    " ",
    "1e3",
    "-1",
    "null",
]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(-(10**12), 10**12),
    st.sampled_from([0.0, 0.5, -1.5, 1e300]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(DOMAIN_TEXT),
    st.lists(st.one_of(st.integers(-2, 64), st.sampled_from(DOMAIN_TEXT)), max_size=4),
    st.dictionaries(
        st.sampled_from(["K", "D1", "I", "W", "x", "size", "name"]), st.integers(-1, 64), max_size=2
    ),
)


def paths_of(doc, prefix=()) -> list[tuple]:
    """Every place in a nested document (dict keys and list indices), parents first."""
    found = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += paths_of(value, prefix + (key,))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += paths_of(value, prefix + (index,))
    return found


def mutate(data, doc):
    """Apply 1-3 random mutations (delete, replace, add a key, duplicate an entry) to a copy of ``doc``."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = paths_of(doc)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        action = data.draw(
            st.sampled_from(["delete", "replace", "replace", "add_key", "duplicate"]),
            label="action",
        )
        if action == "delete":
            del parent[key]
        elif action == "replace":
            parent[key] = data.draw(VALUES, label="value")
        elif action == "add_key" and isinstance(parent[key], dict):
            parent[key][data.draw(st.sampled_from(["foo", "K", "D2", "O", "name", "size", 3]))] = (
                data.draw(VALUES)
            )
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
    return doc
