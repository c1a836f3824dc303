"""Stream's genetic allocation stage: our seeded search (``ga_seed``, default 0), yielding
Stream's schedule object."""

from zigzag.multicore.stages import GeneticAlgorithmAllocationStage as _SearchStage

from stream.cost_model.cost_model import StreamCostModelEvaluation

__all__ = ["GeneticAlgorithmAllocationStage"]


class GeneticAlgorithmAllocationStage(_SearchStage):
    """Leaf: yields ``(scme, search)``, ``scme`` a :class:`StreamCostModelEvaluation`."""

    def run(self):
        for scme, search in super().run():
            yield StreamCostModelEvaluation.of(scme), search
