"""Command line: ``zigzag run``, ``zigzag sweep``, ``zigzag export-workload`` and the workflow's steps.

Bad input ends the program with a single ``error: <file>: <where>: <what to fix>`` line and
exit status 2 (never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zigzag.command_options import (
    ArgumentParser,
    at_least,
    WORKLOAD_OPTIONS,
    add_option,
    add_quiet,
    add_search_options,
    options_from_args,
    run_command,
)
from zigzag.errors import InputError
from zigzag.mapping_search.options import OPTION_BY_NAME, resolve_options


def cmd_run(args: argparse.Namespace) -> int:
    from zigzag.api import run
    from zigzag.io.destinations import check_output_folder, save_or_keep
    import pandas as pd

    from zigzag.io.run_files import save_network_outputs
    from zigzag.io.tables import layer_rows
    from zigzag.notes import collected_warnings

    check_output_folder(args.output)  # before the search, which a bad destination would waste
    options, workload_options = options_from_args(args)
    overrides = {
        k: getattr(args, k)
        for k in ("phase", "batch", "tokens", "context")
        if getattr(args, k) is not None
    }
    workload = args.workload
    if overrides:
        from zigzag.tokens.workloads import is_llm_workload, llm_document

        if is_llm_workload(
            workload
        ):  # a generated workload is generated again for the step asked for
            workload = llm_document(workload, overrides, source="zigzag run")
    with collected_warnings() as notes:
        result = run(
            workload,
            args.accelerator,
            args.mapping,
            options,
            **workload_options,
            show_progress=False if args.quiet else None,
        )
    figures = _token_figures(result, overrides, args)
    extra = {} if figures is None else {"per_token": figures.to_dict()}
    save_or_keep(
        lambda folder: save_network_outputs(result, folder, notes=notes, extra=extra), args.output
    )
    total = result.total
    split = total.vector_unit_energy or total.vector_unit_latency or result.uncosted
    columns = ["name", "energy_pJ", "latency_cycles", "mac_utilization", "spatial_mapping"]
    table = pd.DataFrame.from_records(layer_rows(result.layers))
    table = table[columns + (["compute_unit"] if split else [])]
    print(
        table.to_string(
            index=False,
            formatters={
                "energy_pJ": "{:.4g}".format,
                "latency_cycles": "{:.0f}".format,
                "mac_utilization": "{:.1%}".format,
            },
        )
    )
    print(f"\ntotal energy: {result.energy:.10g} pJ\ntotal latency: {result.latency:.10g} cycles")
    if split:  # only with vector layers: the output of MAC-only runs stays as it was
        print(
            f"MAC array: {total.mac_array_energy:.10g} pJ, {total.mac_array_latency:.10g} cycles; "
            f"vector unit: {total.vector_unit_energy:.10g} pJ, {total.vector_unit_latency:.10g} cycles"
        )
    if result.uncosted:
        print(f"uncosted (no vector unit for their class): {', '.join(result.uncosted)}")
    if total.tclk is not None:
        print(
            f"clock period (tclk): {total.tclk:.10g} ns\ntotal latency: {total.latency_ns:.10g} ns"
        )
    if total.area_total is not None:
        unit = (
            "mm2"
            if total.tclk is not None
            else area_unit_text(next(iter(result.accelerators.values()), None))
        )
        print(f"area: {total.area_total:.10g} {unit}")
    if figures is not None:
        from zigzag.tokens.figures import summary_lines
        from zigzag.tokens.outputs import write_roofline
        from zigzag.tokens.roofline import binding_line, roofline_rows

        write_roofline(result, Path(args.output), plot_format=None if args.quiet_plots else "png")
        print("\n".join(summary_lines(figures)))
        print("  " + binding_line(roofline_rows(result)))
    print(f"outputs written to {args.output}")
    return 0


def _token_figures(result, overrides: dict, args):
    """The per-token figures of an LLM step (None for a workload without inference metadata)."""
    from zigzag.tokens import per_token_figures, read_inference

    if read_inference(getattr(result, "inference", None), overrides, source="zigzag run") is None:
        if args.clock_ghz is not None:
            raise InputError(
                "zigzag run",
                "--clock-ghz",
                "is used by the per-token figures of an LLM step; give "
                "--phase (and --batch, --tokens, --context) too",
            )
        return None
    return per_token_figures(result, overrides, clock_ghz=args.clock_ghz, source="zigzag run")


def area_unit_text(accelerator) -> str:
    """The unit of a digital accelerator's area: the one its file states (``area_unit``), else said to be
    the file's own (and mm2 for memories costed by CACTI)."""
    if accelerator is not None and accelerator.area_unit is not None:
        return accelerator.area_unit
    if accelerator is not None and any(m.cost_source == "cacti" for m in accelerator.memories):
        return "(CACTI memories in mm2, the rest in the accelerator file's unit; state it with area_unit)"
    return "(in the accelerator file's area unit; state it with area_unit: mm2 or um2)"


