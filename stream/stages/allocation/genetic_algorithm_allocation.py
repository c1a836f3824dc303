"""Stream's genetic allocation stage: our seeded search (``ga_seed``, default 0), yielding
``(scme, search)``, ``scme`` Stream's schedule object."""

from zigzag.multicore.stages import GeneticAlgorithmAllocationStage

__all__ = ["GeneticAlgorithmAllocationStage"]
