"""One multi-core pipeline: a run's description (:mod:`.spec`) and the steps every entry point takes."""

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
]
