"""Test support shared by every test folder: where the repository, the test data, the reference
inputs and the oracle data live, and small helpers (docs/contributing/development.md#where-the-tests-live).

The submodules hold the larger helpers: ``support.workflow`` (Snakemake runs), ``support.steps``
(the workflow's steps as functions), ``support.browser`` (the report in headless Chromium),
``support.llm_graphs`` and ``support.llm_steps`` (small LLM workloads), ``support.bad_inputs``
and ``support.fuzz`` (bad-input cases), ``support.stream_reference`` and
``support.stream_reference_dump`` (Stream's reference dumps), ``support.sharing`` (the batched
search's sharing across variants). Test modules import these, never one
another; pytest's fixtures are in tests/conftest.py.
"""

from __future__ import annotations

import json
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
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
