"""Stream's 2023 ``stream.classes.cost_model.cost_model``: the schedule object."""

from zigzag.multicore.evaluation import StreamCostModelEvaluation

__all__ = ["StreamCostModelEvaluation"]
