"""Stream's ``stream.cost_model.cost_model``: the schedule object ``StreamCostModelEvaluation``
(:mod:`zigzag.multicore.evaluation`, the one result type of the stages and the API)."""

from zigzag.multicore.evaluation import StreamCostModelEvaluation

__all__ = ["StreamCostModelEvaluation"]
