"""The one place that reproduces the reference's ``set`` iteration order (docs/models/mapping-search.md#spatial-mappings).

The reference hashes its dimension/operand objects as
``int(sha512(pickle.dumps(name, protocol=4)).hexdigest(), 16) XOR C_class``, with a constant per
class; CPython reduces that integer modulo 2**61 - 1. Iterating a real Python set of stand-in
objects hashed the same way gives exactly the reference's tie order.

Assumption: the set is built fresh by adding the names one by one in the given order (as
``set(list)``, ``set(dict.keys())`` or a set comprehension do); sets built from a dict or another
set, or that saw deletions, may be laid out differently.
"""

from __future__ import annotations

import functools
import itertools
import pickle
from collections.abc import Iterable, Iterator
from hashlib import sha512
from typing import Literal

Kind = Literal["layer_dim", "oa_dim", "layer_operand", "memory_operand"]

# sha512 of the pickled class object of LayerDim / OADimension / LayerOperand / MemoryOperand.
_CLASS_HASH: dict[str, int] = {
    "layer_dim": int(
        "4b1ea5044d38e2e638006ff20d31ddf06d166f24c7c6d3699aa166ab6567d52f"
        "904839637d927086e9fa7d35590badb5d9b89eef301a188dda106ef400a35527",
        16,
    ),
    "oa_dim": int(
        "787d596743d5cde420028638dfc2cde1b3401aeb75a50aa73b05690faab94f1c"
        "3bd8352e7860c7a76c139690573c93dc0a590f571736656d59b45f14c0094864",
        16,
    ),
    "layer_operand": int(
        "7f2aaf82bbd62c805aa09598f27ccfa360b63ac0b844e7c225127ce88e3ce995"
        "0ae849986dd9d2fb43be3b6544416ac480f67f57f45c0584890cb440e7b54a87",
        16,
    ),
    "memory_operand": int(
        "3929a9c8f4b44020d1b3ea42a0581b6199a3cef108889e2e1d741e0473a730b3"
        "861d8430e28fc6687e950aed7d977037e48b70a22f7f713f40dab2c9996f784e",
        16,
    ),
}


class _StandIn:
    """A name that hashes and compares equal like the reference's object of that name."""

    __slots__ = ("name", "_hash")

    def __init__(self, name: str, kind: Kind):
        self.name = name
        digest = sha512(pickle.dumps(name, protocol=4)).hexdigest()
        self._hash = int(digest, 16) ^ _CLASS_HASH[kind]

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StandIn) and self._hash == other._hash


def reference_hash(name: str, kind: Kind) -> int:
    """Python ``hash()`` of the reference's object named ``name`` (e.g. LayerDim "K")."""
    return hash(_StandIn(name, kind))


def reference_set_order(names: Iterable[str], kind: Kind) -> list[str]:
    """``names`` (duplicates dropped) in the order the reference's set of them iterates.

    Names are hashed as given (the reference upper-cases LayerDim names; pass stored names).
    """
    return list(_set_order(tuple(names), kind))


@functools.lru_cache(maxsize=4096)
def _set_order(names: tuple[str, ...], kind: Kind) -> tuple[str, ...]:
    """The searches ask for the same few small sets again and again: their order, hashed once."""
    return tuple(item.name for item in {_StandIn(name, kind) for name in names})


def reference_set_pop(names: Iterable[str], kind: Kind) -> str:
    """The element ``set(...).pop()`` returns on a freshly built reference set (its first)."""
    return reference_set_order(names, kind)[0]


def reference_combinations(names: Iterable[str], kind: Kind, r: int) -> Iterator[tuple[str, ...]]:
    """``itertools.combinations`` over the reference's set of ``names``."""
    return itertools.combinations(reference_set_order(names, kind), r)
