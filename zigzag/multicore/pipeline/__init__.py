"""One multi-core pipeline: a run's description and the three steps every entry point takes.

* :mod:`.spec`: :class:`MulticoreRun`, the allocation methods and their defaults (light: no
  numerical imports, so configuration code can read them);
* :mod:`.prepared`: :func:`prepare` → :class:`Prepared` (accelerator, mapping, CN graph, cost table,
  problem);
* :mod:`.scheduled`: :func:`allocate` (fixed, genetic search, constraint optimisation) and
  :func:`schedule` → :class:`Scheduled`;
* :mod:`.folder`: :func:`write_run`, the one writer of a run folder;
* :mod:`.calls`: :func:`run_multicore` (all of it in one call) and Stream's one-call functions
  :func:`run_stream`, :func:`search_allocation`, :func:`optimize_co`.

The steps are imported on first use (``from zigzag.multicore.pipeline import prepare``), so that
importing the description stays light.
"""

from zigzag.lazy import lazy_api

from zigzag.multicore.pipeline.spec import (
    CHOICES,
    LATENCY_MODELS,
    MODES,
    STREAM_GENETIC_SEARCH,
    Allocation,
    ConstraintOptimisation,
    FixedAllocation,
    GeneticSearch,
    MulticoreRun,
    allocation_of,
    search_defaults,
)

_STEPS = {
    "Prepared": "prepared",
    "prepare": "prepared",
    "Scheduled": "scheduled",
    "allocate": "scheduled",
    "schedule": "scheduled",
    "write_run": "folder",
    "run_multicore": "calls",
    "run_stream": "calls",
    "search_allocation": "calls",
    "optimize_co": "calls",
}

__getattr__ = lazy_api(__name__, _STEPS)


__all__ = [
    "CHOICES",
    "LATENCY_MODELS",
    "MODES",
    "STREAM_GENETIC_SEARCH",
    "Allocation",
    "ConstraintOptimisation",
    "FixedAllocation",
    "GeneticSearch",
    "MulticoreRun",
    "allocation_of",
    "search_defaults",
    *_STEPS,
]
