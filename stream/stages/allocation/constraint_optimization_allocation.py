"""Stream's constraint-optimisation allocation stage: not available (Stream solves it with the
commercial Gurobi solver); building it is a one-line error pointing to the genetic search."""

from zigzag.errors import InputError

__all__ = ["ConstraintOptimizationAllocationStage"]


class ConstraintOptimizationAllocationStage:
    """Raises :class:`~zigzag.errors.InputError` when built."""

    def __init__(self, list_of_callables, **kwargs):
        raise InputError(None, "ConstraintOptimizationAllocationStage", "is not supported (Stream solves it with "
                         "the commercial Gurobi solver); use GeneticAlgorithmAllocationStage from "
                         "stream.stages.allocation.genetic_algorithm_allocation")
