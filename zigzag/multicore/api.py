"""Stream's one-call API: :func:`optimize_allocation_ga` and :func:`optimize_allocation_co`
(docs/models/multi-core.md), in-process."""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.cn_limit import DEFAULT_MAX_CNS, cn_limit
from zigzag.multicore.pipeline.folder import write_run
from zigzag.multicore.pipeline.scheduled import Scheduled
from zigzag.multicore.pipeline.spec import (
    MODES,
    ConstraintOptimisation,
    GeneticSearch,
    MulticoreRun,
)
from zigzag.multicore.stages import (
    AcceleratorParserStage,
    ConstraintOptimizationAllocationStage,
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
    AcceleratorParserStage,
    ONNXModelParserStage,
    LayerStacksGenerationStage,
    TilingGenerationStage,
    TiledWorkloadGenerationStage,
    ZigZagCoreMappingEstimationStage,
    SetFixedAllocationPerformanceStage,
    SchedulingOrderGenerationStage,
    GeneticAlgorithmAllocationStage,
]


CO_STAGES = [*STAGES[:-1], ConstraintOptimizationAllocationStage]


def _check_inputs(hardware: str, workload: str, mapping: str, mode: str) -> None:
    for field, path in (("hardware", hardware), ("workload", workload), ("mapping", mapping)):
        if not os.path.exists(path):
            raise InputError(path, field, "file not found; give an existing file")
    if mode not in MODES:
        raise InputError(None, "mode", f"'{mode}' is not lbl or fused")


def _saved_result(
    hardware: str,
    workload: str,
    mapping: str,
    mode: str,
    experiment_id: str,
    output_path: str,
    skip_if_exists: bool,
) -> tuple[Path, StreamCostModelEvaluation | None]:
    """The checked inputs' result folder, and its saved schedule when ``skip_if_exists`` finds one."""
    _check_inputs(hardware, workload, mapping, mode)
    folder = Path(output_path) / experiment_id
    folder.mkdir(parents=True, exist_ok=True)
    if skip_if_exists and (folder / "scme.pickle").exists():
        with open(folder / "scme.pickle", "rb") as handle:
            return folder, pickle.load(handle)
    return folder, None


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
    latency_model: str = "auto",
    max_cns: int | None = DEFAULT_MAX_CNS,
) -> StreamCostModelEvaluation:
    """Search the allocation of ``workload`` on ``hardware`` and return the chosen schedule.

    As Stream: files are checked, ``<output_path>/<experiment_id>/`` holds the cost table
    (``cost_lut.pickle``, JSON content) and the result (``scme.pickle``), which
    ``skip_if_exists`` loads instead of searching again. Ours: the search is seeded (``seed``),
    may use several processes (``workers``), and also writes the whole front and the chosen
    allocation (``front.csv``, ``allocation.yaml``, ``summary.json``, ``schedule.csv``) there;
    ``latency_model`` is ``run_stream``'s (``bandwidth_bound``: the DRAM link's width is a hard limit;
    ``auto``, the default: that for an LLM step, Stream's ``zigzag`` otherwise);
    more than ``max_cns`` computation nodes are refused before any is built (``None``: no limit).
    """
    folder, saved = _saved_result(
        hardware, workload, mapping, mode, experiment_id, output_path, skip_if_exists
    )
    if saved is not None:
        return saved
    with cn_limit(max_cns):
        answers = MainStage(
            STAGES,
            accelerator=hardware,
            workload_path=workload,
            mapping_path=mapping,
            loma_lpf_limit=6,
            nb_ga_generations=nb_ga_generations,
            nb_ga_individuals=nb_ga_individuals,
            mode=mode,
            layer_stacks=[tuple(s) for s in layer_stacks] if layer_stacks else None,
            cost_lut_path=str(folder / "cost_lut.pickle"),
            operands_to_prefetch=[],
            ga_seed=seed,
            ga_workers=workers,
            latency_model=latency_model,
            max_cns=max_cns,
        ).run()
    scme, search = answers[0]
    run = MulticoreRun(hardware, workload, mapping, mode, GeneticSearch(nb_ga_individuals, nb_ga_generations, seed),
                       layer_stacks=layer_stacks, latency_model=latency_model)  # fmt: skip
    write_run(folder, Scheduled(run, search.accelerator, search, search.fixed_schedule()))
    with open(folder / "scme.pickle", "wb") as handle:
        pickle.dump(scme, handle)
    return scme


def optimize_allocation_co(
    hardware: str,
    workload: str,
    mapping: str,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None,
    experiment_id: str,
    output_path: str,
    skip_if_exists: bool = False,
    *,
    time_limit: float = ConstraintOptimisation.time_limit,
    gap: float = ConstraintOptimisation.gap,
    latency_model: str = "auto",
    max_cns: int | None = DEFAULT_MAX_CNS,
) -> StreamCostModelEvaluation:
    """Allocate ``workload``'s layers by constraint optimisation (OR-Tools CP-SAT) and return the schedule.

    As Stream: ``<output_path>/<experiment_id>/`` holds the cost table (``cost_lut.pickle``), the
    steady-state allocations (``waco/``: ``co_slots.csv``, ``allocation.yaml``, ``summary.json``)
    and the result (``scme.pickle``, loaded instead of solving again with ``skip_if_exists``); the
    cost table of the split layers goes to ``outputs/<experiment_id>/cost_lut_post_co.pickle``
    (Stream's fixed place, relative to the working directory). Ours: ``time_limit`` seconds and
    ``gap`` relative optimality gap per layer stack; ``latency_model`` as in
    :func:`optimize_allocation_ga` (for the schedule of the allocation found), and so is ``max_cns``.
    """
    folder, saved = _saved_result(
        hardware, workload, mapping, mode, experiment_id, output_path, skip_if_exists
    )
    if saved is not None:
        return saved
    post = Path("outputs") / experiment_id / "cost_lut_post_co.pickle"
    post.parent.mkdir(parents=True, exist_ok=True)
    with cn_limit(max_cns):
        answers = MainStage(
            CO_STAGES,
            accelerator=hardware,
            workload_path=workload,
            mapping_path=mapping,
            loma_lpf_limit=6,
            mode=mode,
            layer_stacks=[tuple(s) for s in layer_stacks] if layer_stacks else None,
            cost_lut_path=str(folder / "cost_lut.pickle"),
            allocations_path=str(folder / "waco"),
            cost_lut_post_co_path=str(post),
            operands_to_prefetch=[],
            co_time_limit=time_limit,
            co_gap=gap,
            latency_model=latency_model,
            max_cns=max_cns,
        ).run()
    scme, _ = answers[0]
    with open(folder / "scme.pickle", "wb") as handle:
        pickle.dump(scme, handle)
    return scme
