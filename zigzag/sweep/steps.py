"""The workflow's hardware-sweep steps (``zigzag step sweep-batch``, ``sweep-collect``,
``sweep-search``) and the line that says why no row of a sweep is ``ok``."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from zigzag.errors import InputError
from zigzag.sweep.tables import check_constraints


def cmd_sweep_batch(args: argparse.Namespace) -> int:
    from zigzag.notes import run_logged
    from zigzag.sweep.workflow import evaluate_point_file

    def action():
        rows = evaluate_point_file(args.point, args.cache, args.output)
        return "; ".join(
            f"{r['variant']} on {r['workload']}: {r['status']} {r['reason']}".strip() for r in rows
        )

    return run_logged(args.log, action)


def cmd_sweep_collect(args: argparse.Namespace) -> int:
    from zigzag.notes import run_logged
    from zigzag.sweep.workflow import collect_points, sweep_from_settings

    def action():
        rows = collect_points(
            args.settings,
            args.points,
            args.output,
            plot_format=args.format,
            float_format=args.float_format,
            workers=args.workers,
        )
        sweep = sweep_from_settings(json.loads(Path(args.settings).read_text()))
        _fail_if_nothing_ok(rows, sweep.constraints, sweep.name)
        counts = {}
        for row in rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        return f"{len(rows)} rows ({', '.join(f'{n} {s}' for s, n in counts.items())}) written to {args.output}"

    return run_logged(args.log, action)


def cmd_sweep_search(args: argparse.Namespace) -> int:
    from zigzag.notes import run_logged
    from zigzag.sweep.config import read_sweep
    from zigzag.sweep.workflow import search_from_file

    def action():
        result = search_from_file(
            args.search_file,
            args.cache,
            args.output,
            plot_format=args.format,
            float_format=args.float_format,
        )
        data = json.loads(Path(args.search_file).read_text())
        sweep = read_sweep(data["section"], data["source"], defaults=data["defaults"])
        _fail_if_nothing_ok(result.rows, sweep.constraints, sweep.name)
        return (
            f"{result.evaluations} of {result.grid_size} variants evaluated in {result.generations} generations; "
            f"front of {len(result.front)} written to {args.output}"
        )

    return run_logged(args.log, action)


def _fail_if_nothing_ok(rows: list[dict], constraints, name: str) -> None:
    """A workflow sweep step fails (one line, in its log) when no row of the sweep is ``ok``."""

    line = nothing_ok_line(rows, constraints)
    if line is not None:
        raise InputError(f"hardware sweep {name}", None, line)


def register_steps(command) -> None:
    """The workflow's hardware-sweep steps (``zigzag step sweep-batch``, ``sweep-collect`` and ``sweep-search``)."""
    sub = command(
        "sweep-batch",
        cmd_sweep_batch,
        "evaluate a batch of variants of a hardware sweep on its workloads",
    )
    sub.add_argument("point", help="the batch file (written by the Snakefile)")
    sub.add_argument("--cache", required=True, help="content-addressed per-layer cache folder")
    sub.add_argument("--output", required=True, help="the batch's rows (JSON) to write")
    sub = command("sweep-collect", cmd_sweep_collect, "tables and figures of a hardware sweep")
    sub.add_argument("points", nargs="*", help="the variants' rows (JSON, from sweep-batch)")
    sub.add_argument(
        "--settings", required=True, help="the sweep's settings file (written by the Snakefile)"
    )
    sub.add_argument("--output", required=True, help="the sweep's results folder")
    sub.add_argument("--format", default="png", help="figure format")
    sub.add_argument("--float-format", default="%.10g", help="format of floats in the tables")
    sub.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes reading the batches and drawing the figures (the job's threads)",
    )
    sub = command(
        "sweep-search",
        cmd_sweep_search,
        "guided search over a hardware sweep, its tables and figures",
    )
    sub.add_argument("search_file", help="the sweep's search file (written by the Snakefile)")
    sub.add_argument("--cache", required=True, help="content-addressed per-layer cache folder")
    sub.add_argument("--output", required=True, help="the sweep's results folder")
    sub.add_argument("--format", default="png", help="figure format")
    sub.add_argument("--float-format", default="%.10g", help="format of floats in the tables")


def nothing_ok_line(rows: list[dict], constraints) -> str | None:
    """One line on why no row of a sweep is ``ok`` (None when some row is): the count of each
    status and, when rows are ``out``, the constraint that excludes the most of them."""
    counts = Counter(row["status"] for row in rows)
    if counts.get("ok"):
        return None
    if not rows:
        return "the sweep has no rows"
    statuses = ", ".join(f"{n} {status}" for status, n in counts.items())
    line = f"no variant is ok ({statuses} of {len(rows)} rows)"
    out = [{**row, "status": "ok"} for row in rows if row["status"] == "out"]
    excluded = Counter(
        {
            c.text: sum(check_constraints(row, (c,))["status"] == "out" for row in out)
            for c in constraints
        }
    )
    if out and excluded:
        text, n = excluded.most_common(1)[0]
        return f"{line}; constraint '{text}' excludes the most: {n} of the {len(out)} out rows; relax it"
    first = next((row for row in rows if row.get("reason")), None)
    return (
        line
        if first is None
        else f"{line}; e.g. {first['variant']} on {first['workload']}: {first['reason']}"
    )