def cmd_export_workload(args: argparse.Namespace) -> int:
    from zigzag.io.atomic import write_text_atomic
    from zigzag.io.loaders import load_workload
    from zigzag.io.workload_export import workload_to_yaml

    _, workload_options = resolve_options(
        {name: getattr(args, name) for name in WORKLOAD_OPTIONS if getattr(args, name) is not None}
    )
    workload = load_workload(args.workload, args.mapping, **workload_options)
    text = workload_to_yaml(workload)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # as `zigzag run --output` does
        write_text_atomic(Path(args.output), text)
        print(f"{len(workload.layers)} layers written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="zigzag",
        description="Analytical cost model and mapping search for DNN accelerators (ZigZag-compatible).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="find the best mapping of every layer of a workload and report its cost",
        description="Search the best spatial and temporal mapping of every layer of WORKLOAD on "
        "ACCELERATOR and print per-layer energy/latency and the network totals (with "
        "vector layers: each layer's unit, the totals of the MAC array and of the "
        "vector unit, and the layers left uncosted).",
    )
    run.add_argument(
        "--workload",
        required=True,
        help="workload: ZigZag workload YAML, ONNX model, or LLM workload (a file ending in .llm.yaml)",
    )
    run.add_argument(
        "--accelerator", required=True, help="accelerator description YAML (ZigZag format)"
    )
    run.add_argument(
        "--mapping", required=True, help="mapping YAML (ZigZag format; needs a 'default' entry)"
    )
    run.add_argument(
        "--output", default="outputs", help="folder for the result files (default %(default)s)"
    )
    add_quiet(run)
    llm = run.add_argument_group("LLM steps (per-token figures; see docs/models/per-token.md)")
    llm.add_argument(
        "--phase",
        choices=("prefill", "decode"),
        help="the step the workload is (default: from the workload, e.g. past K/V inputs = decode)",
    )
    llm.add_argument("--batch", type=at_least(1), help="sequences per step (B)")
    llm.add_argument(
        "--tokens", type=at_least(1), help="tokens per sequence in the step (prefill: S; decode: 1)"
    )
    llm.add_argument(
        "--context", type=at_least(0), help="decode: tokens already in the KV cache (C)"
    )
    llm.add_argument(
        "--clock-ghz", type=float, help="clock frequency, for the per-token figures in seconds"
    )
    llm.add_argument(
        "--quiet-plots", action="store_true", help="no roofline figure (roofline.csv only)"
    )
    add_search_options(run)
    run.add_argument(
        "--seed",
        dest="salsa_seed",
        type=int,
        default=None,
        help="random seed of the search (the SALSA temporal search; same as --salsa-seed)",
    )
    run.set_defaults(func=cmd_run)

    export = sub.add_parser(
        "export-workload",
        help="write any workload (ONNX or YAML) as a ZigZag workload YAML",
        description="Parse WORKLOAD (ONNX or YAML) and write its layers in the workload-YAML "
        "format, so they can be inspected and edited.",
    )
    export.add_argument("workload", help="ONNX model or workload YAML")
    export.add_argument(
        "--mapping", required=True, help="mapping YAML (decides each layer's mapping entry)"
    )
    export.add_argument("--output", default="-", help="output YAML file (default: standard output)")
    add_quiet(export)
    for name in WORKLOAD_OPTIONS:
        add_option(export, OPTION_BY_NAME[name])
    export.set_defaults(func=cmd_export_workload)

    from zigzag.report.cli import add_report_command
    from zigzag.steps.cli import add_step_commands
    from zigzag.steps.prune import add_cache_command
    from zigzag.multicore.cli.parser import add_multicore_commands
    from zigzag.sweep.cli import add_sweep_command

    add_sweep_command(sub)
    add_report_command(sub)
    add_step_commands(sub)
    add_multicore_commands(sub)
    add_cache_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
