"""The roofline files of a run: ``roofline.csv`` (one row per layer) and ``roofline.png``."""

from __future__ import annotations

from pathlib import Path

from zigzag.io.tables import write_csv
from zigzag.tokens.roofline import roofline_rows


def write_roofline(result, folder: Path, *, plot_format: str | None = "png") -> dict[str, Path]:
    """Write the per-layer roofline table (and figure unless ``plot_format`` is None) into ``folder``."""
    rows = roofline_rows(result)
    paths = {"table": Path(folder) / "roofline.csv"}
    write_csv(paths["table"], [row.record() for row in rows])
    if plot_format is not None:
        from zigzag.plots.tokens import plot_roofline

        paths["figure"] = plot_roofline(rows, Path(folder) / f"roofline.{plot_format}")
    return paths
