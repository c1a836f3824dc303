"""ZigZag's names for the cost model's results (``zigzag.cost_model.cost_model``).

``CostModelEvaluation`` is our per-layer :class:`~zigzag.cost.layer_result.LayerCostResult`
(it answers to ZigZag's attribute names), ``CumulativeCME`` our network sum
:class:`~zigzag.cost.result.CumulativeResult`; ``CostModelEvaluationABC`` covers both in
``isinstance`` checks.
"""

from abc import ABC

from zigzag.cost.layer_result import LayerCostResult as CostModelEvaluation
from zigzag.cost.result import CostResult
from zigzag.cost.result import CumulativeResult as CumulativeCME


class CostModelEvaluationABC(ABC):  # noqa: B024  (an ABC for isinstance checks: results are registered)
    """Any cost model result: a per-layer evaluation or a sum of them."""


CostModelEvaluationABC.register(CostResult)
CostModelEvaluationABC.register(CumulativeCME)

__all__ = ["CostModelEvaluation", "CostModelEvaluationABC", "CumulativeCME"]
