"""SALSA: simulated annealing over loop orderings (docs/models/mapping-search.md#salsa), with a seed.

Starting from a random ordering of all loop prime factors, each iteration swaps two positions
and accepts the move with probability ``exp((current / next - 1) / T)`` (always when better),
the temperature decaying as ``T0 * 0.995**i``. Unlike ZigZag's SALSA it is seeded (same seed,
same result) and a move whose ordering does not fit the memories is simply rejected.
"""

from __future__ import annotations

import math

import numpy as np

from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping_search.spatial_mapping import ArrayMapping, LevelMapping
from zigzag.mapping_search.memory_levels import LevelAssignmentFailed, MemoryLevelAssigner
from zigzag.mapping_search.loma import layer_temporal_loops, no_fit_error
from zigzag.mapping_search.loop_factors import loop_prime_factors
from zigzag.mapping_search.options import SearchOptions
from zigzag.workload.layer import Layer

#: Random starting orderings tried before giving up on finding one that fits.
START_ATTEMPTS = 100


def salsa_search(
    layer: Layer,
    accelerator: Accelerator,
    array_mapping: ArrayMapping,
    fractional: LevelMapping,
    integer: LevelMapping,
    options: SearchOptions,
) -> tuple[CostResult, int]:
    """Best result found by annealing, and the number of evaluations made."""
    rng = np.random.default_rng(options.salsa_seed)
    assigner = MemoryLevelAssigner(
        layer, accelerator, fractional, even=options.temporal_mapping_type == "even"
    )
    factors = loop_prime_factors(
        layer_temporal_loops(layer, fractional), None, pseudo_dim=layer.loop_dims[0]
    )
    evaluations = 0

    def cost_of(ordering: list) -> CostResult | None:
        nonlocal evaluations
        try:
            temporal = assigner.assign(ordering)
        except LevelAssignmentFailed:
            return None
        evaluations += 1
        return evaluate(
            layer,
            accelerator,
            fractional,
            integer,
            temporal,
            spatial_mapping_array=array_mapping,
            **options.model_options(),
        )

    def criterion(result: CostResult) -> float:
        return (
            result.energy_total
            if options.salsa_opt_criterion == "energy"
            else result.latency_total0
        )

    current_order, current = _fitting_start(factors, rng, cost_of)
    if current is None:
        even = options.temporal_mapping_type == "even"
        raise no_fit_error(layer, accelerator, fractional, even=even, lpf_limit=None)
    best = current
    n = len(factors)
    for iteration in range(options.salsa_iteration_number):
        temperature = options.salsa_start_temperature * 0.995**iteration
        i, j = rng.integers(0, n, size=2)
        candidate_order = list(current_order)
        candidate_order[i], candidate_order[j] = candidate_order[j], candidate_order[i]
        candidate = cost_of(candidate_order)
        draw = rng.random()
        if candidate is None:
            continue
        ratio = criterion(current) / criterion(candidate) if criterion(candidate) else 1.0
        if draw < math.exp(min(0.0, ratio - 1) / temperature):
            current_order, current = candidate_order, candidate
            if criterion(current) < criterion(best):
                best = current
    return best, evaluations


def _fitting_start(factors: list, rng: np.random.Generator, cost_of):
    for _ in range(START_ATTEMPTS):
        order = list(factors)
        rng.shuffle(order)
        result = cost_of(order)
        if result is not None:
            return order, result
    return None, None
