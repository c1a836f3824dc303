"""LOMA: enumerate loop orderings of a layer's temporal loops and allocate each to memory.

See docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation (loop prime factors, lpf_limit merging, Williams' permutation order,
allocation) and docs/models/mapping-search.md#user-temporal-ordering (user ``temporal_ordering``: complete ordering or position constraints).
"""

from __future__ import annotations

import itertools
import sys
from typing import Iterator


from zigzag.errors import InputError, MappingError
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.spatial_mapping import LevelMapping, flat_unrollings
from zigzag.mapping_search.memory_levels import (
    LevelAssignmentFailed,
    MemoryLevelAssigner,
    TemporalMapping,
)
from zigzag.mapping_search.loop_factors import loop_prime_factors, nb_orderings, temporal_loop_sizes
from zigzag.mapping_search.permutations import (
    multiset_permutations,
    ordering_constraints,
    satisfies,
)
from zigzag.workload.layer import Layer


def layer_temporal_loops(layer: Layer, spatial: LevelMapping) -> dict[str, int]:
    """Temporal loop sizes left once the (fractional) spatial unrolling is taken out."""
    return temporal_loop_sizes(layer.loop_sizes, flat_unrollings(spatial, layer))


def complete_user_ordering(layer: Layer, temporal: dict[str, int]) -> list[tuple[str, int]] | None:
    """The user's temporal_ordering when it spells out exactly the temporal loops, else None."""
    ordering = layer.mapping.temporal_ordering
    if not ordering or any(size is None for _, size in ordering):
        return None
    product: dict[str, int] = {}
    for dim, size in ordering:
        product[dim] = product.get(dim, 1) * size
    if {d: s for d, s in product.items() if s != 1} != temporal:
        return None
    return list(ordering)


def ordering_factors(layer: Layer, temporal: dict[str, int], lpf_limit: int | None):
    """(ordering constraints of the user's temporal_ordering, the loop prime factors to permute)."""
    constraints = ordering_constraints(layer.mapping.temporal_ordering)
    try:
        factors = loop_prime_factors(
            temporal, lpf_limit, constraints.fixed_loops, pseudo_dim=layer.loop_dims[0]
        )
    except ValueError as exc:
        raise InputError(
            None,
            f"mapping entry '{layer.mapping.name}'.temporal_ordering",
            f"cannot be met by layer {layer.name} (temporal loops {temporal}): {exc}",
        ) from None
    return constraints, factors


def temporal_mappings(
    layer: Layer,
    accelerator: Accelerator,
    spatial: LevelMapping,
    *,
    lpf_limit: int | None = 6,
    even: bool = False,
    show_progress: bool | None = None,
) -> Iterator[TemporalMapping]:
    """Every temporal mapping LOMA evaluates, in ZigZag's order."""
    assigner = MemoryLevelAssigner(layer, accelerator, spatial, even=even)
    temporal = layer_temporal_loops(layer, spatial)
    user_ordering = complete_user_ordering(layer, temporal)
    if user_ordering is not None:
        try:
            yield assigner.assign(user_ordering)
        except LevelAssignmentFailed as exc:
            raise InputError(
                None,
                f"mapping entry '{layer.mapping.name}'.temporal_ordering",
                f"does not fit the memories of {accelerator.name} for layer {layer.name} ({exc}); "
                "change the ordering or remove it to let the search choose",
            ) from None
        return
    constraints, factors = ordering_factors(layer, temporal, lpf_limit)
    orderings = multiset_permutations(factors)
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    if show_progress:
        from tqdm import tqdm  # only when drawing a bar: importing it costs a layer job ~0.1 s

        orderings = tqdm(
            orderings,
            total=nb_orderings(factors),
            desc=f"{layer.name}: loop orderings",
            leave=False,
            unit="ord",
        )
    found = False
    for ordering in orderings:
        if constraints and not satisfies(ordering, constraints):
            continue
        try:
            mapping = assigner.assign(list(ordering))
        except LevelAssignmentFailed:
            continue
        found = True
        yield mapping
    if not found:
        raise no_fit_error(layer, accelerator, spatial, even=even, lpf_limit=lpf_limit)


def no_fit_error(
    layer: Layer,
    accelerator: Accelerator,
    spatial: LevelMapping,
    *,
    even: bool,
    lpf_limit: int | None,
    sample: int = 2000,
) -> MappingError:
    """Why no loop ordering fits: the memory and operand most orderings (of a sample) overflow,
    with the bits they need and the bits the memory holds."""
    least = no_fit_diagnosis(
        layer, accelerator, spatial, even=even, lpf_limit=lpf_limit, sample=sample
    )
    return no_fit_message(layer, accelerator.name, least)


def no_fit_diagnosis(
    layer: Layer,
    accelerator: Accelerator,
    spatial: LevelMapping,
    *,
    even: bool,
    lpf_limit: int | None,
    sample: int = 2000,
) -> LevelAssignmentFailed | None:
    """The overflow :func:`no_fit_error` names (None: no sampled ordering meets the constraints).
    It reads the accelerator's structure and memory sizes only, never its name, bandwidths or
    costs (``zigzag.mapping_search.batched.structural`` keeps it per structure and sizes)."""
    assigner = MemoryLevelAssigner(layer, accelerator, spatial, even=even)
    constraints, factors = ordering_factors(layer, layer_temporal_loops(layer, spatial), lpf_limit)
    failures: dict[tuple[str, str], list[LevelAssignmentFailed]] = {}
    for ordering in itertools.islice(multiset_permutations(factors), sample):
        if constraints and not satisfies(ordering, constraints):
            continue
        try:
            assigner.assign(list(ordering))
        except LevelAssignmentFailed as exc:
            failures.setdefault((exc.memory, exc.operands), []).append(exc)
    if not failures:
        return None
    common = max(failures.values(), key=len)
    return min(common, key=lambda exc: exc.needed)


def no_fit_message(
    layer: Layer, accelerator_name: str, least: LevelAssignmentFailed | None
) -> MappingError:
    """The error of :func:`no_fit_error` from its diagnosis (:func:`no_fit_diagnosis`)."""
    start = f"no loop ordering of layer {layer.name} fits the memories of {accelerator_name}"
    if least is None:
        return MappingError(
            f"{start}: no ordering meets the temporal_ordering of mapping entry '{layer.mapping.name}'; "
            "relax or remove that temporal_ordering"
        )
    need = f"{least.needed:.0f} bits"
    fix = (
        f"it is the top memory of {least.operands}, which must hold all of it: make it at least {need}"
        if least.whole
        else f"make it at least {need} or choose a smaller spatial unrolling"
    )
    return MappingError(
        f"{start}: operand {least.operands} needs {'' if least.whole else 'at least '}{need} in memory "
        f"{least.memory}, which holds {least.available:.0f} bits; {fix}"
    )
