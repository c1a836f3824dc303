"""The cost model: the scalar oracle (`zigzag.cost.model`) and its results (`zigzag.cost.result`)."""

from zigzag.cost.model import CostDetail, analyse, evaluate
from zigzag.cost.result import CostResult, CumulativeResult, sum_results

__all__ = ["CostDetail", "CostResult", "CumulativeResult", "analyse", "evaluate", "sum_results"]
