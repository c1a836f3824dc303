"""Stream's constraint-optimisation allocation stage (OR-Tools CP-SAT), yielding
``(scme, search)``, ``scme`` Stream's schedule object."""

from zigzag.multicore.stages import ConstraintOptimizationAllocationStage

__all__ = ["ConstraintOptimizationAllocationStage"]
