"""``zigzag step plot-experiment`` and ``zigzag step plot-comparison``: the report rules' commands.

Hook into the ``step`` sub-command with ``add_report_commands(steps)`` where ``steps`` is the
sub-parsers object of ``zigzag step``. Like the other steps, a bad input ends the command with
one line on standard error (and in ``--log``) and exit status 1.
"""

from __future__ import annotations

import argparse


def cmd_plot_experiment(args: argparse.Namespace) -> int:
    from zigzag.steps.cli import _run_logged
    from zigzag.steps.report import plot_experiment

    def action():
        written = plot_experiment(args.experiment_dir, args.output, args.format, cache=args.cache)
        return f"{args.experiment_dir}: wrote {', '.join(str(p) for p in written.values())}"

    return _run_logged(args.log, action)


def cmd_plot_comparison(args: argparse.Namespace) -> int:
    from zigzag.steps.cli import _run_logged
    from zigzag.steps.report import plot_comparison

    return _run_logged(args.log, lambda: plot_comparison(args.experiments, args.output, args.pareto))


def add_report_commands(steps) -> None:
    """Add the report steps to the sub-parsers of ``zigzag step``."""
    from zigzag.steps.report import PLOT_FORMATS

    experiment = steps.add_parser(
        "plot-experiment",
        help="draw an experiment's energy and latency breakdowns, loop nests and memory hierarchy",
    )
    experiment.add_argument("experiment_dir", help="the experiment's results folder (as written by collect)")
    experiment.add_argument("--output", required=True, help="folder for the figures and loop_nests.txt")
    experiment.add_argument("--format", choices=PLOT_FORMATS, default="png", help="figure format (default png)")
    experiment.add_argument("--cache", help="layer-job cache: the exact accelerator is read from it when possible")
    experiment.set_defaults(func=cmd_plot_experiment)

    comparison = steps.add_parser(
        "plot-comparison", help="energy vs latency of all experiments with their Pareto front"
    )
    comparison.add_argument("experiments", help="experiments.csv (one row per experiment)")
    comparison.add_argument("--output", required=True, help="figure to write (format from its extension)")
    comparison.add_argument("--pareto", help="CSV of the Pareto-optimal experiments "
                                             "(default: pareto.csv beside the experiments table)")
    comparison.set_defaults(func=cmd_plot_comparison)

    for sub in (experiment, comparison):
        sub.add_argument("--log", help="also write the outcome (or the error) to this file")
