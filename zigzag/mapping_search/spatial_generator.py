"""Spatial mapping generation: which unrollings over the MAC array a layer search evaluates.

docs/models/mapping-search.md#spatial-mappings. In short:

1. every (array dim, layer dim) pair gets a *maximal unrolling*, bounded by the two sizes and by
   the bandwidth of the innermost memories;
2. the mapping entry's ``spatial_mapping`` is reduced to fit (the *template*);
3. array dims the template leaves open are filled with every combination of single-dim (and,
   optionally, mixed) unrollings taken from the hints; valid candidates are ranked by a
   utilisation/diversity indicator;
4. the best ones are shrunk to fit the capacity of the innermost memories; one that still
   overflows an innermost memory gives way to the next candidates in the ranking.

Ties follow the reference's ``set`` iteration order, reproduced by
:mod:`zigzag.mapping.reference_order`. Nothing here mutates the layer or the accelerator.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterator

from zigzag.errors import InputError, MappingError, MemoryTooSmall
from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.mapping_search.loop_factors import temporal_loop_sizes
from zigzag.mapping_search.memory_levels import LevelAssignmentFailed, MemoryLevelAssigner
from zigzag.mapping_search.spatial_mapping import (
    ArrayMapping,
    adjust_factors,
    distribute_over_levels,
    flat_unrollings,
    utilization,
)
from zigzag.notes import warn_for_layer
from zigzag.mapping.reference_order import reference_set_order, reference_set_pop
from zigzag.workload.layer import Layer

logger = logging.getLogger(__name__)

MaxUnrollings = dict[str, dict[str, int]]


# ----- hints -----------------------------------------------------------------------------------
def effective_hints(layer: Layer, accelerator: Accelerator) -> dict[str, list[str]]:
    """Layer dims each array dim may unroll, in the reference's set order.

    A hint naming no loop dim of the layer is ignored; array dims without a (kept) hint may unroll
    every loop dim. Hints for array dims the accelerator lacks are kept but never used.
    """
    hints: dict[str, list[str]] = {}
    for oa, dims in layer.mapping.spatial_mapping_hint.items():
        if any(d in layer.loop_sizes for d in dims):
            hints[oa] = reference_set_order(dims, "layer_dim")
        else:
            warn_for_layer(
                logger,
                layer.name,
                f"spatial_mapping_hint {oa}={list(dims)} names no loop dim of the layer; ignoring it",
            )
    every_dim = reference_set_order(layer.loop_dims, "layer_dim")
    for oa in accelerator.operational_array.dimensions:
        hints.setdefault(oa, every_dim)
    return hints


# ----- maximal unrollings (step 1) -------------------------------------------------------------
def maximal_unrollings(layer: Layer, accelerator: Accelerator) -> MaxUnrollings:
    """Largest allowed factor of every layer dim on every array dim (sizes and bandwidth)."""
    result = {
        oa: {dim: int(min(size, oa_size)) for dim, size in layer.loop_sizes.items()}
        for oa, oa_size in accelerator.operational_array.dimensions.items()
    }
    for memory, operand in _inner_memory_operands(layer, accelerator):
        _limit_to_bandwidth(result, layer, memory, operand)
    return result


def _inner_memory_operands(layer: Layer, accelerator: Accelerator) -> Iterator[tuple[Memory, str]]:
    """(inner memory, layer operand) for every operand stored in an innermost memory."""
    for memory in accelerator.inner_memories:
        for mem_op in memory.operands:
            if mem_op not in layer.layer_operand_of:
                raise InputError(
                    None,
                    f"mapping entry '{layer.mapping.name}': memory_operand_links",
                    f"no layer operand of layer '{layer.name}' is linked to memory operand '{mem_op}' "
                    f"of memory '{memory.name}'; link one to it",
                )
            yield memory, layer.layer_operand_of[mem_op]


def _limit_to_bandwidth(
    max_unroll: MaxUnrollings, layer: Layer, memory: Memory, operand: str
) -> None:
    """Cap the non-irrelevant dims on the memory's served array dims to its port bandwidth."""
    precision = layer.precision[operand]
    direction = "fl" if operand == layer.output else "tl"
    bandwidth = memory.bandwidth_max(layer.memory_operand(operand), direction)
    if precision <= 0 or bandwidth is None:
        # Precision 0: nothing to limit. No port for this direction: the reference crashes
        # (None // precision, TypeError); we leave this operand's unrollings unlimited instead.
        return
    limit = bandwidth // precision
    provided = layer.mapping.spatial_mapping or {}
    for oa in memory.served_dimensions:
        for dim, factor in max_unroll[oa].items():
            if dim not in layer.irrelevant[operand] and limit < factor:
                max_unroll[oa][dim] = limit
                if oa not in provided or dim in dict(
                    provided[oa]
                ):  # silent if the user chose others
                    warn_for_layer(
                        logger,
                        layer.name,
                        f"maximal unrolling of {dim} on {oa} limited to "
                        f"{limit} by the bandwidth of {memory.name}",
                    )


