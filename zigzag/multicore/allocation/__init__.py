"""Layer-to-core allocation search (Stream's genetic allocation, docs/models/multi-core.md#allocation-search), seeded and parallel.

* :mod:`.genes`: the flexible (layer, group) genes and the fitness of one allocation;
* :mod:`.heuristics`: the search's starting allocations (blocks of layers along linked cores);
* :mod:`.nsga`: the NSGA-II search (DEAP selection and Pareto front, own seeded variation);
* :mod:`.front`: front.csv and the chosen allocation as a fixed mapping file;
* :mod:`.search`: :class:`AllocationSearch`, a finished search (front, chosen point, its schedule);
* :mod:`.optimize`: :class:`ConstraintSearch`, a finished constraint-optimisation allocation.
"""

from zigzag.multicore.allocation.genes import (
    AllocationProblem,
    Gene,
    allocation_genes,
    build_allocation_problem,
)
from zigzag.multicore.allocation.nsga import FrontPoint, SearchStats, nsga2
from zigzag.multicore.allocation.search import AllocationSearch, dominated_share

__all__ = [
    "AllocationProblem",
    "AllocationSearch",
    "FrontPoint",
    "Gene",
    "SearchStats",
    "allocation_genes",
    "build_allocation_problem",
    "dominated_share",
    "nsga2",
]
