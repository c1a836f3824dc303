"""Stream 2.x's entry points whose names do not collide with the late-2024 ones: ``evaluate_mapping``,
``select_mapping``, ``SolveOptions`` and ``MappingEstimate`` (re-exported by ``stream.api``;
docs/compat/stream-users.md#stream-2x-entry-points).

Same signatures as Stream 2.1.1. A mapping is a mapping file in either format (Stream 2.x's dict
or the late-2024 list) or None for the automatic mapping (``zigzag.multicore.automap``). The
allocation is Stream's constraint optimisation (OR-Tools CP-SAT); the schedule is our late-2024
model's. Results go to ``output_path``: ``automatic_mapping.yaml`` (without a mapping),
``allocation.yaml`` (the chosen cores as a fixed mapping), ``summary.json``, ``schedule.csv``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zigzag.errors import InputError

logger = logging.getLogger(__name__)

__all__ = ["MappingEstimate", "SolveOptions", "evaluate_mapping", "select_mapping"]


@dataclass(frozen=True)
class SolveOptions:
    """Stream 2.1.1's solve options. Used here: ``time_limit_s`` (each allocation solve's bound) and
    ``artifacts`` (write the result files). The others are accepted and not used: ``backend``
    (always CP-SAT), ``nb_cols_to_use``, ``kernel_library``, ``tile_search``, ``families``,
    ``stage_options`` and ``instrumentation`` belong to 2.x's solver and AIE back-end,
    ``temporal_mapping_type`` to its ZigZag (ours searches even and uneven), ``solver_log``."""

    backend: str = "ortools_gscip"
    nb_cols_to_use: int = 4
    temporal_mapping_type: str = "uneven"
    kernel_library: Any = None
    tile_search: bool = False
    time_limit_s: float = 300
    solver_log: bool = False
    artifacts: bool = True
    instrumentation: Mapping[str, Any] | None = None
    stage_options: Mapping[str, Any] = field(default_factory=dict)
    families: Sequence[Any] | None = None

    def __post_init__(self):
        if not self.time_limit_s > 0:
            raise ValueError(f"SolveOptions.time_limit_s must be positive, got {self.time_limit_s}")


@dataclass(frozen=True)
class MappingEstimate:
    """A priced mapping: ``mapping`` as given (None: the automatic one); ``group_cycles`` one latency
    for the whole run (our schedule is one, not one per fused group); ``context`` our finished run
    (``zigzag.multicore.pipeline.Scheduled``: its ``schedule`` has latency, energy and every figure,
    ``allocated`` the constraint optimisation's answer, ``mapping`` the mapping used)."""

    mapping: str | None
    group_cycles: tuple[float, ...]
    dispatch_cycles: float
    context: Any = field(repr=False, compare=False)

    @property
    def cycles(self) -> float:
        return sum(self.group_cycles) + self.dispatch_cycles

    @property
    def energy(self) -> float:
        """Ours (2.x reports energy only in its solver's report): pJ of the whole run."""
        return self.context.schedule.energy


def evaluate_mapping(
    hardware: str,
    workload: Any,
    output_path: str,
    mapping: str | None = None,
    options: SolveOptions | None = None,
) -> MappingEstimate:
    """Allocate ``workload`` on ``hardware`` under ``mapping`` (None: the automatic mapping) and
    price it: fused along the mapping's fused groups if it has any, else layer by layer."""
    from zigzag.multicore.pipeline.calls import optimize_co
    from zigzag.multicore.mapping import load_stream_mapping
    from zigzag.multicore.topology import load_multicore_accelerator

    options = options or SolveOptions()
    accelerator = load_multicore_accelerator(hardware)
    parsed = None if mapping is None else load_stream_mapping(mapping, accelerator)
    mode = "fused" if parsed is not None and parsed.fused_groups else "lbl"
    output = Path(output_path) if options.artifacts else None
    run = optimize_co(
        accelerator,
        str(workload),
        parsed,
        mode,
        time_limit=options.time_limit_s,
        output=output,
    )
    return MappingEstimate(mapping, (float(run.schedule.latency),), 0.0, run)


def select_mapping(
    hardware: str,
    workload: Any,
    output_path: str,
    candidates: Sequence[str],
    options: SolveOptions | None = None,
) -> MappingEstimate:
    """The candidate estimated to take the fewest cycles, each solved under
    ``output_path/candidate_<index>``; one that cannot be mapped loses (logged)."""
    estimates, failures = [], []
    for index, candidate in enumerate(candidates):
        try:
            estimate = evaluate_mapping(
                hardware, workload, f"{output_path}/candidate_{index}", candidate, options
            )
        except InputError as error:
            logger.info("mapping %s cannot be allocated: %s", candidate, error)
            failures.append(f"{candidate}: {error}")
            continue
        estimates.append(estimate)
    if not estimates:
        raise RuntimeError(f"No candidate mapping could be allocated: {failures}")
    return min(estimates, key=lambda estimate: estimate.cycles)
