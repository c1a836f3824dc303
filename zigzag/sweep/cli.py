"""``zigzag sweep``: a hardware sweep from the command line.

    zigzag sweep --base inputs/hardware/flow_tpu_32x32.yaml \\
        --vary 'memories.unified_buffer.size=[1MiB,3MiB]' --workload inputs/workload/resnet18.onnx \\
        --mapping inputs/mapping/flow_tpu_32x32.yaml --output results/ub_sweep

    zigzag sweep --multicore --base inputs/stream/hardware/tpu_like_mesh_pooling.yaml \\
        --vary 'mesh.cols=[1,2,4]' --workload inputs/stream/workload/resnet18.onnx \\
        --mapping inputs/stream/mapping/mesh_all_cores.yaml --mode lbl --output results/mesh_sweep

Flags build the same sweep as a ``hardware_sweeps`` entry of the workflow config (see
docs/reference/sweeps.md); ``--config FILE --name NAME`` runs one entry of such a config instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from zigzag.errors import InputError
from zigzag.sweep.tables import check_constraints


def _assignment(text: str, flag: str) -> tuple[str, str]:
    if "=" not in text:
        raise InputError(flag, text, "write PATH=VALUE, e.g. 'memories.sb.size=[32KiB,64KiB]'")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _list(text: str, flag: str, key: str):
    from zigzag.io.yaml_files import parse_yaml

    try:
        return parse_yaml(text, flag)
    except InputError as err:
        raise InputError(
            flag, key, f"'{text}' is not a list ({err.message}); write e.g. [32KiB,64KiB]"
        ) from None


def sweep_from_args(args: argparse.Namespace) -> dict:
    """The sweep entry (as in the config's ``hardware_sweeps``) the flags describe."""
    if args.config:
        return _config_entry(args.config, args.name)
    if not args.base:
        raise InputError(
            "zigzag sweep", "--base", "missing; give the accelerator file to vary (or --config)"
        )
    section: dict = {
        "name": args.name or "sweep",
        "base": args.base,
        "workloads": args.workload or [],
    }
    section["params"] = dict(_assignment(t, "--param") for t in args.param)
    section["vary"] = {
        k: _list(v, "--vary", k) for k, v in (_assignment(t, "--vary") for t in args.vary)
    }
    section["zip"] = [
        {k: _list(v, "--zip", k) for k, v in (_assignment(p, "--zip") for p in group.split(";"))}
        for group in args.zip
    ]
    section["derive"] = dict(_assignment(t, "--derive") for t in args.derive)
    if args.workload_vary:
        section["workload_vary"] = {
            k: _list(v, "--workload-vary", k)
            for k, v in (_assignment(t, "--workload-vary") for t in args.workload_vary)
        }
    if args.mapping:
        section["mapping"] = args.mapping
    if args.spatial_mapping:
        section["spatial_mapping"] = args.spatial_mapping
    if args.constraint:
        section["constraints"] = list(args.constraint)
    if args.clock_ghz is not None:
        section["clock_ghz"] = args.clock_ghz
    if args.name_format:
        section["name_format"] = args.name_format
    if args.multicore:
        section["kind"] = "multicore"
        section["modes"] = args.mode or ["lbl"]
        if args.layer_stacks is not None:
            section["layer_stacks"] = args.layer_stacks
        seed = args.allocation_seed if args.allocation_seed is not None else args.search_seed
        args.search_seed = None  # the seed of a multi-core sweep is its allocation search's
        budget = {
            "method": args.allocation_method,
            "individuals": args.allocation_individuals,
            "generations": args.allocation_generations,
            "seed": seed,
        }
        if any(v is not None for v in budget.values()):
            section["allocation_search"] = {k: v for k, v in budget.items() if v is not None}
    elif (
        args.mode
        or args.layer_stacks is not None
        or args.allocation_individuals is not None
        or args.allocation_method is not None
        or args.allocation_generations is not None
        or args.allocation_seed is not None
    ):
        raise InputError(
            "zigzag sweep",
            "--mode/--layer-stacks/--allocation-*",
            "are for multi-core sweeps; add --multicore",
        )
    return section


#: the flag of each key of a sweep given by flags
_FLAGS = {
    "constraints": "--constraint",
    "vary": "--vary",
    "derive": "--derive",
    "params": "--param",
    "zip": "--zip",
    "clock_ghz": "--clock-ghz",
    "name_format": "--name-format",
    "base": "--base",
    "workloads": "--workload",
    "mapping": "--mapping",
    "modes": "--mode",
    "layer_stacks": "--layer-stacks",
    "search": "--search",
    "allocation_search": "--allocation-*",
    "name": "--name",
}


def _as_flag(exc: InputError) -> InputError:
    """An error about a sweep given by flags, naming the flag (``--constraint``) instead of the key."""
    key = re.match(r"[A-Za-z_]+", exc.where or "")
    flag = _FLAGS.get(key.group(0)) if key else None
    if flag is None:
        return exc
    rest = re.sub(r"^\[(\d+)\]", lambda m: f"#{int(m.group(1)) + 1}", exc.where[key.end() :])
    return InputError("zigzag sweep", f"{flag} {rest.lstrip('.')}".strip(), exc.message)


def _with_search_flags(section: dict, args: argparse.Namespace) -> dict:
    """The sweep with the ``--search``/``--population``/... flags over its own ``search``."""
    budget = {
        key: getattr(args, f"search_{key}")
        for key in ("method", "population", "generations", "seed", "workers")
        if getattr(args, f"search_{key}") is not None
    }
    if not (args.search or budget):
        return section
    own = section.get("search") if isinstance(section.get("search"), dict) else {}
    return {**section, "search": {**own, **budget}}


def _config_entry(path: str, name: str | None) -> dict:
    from zigzag.io.yaml_files import load_yaml

    config = load_yaml(path)
    sweeps = config.get("hardware_sweeps") if isinstance(config, dict) else None
    if not sweeps:
        raise InputError(path, "hardware_sweeps", "no hardware sweep in this config")
    names = [s.get("name") for s in sweeps if isinstance(s, dict)]
    if name is None and len(sweeps) == 1:
        entry = sweeps[0]
    elif name not in names:
        raise InputError(
            path,
            "hardware_sweeps",
            f"no sweep named {name!r}; give --name with one of {', '.join(map(str, names))}",
        )
    else:
        entry = sweeps[names.index(name)]
    if entry.get("kind") == "multicore":  # the config's defaults are single-core search options
        return entry
    return {**(config.get("defaults") or {}), **entry}


def cmd_sweep(args: argparse.Namespace) -> int:
    from zigzag.command_options import options_from_args
    from zigzag.mapping_search.options import OPTIONS
    from zigzag.sweep.config import read_sweep
    from zigzag.io.destinations import check_output_folder
    from zigzag.sweep.api import run_sweep
    from zigzag.sweep.runner import check_varied_values, variants_of

    section = _with_search_flags(sweep_from_args(args), args)
    options = {o.name: getattr(args, o.name) for o in OPTIONS if getattr(args, o.name) is not None}
    options_from_args(args)  # checks the flags' values
    if section.get("kind") == "multicore" and options:
        raise InputError(
            "zigzag sweep",
            f"--{next(iter(options)).replace('_', '-')}",
            "is a single-core search option, not used by multi-core sweeps; remove it",
        )
    try:
        sweep = read_sweep({**section, **options}, args.config or "zigzag sweep")
    except InputError as exc:
        raise exc if args.config else _as_flag(exc) from None
    check_output_folder(args.output)  # before any variant is evaluated
    if sweep.search is None:
        check_varied_values(sweep, variants_of(sweep), args.config or "zigzag sweep")
    rows = run_sweep(sweep, args.output, cache=args.cache, plot_format=args.plot_format)
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    for row in () if args.quiet else rows:
        figures = (
            f"energy {row['energy_pJ']:.4g} pJ, latency {row['latency_cycles']:.4g} cycles"
            if row.get("energy_pJ") is not None
            else row["reason"]
        )
        if row.get("tpot_s") is not None or row.get("ttft_s") is not None:
            first = row.get("ttft_s")
            figures += (
                f", time to first token {first * 1e3:.4g} ms"
                if first is not None
                else f", time per output token {row['tpot_s'] * 1e3:.4g} ms"
            ) + f", {row['energy_per_token_J']:.4g} J per token"
        if row.get("bound_ratio") is not None:
            figures += f", {row['bound_ratio']:.3f} x the {row['bound_term']} bound"
            if row.get("bound_note"):
                figures += f" ({row['bound_note']})"
        from zigzag.sweep.tables import group_of

        print(f"{row['variant']:<40} {group_of(row):<20} {row['status']:<10} {figures}")
    print(
        f"\n{len(rows)} rows ({', '.join(f'{n} {s}' for s, n in counts.items())}); "
        f"tables and figures written to {args.output}"
    )
    if sweep.search is not None:
        stats = json.loads((Path(args.output) / "search.json").read_text())
        print(
            f"search: {stats['evaluations']} of {stats['grid_size']} variants evaluated in "
            f"{stats['generations']} generations; front of {stats['front_size']} in "
            f"{Path(args.output) / 'search_front.csv'}"
        )
    nothing_ok = nothing_ok_line(rows, sweep.constraints)
    if nothing_ok is not None:
        print(f"error: {sweep.name}: {nothing_ok}", file=sys.stderr)
        return 1
    failed = [f"{r['variant']} on {r['workload']}" for r in rows if r["status"] == "failed"]
    if failed:
        print(f"error: {len(failed)} points failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def add_sweep_command(sub) -> None:
    """The ``zigzag sweep`` sub-command."""
    from zigzag.command_options import add_quiet, add_search_options

    sweep = sub.add_parser(
        "sweep",
        help="evaluate variants of an accelerator (a hardware sweep) on workloads",
        description="Make every variant of BASE given by --vary/--zip/--derive, evaluate each on every "
        "workload and write variants.csv, pareto.csv, best.csv and figures into OUTPUT; with --multicore, BASE "
        "is a multi-core accelerator and each variant is scheduled in every --mode "
        "(see docs/reference/sweeps.md).",
    )
    sweep.add_argument("--base", help="accelerator YAML the variants start from")
    sweep.add_argument(
        "--multicore",
        action="store_true",
        help="BASE is a multi-core accelerator and --mapping a multi-core mapping: schedule each variant",
    )
    sweep.add_argument(
        "--mode",
        action="append",
        choices=("lbl", "fused"),
        help="multi-core: scheduling mode; repeat for both (default lbl)",
    )
    sweep.add_argument(
        "--layer-stacks", help="multi-core, fused mode: stacks of layer ids, e.g. '0-10;11-21'"
    )
    sweep.add_argument(
        "--allocation-method",
        choices=("ga", "co"),
        help="multi-core: allocation by genetic search (ga, default) or constraint optimisation (co)",
    )
    sweep.add_argument(
        "--allocation-individuals",
        type=int,
        help="multi-core: population of the allocation search (when the mapping leaves choices)",
    )
    sweep.add_argument(
        "--allocation-generations",
        type=int,
        help="multi-core: generations of the allocation search",
    )
    sweep.add_argument(
        "--allocation-seed", type=int, help="multi-core: seed of the allocation search"
    )
    sweep.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="PATH=[V1,V2,...]",
        help="a field (path or --param name) and its values; every combination is a variant",
    )
    sweep.add_argument(
        "--zip",
        action="append",
        default=[],
        metavar="P1=[..];P2=[..]",
        help="fields varied in step (lists of the same length), separated by ';'",
    )
    sweep.add_argument(
        "--derive",
        action="append",
        default=[],
        metavar="PATH=EXPR",
        help="a field computed from others, e.g. 'memories.sb.ports[0].bandwidth_max=D1*8'",
    )
    sweep.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a short name for a path, e.g. 'D1=operational_array.sizes[0]'",
    )
    sweep.add_argument(
        "--workload", action="append", help="workload (ONNX or YAML); repeat for several"
    )
    sweep.add_argument(
        "--workload-vary",
        action="append",
        default=[],
        metavar="FIELD=[V1,V2,...]",
        help="an LLM workload field (context, batch, tokens, phase, layers, precision, "
        "precision.weights, ...) and its values; every combination is evaluated on every variant",
    )
    sweep.add_argument(
        "--mapping", help="mapping YAML; unrolling sizes may be expressions such as 'K, D1'"
    )
    sweep.add_argument(
        "--spatial-mapping",
        choices=("given", "generate"),
        help="'generate': ignore the mapping's spatial unrollings and search them per variant",
    )
    sweep.add_argument(
        "--constraint",
        action="append",
        metavar="TEXT",
        help="a limit that marks variants as out, e.g. 'area <= 5 mm2'",
    )
    sweep.add_argument(
        "--clock-ghz", help="clock frequency (a number or an expression over parameters)"
    )
    sweep.add_argument("--name-format", help="variant names, e.g. 'tpu{D1}x{D2}-ub{ub}'")
    sweep.add_argument(
        "--search",
        action="store_true",
        help="guided search over energy, latency, area instead of every variant",
    )
    sweep.add_argument(
        "--search-method",
        dest="search_method",
        choices=("guided", "nsga2"),
        help="search: guided (models of feasibility and objectives, default) or nsga2 (genetic)",
    )
    sweep.add_argument(
        "--population", dest="search_population", type=int, help="search: population (default 16)"
    )
    sweep.add_argument(
        "--generations", dest="search_generations", type=int, help="search: generations (default 8)"
    )
    sweep.add_argument(
        "--seed",
        "--search-seed",
        dest="search_seed",
        type=int,
        help="random seed: of the guided search (default 0; --search-seed is the same), with "
        "--multicore of the allocation search (as --allocation-seed)",
    )
    sweep.add_argument(
        "--workers", dest="search_workers", type=int, help="search: worker processes (default 2)"
    )
    sweep.add_argument(
        "--config", help="a workflow config: run its hardware sweep --name instead of the flags"
    )
    sweep.add_argument("--name", help="the sweep's name (with --config: which sweep to run)")
    sweep.add_argument(
        "--output", default="results/sweep", help="output folder (default %(default)s)"
    )
    sweep.add_argument(
        "--cache",
        help="per-layer result cache (default OUTPUT/.cache; share the workflow's "
        "results/.cache to reuse its results)",
    )
    sweep.add_argument("--plot-format", default="png", help="figure format (default %(default)s)")
    add_quiet(sweep)
    add_search_options(sweep)
    sweep.set_defaults(func=cmd_sweep)


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
