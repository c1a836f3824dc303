"""``zigzag report DIR``: the interactive HTML report of a results folder (and ``zigzag step report``,
the workflow's last rule)."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_report(args: argparse.Namespace) -> int:
    from zigzag.io.destinations import check_output_folder
    from zigzag.report import write_reports

    if Path(args.folder).is_dir():  # a missing folder or a file: write_reports says what to do
        check_output_folder(args.folder, "DIR")
    pages = write_reports(args.folder)
    if not args.quiet:
        for page in pages:
            print(f"wrote {page}")
    return 0


def add_report_command(sub) -> None:
    """The ``zigzag report`` sub-command."""
    report = sub.add_parser(
        "report",
        help="write the interactive HTML report of a results folder (report.html)",
        description="Write DIR/report.html (and one per results folder below it: stream/ and each folder in hardware_sweeps/) "
        "for the workflow's results, a hardware sweep or guided search, or multi-core runs: a "
        "sortable table, Pareto view, parallel coordinates, ranking across workloads and a per-design "
        "breakdown. The page works offline; plotly.js is copied beside it once per folder (packed as plotly.gz.js where no Gantt chart needs plotly.min.js).",
    )
    report.add_argument(
        "folder",
        metavar="DIR",
        help="results folder (e.g. results, results/multicore, "
        "results/hardware_sweeps/NAME or a zigzag sweep --output)",
    )
    from zigzag.command_options import add_quiet

    add_quiet(report)
    report.set_defaults(func=cmd_report)


def register_step(command) -> None:
    """``zigzag step report``: the workflow's rule writing every report page of the results folder."""
    from zigzag.notes import run_logged

    def cmd(args: argparse.Namespace) -> int:
        from zigzag.io.atomic import write_text_atomic
        from zigzag.report import write_reports

        def action():
            pages = write_reports(args.folder)
            if args.output:
                write_text_atomic(args.output, "".join(f"{p}\n" for p in pages))
            return f"wrote {', '.join(map(str, pages))}"

        return run_logged(args.log, action)

    sub = command("report", cmd, "write the HTML report page of each results folder")
    sub.add_argument("folder", help="the results folder")
    sub.add_argument("--output", help="file listing the pages written (the rule's output)")
