"""LOMA ordering enumeration and user ordering constraints (docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation).

An ordering is a tuple of LPFs ``(dim, size)``, index 0 = innermost loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

WILDCARD = "*"


def multiset_permutations(items: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """All distinct permutations of ``items`` in Williams' prefix-shift order.

    The first one is the items in non-increasing order; each next one moves a single element to
    the front. ``[1, 1, 2, 3]`` gives 3211, 1321, 3121, ... An empty input yields one empty tuple
    (the reference crashes on it).
    """
    perm = sorted(items, reverse=True)
    n = len(perm)
    yield tuple(perm)
    if n < 2:
        return
    # Williams' pointers as indices: p (second-to-last node) = i, q = p.next = i + 1.
    i = n - 2
    while i + 2 < n or perm[i + 1] < perm[0]:
        shifted = i + 2 if i + 2 < n and perm[i] >= perm[i + 2] else i + 1
        value = perm.pop(shifted)
        i = 0 if value < perm[0] else i + 1
        perm.insert(0, value)
        yield tuple(perm)


@dataclass(frozen=True)
class OrderingConstraints:
    """Position constraints of an incomplete ``temporal_ordering``.

    ``dim_at``: ``(position, dim)`` — the loop at that position must belong to ``dim``;
    ``loop_at``: ``(position, (dim, size))`` — the loop at that position must be exactly that.
    Positions count from the innermost loop (0); negative ones from the outermost end.
    """

    dim_at: tuple[tuple[int, str], ...] = ()
    loop_at: tuple[tuple[int, tuple[str, int]], ...] = ()

    @property
    def fixed_loops(self) -> list[tuple[str, int]]:
        """The ``(dim, size)`` loops whose size is fixed, in position order (for LPF reservation)."""
        return [loop for _, loop in self.loop_at]

    def __bool__(self) -> bool:
        return bool(self.dim_at or self.loop_at)


def ordering_constraints(
    temporal_ordering: Sequence[tuple[str, int | None]],
) -> OrderingConstraints:
    """Constraints from a user ordering (innermost first; size None = unspecified).

    A ``("*", None)`` row switches the following rows to positions counted from the outermost
    end (``position - len``), as in the reference; normally that row was dropped at parse time.
    """
    dim_at: list[tuple[int, str]] = []
    loop_at: list[tuple[int, tuple[str, int]]] = []
    from_outer = False
    for position, (dim, size) in enumerate(temporal_ordering):
        if dim == WILDCARD and size is None:
            from_outer = True
            continue
        if from_outer:
            position -= len(temporal_ordering)
        if size is None:
            dim_at.append((position, dim))
        else:
            loop_at.append((position, (dim, size)))
    return OrderingConstraints(tuple(dim_at), tuple(loop_at))


def satisfies(ordering: Sequence[tuple[str, int]], constraints: OrderingConstraints) -> bool:
    """Whether ``ordering`` meets every constraint; a position outside the ordering never does
    (the reference raises IndexError there)."""
    n = len(ordering)
    for position, dim in constraints.dim_at:
        if not -n <= position < n or ordering[position][0] != dim:
            return False
    for position, loop in constraints.loop_at:
        if not -n <= position < n or ordering[position] != loop:
            return False
    return True
