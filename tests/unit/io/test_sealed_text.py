"""The text of a sealed file (zigzag/io/sealed.py): compact JSON written by the C encoder directly,
the same text as ``json.dumps(data, separators=(",", ":"))`` for every kind of value it holds."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from zigzag.io.sealed import compact_json, sealed_text, unseal

VALUES = [
    {},
    {"a": 1, "b": [1, 2.5, -0.0, 1e-7, 1e16, 123456789012345678901234567890]},
    {"t": (1, (2.0, {"x": None})), "f": True, "g": False, "u": 'µs – ü\n"q"\\'},
    {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "tiny": 5e-324},
    {"nested": {"O": [{"fh": 0.1, "tl": 2}, {"fh": 0, "tl": 1 / 3}]}, "1": [[]]},
]


@pytest.mark.parametrize("data", VALUES)
def test_compact_json_is_json_dumps_text(data):
    assert compact_json(data) == json.dumps(data, separators=(",", ":"))


@pytest.mark.parametrize("data", VALUES)
def test_sealed_text_is_unchanged(data):
    body = json.dumps({"key": "k", **data}, separators=(",", ":"))[:-1]
    digest = hashlib.sha256(body.encode()).hexdigest()
    assert sealed_text(data, "k") == f'{body},"sha256":"{digest}"}}\n'
    back = unseal(sealed_text(data, "k"), "f", "k")
    assert json.dumps(back) == json.dumps(json.loads(json.dumps({"key": "k", **data})))


def test_what_json_cannot_write_is_the_same_error():
    with pytest.raises(TypeError, match="not JSON serializable"):
        compact_json({"x": object()})
