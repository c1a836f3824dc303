"""ZigZag's module path for the reduction stages (``zigzag.stages.results.reduce_stages``)."""

from zigzag.stages.reduce import (
    ListifyStage,
    MinimalEDPStage,
    MinimalEnergyStage,
    MinimalLatencyStage,
    SumStage,
)

__all__ = [
    "ListifyStage",
    "MinimalEDPStage",
    "MinimalEnergyStage",
    "MinimalLatencyStage",
    "SumStage",
]
