"""Shared test fixtures: where the reference inputs and the oracle data live."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
DATA = TESTS / "data"
REFERENCE_DATA = DATA / "reference"  # verbatim copy of the references' data (see its PROVENANCE.md)
REFERENCE = REFERENCE_DATA / "zigzag"
EXPECTED_TOTALS = REFERENCE_DATA / "expected.yaml"
ORACLE = DATA / "oracle"


def reference_input(kind: str, name: str) -> str:
    """Path of a reference input shipped in the repository, e.g. reference_input("hardware", "tpu_like.yaml")."""
    path = REFERENCE / kind / name
    assert path.exists(), f"{path} is missing from the repository"
    return str(path)


def oracle(case: str) -> dict:
    """A reference oracle case made by tools/make_oracle.py."""
    return json.loads((ORACLE / f"{case}.json").read_text())


def oracle_input_path(case: dict, kind: str) -> str:
    """The input file an oracle case used (reference input or our test data)."""
    base = REFERENCE if case["case"]["sources"][kind] == "reference" else DATA
    return str(base / case["case"][kind])


def rel_close(a: float, b: float, rel: float) -> bool:
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
