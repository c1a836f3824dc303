"""LOMA loop prime factors (docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation).

A *loop prime factor* (LPF) is a pair ``(dim, size)``: one temporal loop of the final ordering.
The sizes of all LPFs of a dim multiply to that dim's temporal size.

Deliberate differences from the reference (it crashes or silently loses the constraint there):

* a fixed loop whose size has several distinct primes (e.g. ``("OX", 56)``), or a composite
  fixed loop given twice for one dim, is carved out correctly: each becomes one LPF and the
  dim's other primes are merged normally;
* a fixed loop that is not a divisor of what is left of its dim (or has size < 2, or names a
  dim without temporal loop) raises ``ValueError`` instead of ``KeyError``/``ValueError``
  or "no valid loop ordering" later;
* merging only picks dims that still have two free (non-fixed) LPFs; when no dim has, merging
  stops above the limit instead of consuming a fixed loop or producing negative counts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

LPF = tuple[str, int]


def temporal_loop_sizes(
    loop_sizes: Mapping[str, int], spatial_unrollings: Iterable[tuple[str, float]]
) -> dict[str, int]:
    """Loop sizes left for temporal scheduling after spatial unrolling.

    Each unrolling ``(dim, f)`` replaces the dim's size by ``ceil(size / f)`` (deleting the dim
    when that is 1; later unrollings of a deleted dim are skipped); dims of size <= 1 are dropped.
    """
    sizes = dict(loop_sizes)
    for dim, factor in spatial_unrollings:
        if dim not in sizes:
            continue
        quotient = math.ceil(sizes[dim] / factor)
        if quotient == 1:
            del sizes[dim]
        else:
            sizes[dim] = quotient
    return {dim: size for dim, size in sizes.items() if size > 1}


def prime_factors(n: int) -> dict[int, int]:
    """Prime factorisation ``{prime: multiplicity}`` of ``n >= 1``, primes ascending."""
    if n < 1:
        raise ValueError(f"cannot factorise {n}: need an integer >= 1")
    factors: dict[int, int] = {}
    p = 2
    while p * p <= n:
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        factors[n] = factors.get(n, 0) + 1
    return factors


def effective_lpf_limit(lpf_limit: int | None, nb_temporal_dims: int) -> int | None:
    """The LPF limit actually used: raised to the number of temporal dims; None = no limit."""
    if lpf_limit is None:
        return None
    return max(lpf_limit, nb_temporal_dims)


@dataclass
class _DimFactors:
    """Factor list of one dim: ``factors[i]`` occurs ``counts[i]`` times; ``fixed`` are reserved."""

    factors: list[int]
    counts: list[int]
    fixed: Counter[int] = field(default_factory=Counter)

    @classmethod
    def of(cls, size: int) -> _DimFactors:
        primes = prime_factors(size)
        return cls(list(primes), list(primes.values()))

    def total(self) -> int:
        return sum(self.counts)

    def fix(self, size: int) -> None:
        """Carve the fixed loop ``size`` out of this dim's primes and reserve it."""
        for prime, multiplicity in prime_factors(size).items():
            self.counts[self.factors.index(prime)] -= multiplicity
        self._add(size, append=True)
        self.fixed[size] += 1

    def merge_positions(self) -> tuple[int, int] | None:
        """Positions of the two smallest free factors (list order), or None if fewer than two."""
        first = None
        for i, factor in enumerate(self.factors):
            free = self.counts[i] - self.fixed[factor]
            if free <= 0:
                continue
            if first is not None:
                return first, i
            if free >= 2:
                return i, i
            first = i
        return None

    def merge(self, a: int, b: int) -> None:
        """Replace one factor at ``a`` and one at ``b`` by their product (one merge step)."""
        product = self.factors[a] * self.factors[b]
        self.counts[a] -= 1
        self.counts[b] -= 1
        self._add(product, append=False)
        kept = [i for i, count in enumerate(self.counts) if count != 0]
        self.factors = [self.factors[i] for i in kept]
        self.counts = [self.counts[i] for i in kept]

    def _add(self, factor: int, append: bool) -> None:
        """Count one more ``factor``: existing entry, else appended or inserted before larger ones."""
        if factor in self.factors:
            self.counts[self.factors.index(factor)] += 1
            return
        position = len(self.factors) if append else sum(f < factor for f in self.factors)
        self.factors.insert(position, factor)
        self.counts.insert(position, 1)


def _check_fixed_loops(temporal_sizes: Mapping[str, int], fixed_loops: Sequence[LPF]) -> None:
    """Raise ValueError unless every dim's fixed loop sizes multiply to a divisor of its size."""
    product: dict[str, int] = {}
    for dim, size in fixed_loops:
        if dim not in temporal_sizes:
            raise ValueError(
                f"fixed temporal loop ({dim}, {size}): {dim} has no temporal loop left"
            )
        if size < 2:
            raise ValueError(f"fixed temporal loop ({dim}, {size}): size must be at least 2")
        product[dim] = product.get(dim, 1) * size
        if temporal_sizes[dim] % product[dim]:
            raise ValueError(
                f"fixed temporal loop ({dim}, {size}): the fixed sizes of {dim} do not divide "
                f"its temporal size {temporal_sizes[dim]}"
            )


def _merge_until(dims: dict[str, _DimFactors], limit: int) -> None:
    """Merge LPFs until at most ``limit`` remain or no dim has two free LPFs."""
    n = sum(state.total() for state in dims.values())
    while n > limit:
        candidates = [(state, state.merge_positions()) for state in dims.values()]
        candidates = [(state, pos) for state, pos in candidates if pos is not None]
        if not candidates:
            return
        state, (a, b) = max(candidates, key=lambda c: c[0].total())
        state.merge(a, b)
        n -= 1


def loop_prime_factors(
    temporal_sizes: Mapping[str, int],
    lpf_limit: int | None,
    fixed_loops: Sequence[LPF] = (),
    *,
    pseudo_dim: str | None = None,
) -> list[LPF]:
    """The LOMA LPF list: per dim (map order), its factors in factor-list order.

    ``fixed_loops`` are the ``(dim, size)`` loops of position+size ordering constraints:
    each is kept as one LPF that merging never touches. Fixed composite sizes are appended after
    the dim's primes, as in the reference (it matters for merge order). With no temporal loop the
    result is the pseudo-loop ``[(pseudo_dim, 1)]`` (the layer's first dim), or ``[]`` if None.
    Unlike the reference, fixed sizes made of several distinct primes are supported (see module).
    """
    _check_fixed_loops(temporal_sizes, fixed_loops)
    if not temporal_sizes:
        return [] if pseudo_dim is None else [(pseudo_dim, 1)]
    dims = {dim: _DimFactors.of(size) for dim, size in temporal_sizes.items()}
    for dim, size in fixed_loops:
        dims[dim].fix(size)
    limit = effective_lpf_limit(lpf_limit, len(temporal_sizes))
    if limit is not None:
        _merge_until(dims, limit)
    return [
        (dim, factor)
        for dim, state in dims.items()
        for factor, count in zip(state.factors, state.counts)
        for _ in range(count)
    ]


def nb_orderings(lpfs: Iterable[Hashable]) -> int:
    """Number of distinct orderings of the LPF multiset: ``n! / prod(multiplicity!)``, exact."""
    multiplicities = Counter(lpfs).values()
    result = math.factorial(sum(multiplicities))
    for multiplicity in multiplicities:
        result //= math.factorial(multiplicity)
    return result
