"""Candidates of a batched search: loop orderings as rows of small integers, and the rules
every batched module shares (the exactness bound, the "not covered" exception)."""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from typing import Iterator

import numpy as np

from zigzag.mapping_search.loop_factors import nb_orderings
from zigzag.mapping_search.permutations import multiset_permutations

#: integers below this bound are exact in float64 (and behave like Python ints there)
EXACT = float(2**53)


class Unsupported(Exception):
    """The batched path does not cover this layer / mapping; use the scalar path."""


class FiguresTooLarge(Unsupported):
    """The cost model's integer figures may leave float64's exact range: the batched figures can only rank
    the candidates (``zigzag.mapping_search.batched.ranked``), the scalar model decides."""


class LoopTable:
    """The distinct loop factors ``(dim, size)`` of a LOMA run, numbered in sorted order.

    Numbering the distinct factors in ascending tuple order makes the Williams enumeration of
    the numbers visit exactly the same sequence as the enumeration of the tuples (it only
    compares items), so orderings can be generated and stored as small integer rows.
    """

    def __init__(self, factors: list[tuple[str, int]]):
        self.factors = list(factors)
        self.distinct = sorted(set(self.factors))
        self.number = {loop: i for i, loop in enumerate(self.distinct)}
        self.dims = sorted({d for d, _ in self.distinct})
        self.dim_number = {d: i for i, d in enumerate(self.dims)}
        self.dim_of = np.array([self.dim_number[d] for d, _ in self.distinct], dtype=np.int64)
        self.size_of = np.array([s for _, s in self.distinct], dtype=np.float64)
        self.length = len(self.factors)
        self.total = math.prod(s for _, s in self.factors)

    def orderings(self) -> Iterator[tuple[int, ...]]:
        return multiset_permutations([self.number[f] for f in self.factors])

    def count(self) -> int:
        return nb_orderings(self.factors)

    def loops(self, row) -> list[tuple[str, int]]:
        return [self.distinct[i] for i in row]


def temporal_mapping_of(
    loops: LoopTable, row, cuts: dict[str, list[int]]
) -> dict[str, list[list[tuple[str, int]]]]:
    """The allocator's per-operand level lists of one compact candidate."""
    ordering = loops.loops(row)
    result = {}
    for op, ends in cuts.items():
        levels, start = [], 0
        for end in ends:
            levels.append(ordering[start:end])
            start = end
        result[op] = levels
    return result


#: bytes of ordering tables kept by :func:`ordering_chunks` (the last ones used), and the most
#: rows one table may have
ORDERINGS_BUDGET = 64 * 2**20
ORDERINGS_MAX_ROWS = 2**17
_ORDERINGS: OrderedDict = OrderedDict()


def ordering_chunks(loops: LoopTable, size: int) -> Iterator[np.ndarray]:
    """``chunks(loops.orderings(), loops.length, size)``, kept for the next LOMA run with the same
    multiset of loop numbers: the Williams sequence depends on nothing else, so layers and hardware
    variants whose temporal loops differ only in their sizes and dims read one table (read-only
    arrays; a run of more than ``ORDERINGS_MAX_ROWS`` orderings is generated as it goes)."""
    key = (tuple(sorted(loops.number[f] for f in loops.factors)), size)
    kept = _ORDERINGS.get(key)
    if kept is None:
        if loops.count() > ORDERINGS_MAX_ROWS:
            yield from chunks(loops.orderings(), loops.length, size)
            return
        kept = tuple(chunks(loops.orderings(), loops.length, size))
        for block in kept:
            block.setflags(write=False)
        _ORDERINGS[key] = kept
        total = sum(b.nbytes for table in _ORDERINGS.values() for b in table)
        while total > ORDERINGS_BUDGET and len(_ORDERINGS) > 1:
            total -= sum(b.nbytes for b in _ORDERINGS.popitem(last=False)[1])
    else:
        _ORDERINGS.move_to_end(key)
    yield from kept


def chunks(iterator, length: int, size: int) -> Iterator[np.ndarray]:
    """Rows of ``length`` integers from an iterator of tuples, ``size`` rows at a time."""
    while True:
        block = list(itertools.islice(iterator, size))
        if not block:
            return
        yield np.array(block, dtype=np.int64).reshape(len(block), length)


def constraint_mask(ids: np.ndarray, loops: LoopTable, constraints) -> np.ndarray:
    """Vectorised :func:`zigzag.mapping_search.permutations.satisfies`."""
    n, length = ids.shape
    mask = np.ones(n, dtype=bool)
    for position, dim in constraints.dim_at:
        if not -length <= position < length or dim not in loops.dim_number:
            return np.zeros(n, dtype=bool)
        mask &= loops.dim_of[ids[:, position]] == loops.dim_number[dim]
    for position, loop in constraints.loop_at:
        if not -length <= position < length or tuple(loop) not in loops.number:
            return np.zeros(n, dtype=bool)
        mask &= ids[:, position] == loops.number[tuple(loop)]
    return mask


def prefix_products(values: np.ndarray) -> np.ndarray:
    """``out[:, p]`` = product of ``values[:, :p]`` (float64, exact for exact integers).

    Multiplied position by position on rows of candidates: numpy's ``cumprod`` along the short
    axis of a candidates x positions array is several times slower."""
    n, length = values.shape
    columns = values.T
    out = np.empty((length + 1, n), dtype=np.float64)
    out[0] = 1.0
    for p in range(length):
        np.multiply(out[p], columns[p], out=out[p + 1])
    return out.T


def unique_count(rel, a, b):
    """Vectorised ``DimRelation.unique_count`` (exact for integral float64 inputs)."""
    coef_a, coef_b = rel.reduced_coefficients
    return a * b - np.maximum(0.0, b - coef_a) * (a - coef_b)