# ----- template (step 2) -----------------------------------------------------------------------
def mapping_template(
    layer: Layer, accelerator: Accelerator, max_unroll: MaxUnrollings
) -> ArrayMapping:
    """The mapping entry's spatial mapping, reduced to fit the layer and the array."""
    provided = layer.mapping.spatial_mapping or {}
    template = {oa: dict(pairs) for oa, pairs in provided.items()}
    _drop_unknown_dims(template, layer)
    for oa, unrolling in template.items():
        _clip_to_maximum(oa, unrolling, layer, accelerator, max_unroll)
    _fit_layer_sizes(template, layer)
    return template


def _drop_unknown_dims(template: ArrayMapping, layer: Layer) -> None:
    """Skip unrollings of dims the layer lacks (ZigZag's behaviour for entries shared by several
    layers); an entry written for this very layer (selected by its name) must fit it."""
    for oa, unrolling in template.items():
        for dim in [d for d in unrolling if d not in layer.loop_sizes]:
            if layer.mapping.name == layer.name:
                raise InputError(
                    None,
                    f"mapping entry '{layer.mapping.name}': spatial_mapping.{oa}",
                    f"layer '{layer.name}' has no dimension '{dim}' (its dimensions are "
                    f"{', '.join(layer.loop_sizes)}); unroll one of those",
                )
            warn_for_layer(
                logger, layer.name, f"spatial unrolling of {dim} on {oa} removed: not a loop dim"
            )
            del unrolling[dim]


def _clip_to_maximum(
    oa: str,
    unrolling: dict[str, int],
    layer: Layer,
    accelerator: Accelerator,
    max_unroll: MaxUnrollings,
) -> None:
    """Clip each factor to its maximum; the clipped product must fit the array dim."""
    where = f"mapping entry '{layer.mapping.name}': spatial_mapping.{oa}"
    sizes = accelerator.operational_array.dimensions
    if oa not in sizes:
        raise InputError(
            None,
            where,
            f"accelerator '{accelerator.name}' has no array dimension '{oa}' (it has "
            f"{', '.join(sizes)}); use one of those",
        )
    for dim, factor in unrolling.items():
        maximum = max_unroll[oa][dim]
        if factor > maximum:
            if maximum == 0:
                raise MappingError(
                    f"{layer.name}: {dim} cannot be unrolled on {oa}: an innermost memory's port is "
                    "narrower than one element of the operand it feeds"
                )
            warn_for_layer(
                logger, layer.name, f"spatial unrolling {dim} {factor} on {oa} reduced to {maximum}"
            )
            unrolling[dim] = maximum
    if utilization(unrolling) > sizes[oa]:
        text = " x ".join(f"{d} {f}" for d, f in unrolling.items())
        raise InputError(
            None,
            where,
            f"for layer '{layer.name}' the unrolling {text} = {utilization(unrolling)} exceeds the "
            f"size {sizes[oa]} of {oa}; lower the factors so that their product is at most {sizes[oa]}",
        )


def _fit_layer_sizes(template: ArrayMapping, layer: Layer) -> None:
    """Remove a dim from array dims (reference set order) until its total fits the layer."""
    contained = [dim for unrolling in template.values() for dim in unrolling]
    for dim in reference_set_order(contained, "layer_dim"):
        while _total_unrolling(template, dim) > layer.loop_sizes[dim]:
            holders = [oa for oa in reference_set_order(template, "oa_dim") if dim in template[oa]]
            oa = reference_set_pop(holders, "oa_dim")
            warn_for_layer(
                logger,
                layer.name,
                f"spatial unrolling of {dim} on {oa} removed: exceeds the layer size",
            )
            del template[oa][dim]


