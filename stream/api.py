"""Stream's one-call API: ``optimize_allocation_ga`` (our seeded genetic allocation search) and
``optimize_allocation_co`` (Stream's constraint-optimisation allocation, solved with OR-Tools CP-SAT),
the late-2024 names; and Stream 2.x's ``evaluate_mapping``, ``select_mapping``, ``SolveOptions`` and
``MappingEstimate`` (``stream.solve``)."""

from __future__ import annotations

import logging
import pickle
from collections.abc import Sequence
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore import api as _api
from zigzag.multicore.cn_limit import DEFAULT_MAX_CNS

from stream.cost_model.cost_model import StreamCostModelEvaluation
from stream.solve import MappingEstimate, SolveOptions, evaluate_mapping, select_mapping

#: the allocation search's seed when none is given (Stream's search is unseeded)
DEFAULT_SEED = 0

__all__ = [
    "DEFAULT_SEED",
    "MappingEstimate",
    "SolveOptions",
    "evaluate_mapping",
    "optimize_allocation_co",
    "optimize_allocation_ga",
    "select_mapping",
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
    seed: int = DEFAULT_SEED,
    workers: int = 1,
    max_cns: int | None = DEFAULT_MAX_CNS,
) -> StreamCostModelEvaluation:
    """Search the core allocation of ``workload`` on ``hardware`` and return the lowest-latency schedule.

    As Stream: ``<output_path>/<experiment_id>/cost_lut.pickle`` holds the cost table and
    ``scme.pickle`` the result; with ``skip_if_exists`` an existing ``scme.pickle`` is returned
    without searching. Ours: the search is seeded (``seed``, default :data:`DEFAULT_SEED`), may use
    ``workers`` processes, refuses more than ``max_cns`` computation nodes before building them
    (``None``: no limit), and the folder also gets the front and the chosen allocation.
    """
    scme_path = Path(output_path) / experiment_id / "scme.pickle"
    if skip_if_exists and scme_path.exists():
        logging.getLogger(__name__).info(
            "reusing the saved schedule %s (skip_if_exists)", scme_path
        )
        return _load(scme_path)
    result = _api.optimize_allocation_ga(
        hardware,
        workload,
        mapping,
        mode,
        layer_stacks,
        nb_ga_generations,
        nb_ga_individuals,
        experiment_id,
        output_path,
        seed=seed,
        workers=workers,
        max_cns=max_cns,
    )
    scme = StreamCostModelEvaluation.of(result)
    with open(scme_path, "wb") as handle:
        pickle.dump(scme, handle)
    return scme


def optimize_allocation_co(
    hardware: str,
    workload: str,
    mapping: str,
    mode: str,
    layer_stacks,
    experiment_id: str,
    output_path: str,
    skip_if_exists: bool = False,
    *,
    time_limit: float = 600,
    gap: float = 1e-4,
    max_cns: int | None = DEFAULT_MAX_CNS,
) -> StreamCostModelEvaluation:
    """Allocate ``workload``'s layers to cores by constraint optimisation and return the schedule.

    As Stream: ``<output_path>/<experiment_id>/`` holds ``cost_lut.pickle``, ``waco/`` (the
    steady states' slots and allocation) and ``scme.pickle`` (reused with ``skip_if_exists``);
    ``outputs/<experiment_id>/cost_lut_post_co.pickle`` the cost table after the allocation.
    Ours: the open solver OR-Tools CP-SAT, ``time_limit`` seconds and ``gap`` per layer stack;
    ``max_cns`` as in :func:`optimize_allocation_ga`.
    """
    scme_path = Path(output_path) / experiment_id / "scme.pickle"
    if skip_if_exists and scme_path.exists():
        logging.getLogger(__name__).info(
            "reusing the saved schedule %s (skip_if_exists)", scme_path
        )
        return _load(scme_path)
    scme = StreamCostModelEvaluation.of(
        _api.optimize_allocation_co(
            hardware,
            workload,
            mapping,
            mode,
            layer_stacks,
            experiment_id,
            output_path,
            time_limit=time_limit,
            gap=gap,
            max_cns=max_cns,
        )
    )
    with open(scme_path, "wb") as handle:
        pickle.dump(scme, handle)
    return scme


def _load(path: Path) -> StreamCostModelEvaluation:
    try:
        with open(path, "rb") as handle:
            loaded = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ModuleNotFoundError) as exc:
        raise InputError(
            path, None, f"cannot read the saved schedule ({exc}); delete it to search again"
        ) from None
    return StreamCostModelEvaluation.of(loaded) if hasattr(loaded, "problem") else loaded
