"""``zigzag multicore plot --run DIR``: the pictures of a run folder."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_plot_command(commands: argparse._SubParsersAction) -> None:
    """Register ``zigzag multicore plot``."""
    from zigzag.command_options import add_quiet

    plot = commands.add_parser(
        "plot",
        help="draw the pictures of a run folder (Gantt HTML/PNG, memory, energy, front, perfetto trace)",
        description="Draw the pictures of the output folder of 'zigzag multicore run' or 'zigzag multicore search': "
        "gantt.html (interactive, works offline), gantt.png, memory.png, energy.png, perfetto.json "
        "(open in ui.perfetto.dev) and, for a search, pareto.png.",
    )
    plot.add_argument(
        "--run", required=True, help="output folder of 'zigzag multicore run' or 'search'"
    )
    plot.add_argument("--output", default=None, help="where the pictures go (default RUN/plots)")
    plot.add_argument(
        "--format", default="png", choices=("png", "svg", "pdf"), help="static picture format"
    )
    plot.add_argument(
        "--name", default=None, help="experiment name shown in titles (default: the workload's)"
    )
    add_quiet(plot)
    plot.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    from zigzag.multicore.plots import plot_run

    written = plot_run(args.run, args.output, args.format, args.name)
    print("written: " + ", ".join(str(p) for p in written))
    return 0


def plot_after_run(output: str | Path) -> None:
    """``zigzag multicore run --plots``: draw the run's pictures into OUTPUT/plots."""
    from zigzag.multicore.plots import plot_run

    written = plot_run(output)
    print(f"pictures: {Path(output) / 'plots'} ({', '.join(p.name for p in written)})")