def _total_unrolling(mapping: ArrayMapping, dim: str) -> int:
    return math.prod(unrolling[dim] for unrolling in mapping.values() if dim in unrolling)


# ----- candidates (step 3) ---------------------------------------------------------------------
def spatial_mapping_candidates(
    layer: Layer, accelerator: Accelerator, *, enable_mixing: bool = False
) -> list[tuple[ArrayMapping, float]]:
    """Every valid spatial mapping with its performance indicator, best first.

    A fully specified mapping entry gives exactly one candidate (the reduced template).
    """
    max_unroll = maximal_unrollings(layer, accelerator)
    template = mapping_template(layer, accelerator, max_unroll)
    sizes = accelerator.operational_array.dimensions
    to_fill = [oa for oa in sizes if oa not in template]
    if not to_fill:
        return [(template, performance_indicator(template))]
    hints = effective_hints(layer, accelerator)
    options = [
        [
            u
            for u in _oa_dim_options(hints[oa], max_unroll[oa], enable_mixing)
            if _fits(u, max_unroll[oa], sizes[oa])
        ]
        for oa in to_fill
    ]
    valid = []
    for combination in itertools.product(*options):
        if _fits_layer((*template.values(), *combination), layer):
            candidate = {oa: dict(unrolling) for oa, unrolling in template.items()}
            candidate.update((oa, dict(unrolling)) for oa, unrolling in zip(to_fill, combination))
            valid.append((candidate, performance_indicator(candidate)))
    if not valid:
        raise _no_candidate_error(layer, to_fill, hints, max_unroll)
    return sorted(valid, key=lambda pair: pair[1], reverse=True)


def _oa_dim_options(
    hint: list[str], max_unroll: dict[str, int], enable_mixing: bool
) -> list[dict[str, int]]:
    """Unrollings one array dim may try: single dims (largest first), then mixed ones."""
    options = [
        {dim: f} for dim in hint if dim in max_unroll for f in reversed(_divisors(max_unroll[dim]))
    ]
    if enable_mixing:
        options += _mixed_options(hint, max_unroll)
    return options


