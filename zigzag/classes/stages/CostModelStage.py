"""ZigZag's seed-era ``zigzag/classes/stages/CostModelStage.py``."""

from zigzag.stages import CostModelStage

__all__ = ["CostModelStage"]
