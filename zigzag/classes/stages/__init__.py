"""ZigZag's seed-era ``zigzag.classes.stages``: every stage of :mod:`zigzag.stages` (``from
zigzag.classes.stages import *``), and one module per stage file the seed-era documentation links
(``zigzag.classes.stages.SaveStage``, ``.ReduceStages``, ...)."""

from zigzag import stages as _stages
from zigzag.stages import *  # noqa: F403 - the seed's import style

__all__ = list(_stages.__all__)
