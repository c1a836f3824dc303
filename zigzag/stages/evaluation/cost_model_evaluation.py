"""ZigZag's module path for :class:`CostModelStage`
(``zigzag.stages.evaluation.cost_model_evaluation``)."""

from zigzag.stages.evaluation import CostModelStage

__all__ = ["CostModelStage"]
