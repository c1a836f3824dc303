"""Stream's one-call API: :func:`optimize_allocation_ga` (docs/models/multi-core.md), in-process."""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from pathlib import Path

from zigzag.errors import InputError
from zigzag.stream.stages import (
    AcceleratorParserStage,
    GeneticAlgorithmAllocationStage,
    LayerStacksGenerationStage,
    MainStage,
    ONNXModelParserStage,
    SchedulingOrderGenerationStage,
    SetFixedAllocationPerformanceStage,
    StreamCostModelEvaluation,
    TiledWorkloadGenerationStage,
    TilingGenerationStage,
    ZigZagCoreMappingEstimationStage,
)

STAGES = [
    AcceleratorParserStage, ONNXModelParserStage, LayerStacksGenerationStage, TilingGenerationStage,
    TiledWorkloadGenerationStage, ZigZagCoreMappingEstimationStage, SetFixedAllocationPerformanceStage,
    SchedulingOrderGenerationStage, GeneticAlgorithmAllocationStage,
]


def optimize_allocation_ga(
    hardware: str,
    workload: str,
    mapping: str,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None,
    nb_ga_generations: int,
    nb_ga_individuals: int,
    experiment_id: str,
    output_path: str,
    skip_if_exists: bool = False,
    *,
    seed: int = 0,
    workers: int = 1,
) -> StreamCostModelEvaluation:
    """Search the allocation of ``workload`` on ``hardware`` and return the chosen schedule.

    As Stream: files are checked, ``<output_path>/<experiment_id>/`` holds the cost table
    (``cost_lut.pickle``, JSON content) and the result (``scme.pickle``), which
    ``skip_if_exists`` loads instead of searching again. Ours: the search is seeded (``seed``),
    may use several processes (``workers``), and also writes the whole front and the chosen
    allocation (``front.csv``, ``allocation.yaml``, ``summary.json``, ``schedule.csv``) there.
    """
    for field, path in (("hardware", hardware), ("workload", workload), ("mapping", mapping)):
        if not os.path.exists(path):
            raise InputError(path, field, "file not found; give an existing file")
    if mode not in ("lbl", "fused"):
        raise InputError(None, "mode", f"'{mode}' is not lbl or fused")
    folder = Path(output_path) / experiment_id
    folder.mkdir(parents=True, exist_ok=True)
    scme_path = folder / "scme.pickle"
    if skip_if_exists and scme_path.exists():
        with open(scme_path, "rb") as handle:
            return pickle.load(handle)
    answers = MainStage(
        STAGES, accelerator=hardware, workload_path=workload, mapping_path=mapping, loma_lpf_limit=6,
        nb_ga_generations=nb_ga_generations, nb_ga_individuals=nb_ga_individuals, mode=mode,
        layer_stacks=[tuple(s) for s in layer_stacks] if layer_stacks else None,
        cost_lut_path=str(folder / "cost_lut.pickle"), operands_to_prefetch=[], ga_seed=seed, ga_workers=workers,
    ).run()
    scme, search = answers[0]
    search.write(folder)
    with open(scme_path, "wb") as handle:
        pickle.dump(scme, handle)
    return scme