def _mixed_options(hint: list[str], max_unroll: dict[str, int]) -> Iterator[dict[str, int]]:
    """Unrollings of 2 or more hinted dims at once, each by a divisor > 1 of its maximum."""
    pools = {dim: _divisors(m)[1:] for dim, m in max_unroll.items()}
    pools.update({dim: [0] for dim in hint if dim not in pools})
    for count in range(2, len(hint) + 1):
        for dims in itertools.combinations(hint, count):
            for factors in itertools.product(*(pools[d] for d in dims)):
                yield dict(zip(dims, factors))


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` in ascending order (none for 0)."""
    return [d for d in range(1, n + 1) if n % d == 0]


def _fits(unrolling: dict[str, int], max_unroll: dict[str, int], oa_size: int) -> bool:
    """Every factor within its maximum (unknown dims never are) and the array dim not overfilled."""
    return all(dim in max_unroll and f <= max_unroll[dim] for dim, f in unrolling.items()) and (
        utilization(unrolling) <= oa_size
    )


def _fits_layer(unrollings: tuple[dict[str, int], ...], layer: Layer) -> bool:
    """No layer dim unrolled beyond its size over all the given array dims together."""
    return all(total <= layer.loop_sizes[dim] for dim, total in _layer_totals(unrollings).items())


def _layer_totals(unrollings) -> dict[str, int]:
    """Total factor of each layer dim over some array dims' unrollings."""
    totals: dict[str, int] = {}
    for unrolling in unrollings:
        for dim, f in unrolling.items():
            totals[dim] = totals.get(dim, 1) * f
    return totals


def performance_indicator(mapping: ArrayMapping) -> float:
    """``U + U / M - 1``: array utilisation U plus a bonus for spreading over several dims
    (M = the largest total unrolling of a single layer dim; 1 if nothing is unrolled, where the
    reference fails, which it never reaches)."""
    used = float(int(math.prod(utilization(u) for u in mapping.values())))
    largest = max(_layer_totals(mapping.values()).values(), default=1)
    return used + (used / largest - 1)


def _no_candidate_error(
    layer: Layer, to_fill: list[str], hints: dict[str, list[str]], max_unroll: MaxUnrollings
) -> Exception:
    """InputError if a user hint only allows unfeedable dims on some array dim, else MappingError."""
    blocked = [oa for oa in to_fill if not any(max_unroll[oa].get(d, 0) for d in hints[oa])]
    for oa in blocked:
        if oa in layer.mapping.spatial_mapping_hint:
            return InputError(
                None,
                f"mapping entry '{layer.mapping.name}': spatial_mapping_hint.{oa}",
                f"none of {', '.join(hints[oa])} can be unrolled on {oa} for layer '{layer.name}'; "
                "hint other layer dims or remove the hint",
            )
    return MappingError(
        f"{layer.name}: no valid spatial mapping on {', '.join(blocked or to_fill)}: the innermost "
        "memories' ports are narrower than one element of the operands they feed"
    )


# ----- capacity (step 4) -----------------------------------------------------------------------
def limit_to_capacity(
    mapping: ArrayMapping, layer: Layer, accelerator: Accelerator
) -> ArrayMapping:
    """A copy of ``mapping`` whose unrollings fit the capacity of the innermost memories."""
    result = {oa: dict(unrolling) for oa, unrolling in mapping.items()}
    for memory, operand in _inner_memory_operands(layer, accelerator):
        _limit_to_memory_capacity(result, layer, memory, operand)
    return result


def _limit_to_memory_capacity(
    mapping: ArrayMapping, layer: Layer, memory: Memory, operand: str
) -> None:
    precision = layer.precision[operand]
    capacity = memory.size / precision if precision > 0 else math.inf
    served = reference_set_order(memory.served_dimensions, "oa_dim")
    relevant = [
        (dim, f)
        for oa in served
        for dim, f in mapping[oa].items()
        if dim not in layer.irrelevant[operand]
    ]
    if not relevant or capacity >= math.prod(f for _, f in relevant):
        return
    if capacity >= 1:  # below one element the search stops with MemoryTooSmall, which says why
        warn_for_layer(
            logger,
            layer.name,
            f"spatial unrolling limited to {int(capacity)} by the capacity of {memory.name}",
        )
    dims = reference_set_order([dim for dim, _ in relevant], "layer_dim")
    old = [mapping[oa][dim] for dim in dims for oa in served if dim in mapping[oa]]
    # Keyed by the old factor: equal old factors share the last new value (reference quirk).
    new_of = dict(zip(old, _shrink_largest(old, capacity)))
    for oa in served:
        mapping[oa] = {dim: new_of[f] if dim in dims else f for dim, f in mapping[oa].items()}


def _shrink_largest(factors: list[int], limit: float) -> list[int]:
    """Decrement the (first) largest factor until the product is at most ``limit``."""
    result = list(factors)
    while math.prod(result) > limit:
        result[result.index(max(result))] -= 1
    return result


def innermost_overflow(
    mapping: ArrayMapping, layer: Layer, accelerator: Accelerator
) -> LevelAssignmentFailed | None:
    """Why no loop ordering can fit ``mapping``: an operand's innermost memory overflowed by the
    unrolling alone (what the search would find ordering by ordering), or None if it fits."""
    oa_sizes = accelerator.operational_array.dimensions
    levels = distribute_over_levels(
        adjust_factors(mapping, layer, oa_sizes, integer=False), layer, accelerator
    )
    temporal = temporal_loop_sizes(layer.loop_sizes, flat_unrollings(levels, layer))
    loops = list(temporal.items()) or [(layer.loop_dims[0], 1)]
    return MemoryLevelAssigner(layer, accelerator, levels).spatial_overflow(loops)


def _overflows(mapping: ArrayMapping, layer: Layer, accelerator: Accelerator) -> bool:
    """An innermost memory overflowed, or holding less than one element (a factor cut to 0)."""
    if any(f < 1 for unrolling in mapping.values() for f in unrolling.values()):
        return True
    return innermost_overflow(mapping, layer, accelerator) is not None


def _none_can_fit(layer: Layer, accelerator: Accelerator) -> bool:
    """Whether some innermost memory is too small for its operands' least share under any
    unrolling (one element each: no factor goes below 1), so that walking the ranking is vain. The
    output's least precision is that of final outputs only if the array dims its memory serves
    can hold all of the output-irrelevant loops; else that of partial sums."""
    oa_sizes = accelerator.operational_array.dimensions
    ir_size = math.prod(
        s for d, s in layer.loop_sizes.items() if d in layer.irrelevant[layer.output] and s > 1
    )
    least: dict[str, float] = {}
    for operand, mem_operand in layer.memory_operand_links.items():
        if not accelerator.hierarchy(mem_operand):
            continue
        memory = accelerator.hierarchy(mem_operand)[0]
        precision = layer.precision[operand]
        if operand == layer.output:
            served = math.prod(oa_sizes.get(oa, 1) for oa in memory.served_dimensions)
            if ir_size <= served:
                precision = min(precision, layer.final_output_precision)
        least[memory.name] = least.get(memory.name, 0) + precision
    return any(bits > accelerator.memory[name].size for name, bits in least.items())


def _refuse_zero_factors(
    mappings: list[ArrayMapping], layer: Layer, accelerator: Accelerator
) -> list[ArrayMapping]:
    """``mappings``, unless the capacity step cut a factor to 0 (an innermost memory holding less
    than one element of an operand unrolled on the array dims it serves): then one line naming
    that memory, where the search would divide by the 0."""
    for mapping in mappings:
        for memory, operand in _inner_memory_operands(layer, accelerator):
            bits = layer.precision[operand]
            if memory.size >= bits:
                continue
            if any(
                f < 1 and dim not in layer.irrelevant[operand]
                for oa in memory.served_dimensions
                for dim, f in mapping.get(oa, {}).items()
            ):
                raise MemoryTooSmall(
                    f"accelerator '{accelerator.name}'",
                    f"memories.{memory.name}.size",
                    f"memory '{memory.name}' holds {memory.size} bits, less than one {bits}-bit "
                    f"{operand} element of layer '{layer.name}'; make it at least {bits} bits",
                )
    return mappings


# ----- steps 3 and 4 together ------------------------------------------------------------------
def generate_spatial_mappings(
    layer: Layer, accelerator: Accelerator, *, nb_mappings: int = 3, enable_mixing: bool = False
) -> list[ArrayMapping]:
    """The ``nb_mappings`` best spatial mappings, fitted to memory capacity (one if fully given):
    the reference's list, some of which may still overflow an innermost memory."""
    ranked = spatial_mapping_candidates(layer, accelerator, enable_mixing=enable_mixing)
    return [limit_to_capacity(mapping, layer, accelerator) for mapping, _ in ranked[:nb_mappings]]


def fitting_spatial_mappings(
    layer: Layer, accelerator: Accelerator, *, nb_mappings: int = 3, enable_mixing: bool = False
) -> list[ArrayMapping]:
    """What the searches evaluate: :func:`generate_spatial_mappings`'s list when all of it fits the
    innermost memories; else the ``nb_mappings`` best candidates that do (smaller unrollings, in
    the ranking's order), where the reference gives up on the layer. A fully given mapping is
    kept, and so is the list when no candidate fits, for the search to say which memory is too
    small; a factor cut to 0 on the way is one line naming the memory
    (docs/models/mapping-search.md#spatial-mappings)."""
    ranked = spatial_mapping_candidates(layer, accelerator, enable_mixing=enable_mixing)
    best = [limit_to_capacity(mapping, layer, accelerator) for mapping, _ in ranked[:nb_mappings]]
    if len(ranked) == 1:
        return _refuse_zero_factors(best, layer, accelerator)
    fitting = [m for m in best if not _overflows(m, layer, accelerator)]
    if len(fitting) == len(best) or _none_can_fit(layer, accelerator):
        return _refuse_zero_factors(best, layer, accelerator)
    # the rest of the ranking, each limited once; the best ones were limited and checked above
    rest = (limit_to_capacity(mapping, layer, accelerator) for mapping, _ in ranked[len(best) :])
    chosen = fitting + list(
        itertools.islice(
            (m for m in rest if not _overflows(m, layer, accelerator)), nb_mappings - len(fitting)
        )
    )
    if not chosen:
        return _refuse_zero_factors(best, layer, accelerator)
    warn_for_layer(
        logger,
        layer.name,
        f"{len(best) - len(fitting)} of the {len(best)} best spatial mappings overflow an innermost "
        "memory; the next fitting ones in the ranking taken instead",
    )
    return chosen
