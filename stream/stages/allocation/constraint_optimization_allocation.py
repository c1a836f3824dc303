"""Stream's constraint-optimisation allocation stage: ours, solved with OR-Tools CP-SAT, yielding
Stream's schedule object."""

from zigzag.multicore.stages import ConstraintOptimizationAllocationStage as _AllocationStage

from stream.cost_model.cost_model import StreamCostModelEvaluation

__all__ = ["ConstraintOptimizationAllocationStage"]


class ConstraintOptimizationAllocationStage(_AllocationStage):
    """Leaf: yields ``(scme, search)``, ``scme`` a :class:`StreamCostModelEvaluation`."""

    def run(self):
        for scme, search in super().run():
            yield StreamCostModelEvaluation.of(scme), search
