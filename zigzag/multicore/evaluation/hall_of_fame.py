"""The pictures Stream's seed stages draw of a finished allocation search (``plot_hof``,
``plot_file_name``, ``plot_full_schedule``, ``plot_data_transfer``; docs/compat/stream-users.md#plot-options).

Stream draws, for every member ``i`` of the genetic algorithm's hall of fame (the Pareto front),
its schedule to ``outputs/schedule_plot<plot_file_name><i>.png`` and its memory usage to
``outputs/memory_usage_plot<plot_file_name><i>.png`` (``fixed`` instead of ``i`` when no layer
is left to allocate). We draw the same files, one per distinct front point in order of latency,
and the front itself to ``outputs/pareto<plot_file_name>.png``. A ``plot_file_name`` that is a
picture path (``.png``, ``.pdf``, ``.svg``) names the front figure itself; the per-point figures
go to its folder, tagged with its stem.
"""

from __future__ import annotations

import logging
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.allocation import AllocationSearch
from zigzag.multicore.allocation.front import distinct_points
from zigzag.multicore.evaluation import FULL_SCHEDULE, StreamCostModelEvaluation
from zigzag.multicore.plots.charts import pareto_front_png
from zigzag.multicore.plots.selection import parent_made

logger = logging.getLogger(__name__)

PICTURE_SUFFIXES = (".png", ".pdf", ".svg")


def hall_of_fame_paths(plot_file_name: str | None) -> tuple[Path, str, Path]:
    """``(folder, tag)`` of the per-point figures and the front figure's path (see the module)."""
    if plot_file_name is None:
        return Path("outputs"), "", Path("outputs") / "pareto.png"
    if not isinstance(plot_file_name, str):
        raise InputError(
            None,
            "plot_file_name",
            f"expected text (e.g. '-resnet18-'), got {type(plot_file_name).__name__}",
        )
    path = Path(plot_file_name)
    if path.suffix.lower() in PICTURE_SUFFIXES:
        return path.parent, path.stem, path
    return Path("outputs"), plot_file_name, Path("outputs") / f"pareto{plot_file_name}.png"


def plot_hall_of_fame(
    search: AllocationSearch,
    plot_file_name: str | None = None,
    plot_full_schedule: bool = False,
    plot_data_transfer: bool = False,
) -> list[Path]:
    """Draw the front and, per distinct front point, its schedule and memory usage; return the files."""
    folder, tag, front_path = hall_of_fame_paths(plot_file_name)
    points = sorted(
        (point for point, _ in distinct_points(search.front)),
        key=lambda p: (p.latency, p.energy),
    )
    sections = FULL_SCHEDULE if plot_full_schedule else ((0, 50, 95), (5, 5, 5))
    written = []
    for i, point in enumerate(points):
        index = "fixed" if not search.genes else str(i)
        scme = StreamCostModelEvaluation.of(search.search_schedule(point))
        schedule_path = folder / f"schedule_plot{tag}{index}.png"
        scme.plot_schedule(
            plot_data_transfer=plot_data_transfer,
            section_start_percent=sections[0],
            percent_shown=sections[1],
            fig_path=str(schedule_path),
        )
        memory_path = folder / f"memory_usage_plot{tag}{index}.png"
        scme.plot_memory_usage(fig_path=str(memory_path))
        written += [schedule_path, memory_path]
    chosen = min(points, key=lambda p: (p.latency, p.energy))
    pareto_front_png(
        [{"energy": p.energy, "latency": p.latency} for p in points],
        parent_made(front_path),
        (chosen.energy, chosen.latency),
        title="Allocation search: hall of fame (Pareto front)",
    )
    written.append(front_path)
    logger.info("Drew the hall of fame (%d points) to %s", len(points), folder)
    return written
