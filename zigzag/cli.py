"""Command line: ``zigzag run``, ``zigzag export-workload`` and the workflow's steps.

Bad input ends the program with a single ``error: <file>: <where>: <what to fix>`` line and
exit status 2 (never a traceback).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.search.options import OPTIMISATION_CRITERIA, TEMPORAL_ENGINES, TEMPORAL_MAPPING_TYPES, SearchOptions


def add_search_options(parser: argparse.ArgumentParser) -> None:
    """The search options of ZigZag's API, as command-line flags."""
    defaults = SearchOptions()
    group = parser.add_argument_group("search options (as in get_hardware_performance_zigzag)")
    group.add_argument("--opt", choices=OPTIMISATION_CRITERIA, default=defaults.opt,
                       help="what the best mapping minimises: energy, latency (default) or EDP (energy x delay)")
    group.add_argument("--lpf-limit", type=int, default=defaults.lpf_limit,
                       help="LOMA: at most this many loop prime factors are permuted (default %(default)s); "
                            "higher = more loop orderings searched, slower")
    group.add_argument("--nb-spatial-mappings-generated", type=int, default=defaults.nb_spatial_mappings_generated,
                       help="how many of the best-ranked spatial mappings are searched per layer (default %(default)s)")
    group.add_argument("--temporal-mapping-search-engine", choices=TEMPORAL_ENGINES,
                       default=defaults.temporal_mapping_search_engine,
                       help="loma: exhaustive loop-order search (default); salsa: simulated annealing")
    group.add_argument("--temporal-mapping-type", choices=TEMPORAL_MAPPING_TYPES, default=defaults.temporal_mapping_type,
                       help="uneven (default): operands sharing a memory may cut the loop nest at different "
                            "places; even: they must cut it at the same place")
    group.add_argument("--exploit-data-locality", action="store_true",
                       help="keep activations between layers in the lowest memory that holds them "
                            "instead of going through the top memory")
    group.add_argument("--enable-mix-spatial-mapping", action="store_true",
                       help="also generate spatial mappings unrolling several layer dims on one array dim "
                            "(as in ZigZag, this also turns on --exploit-data-locality)")
    group.add_argument("--in-memory-compute", action="store_true",
                       help="search as get_hardware_performance_zigzag_imc does for in-memory-computing "
                            "accelerators: turns on --enable-mix-spatial-mapping and --exploit-data-locality")
    group.add_argument("--salsa-iteration-number", type=int, default=defaults.salsa_iteration_number,
                       help="SALSA: annealing iterations (default %(default)s)")
    group.add_argument("--salsa-seed", type=int, default=defaults.salsa_seed,
                       help="SALSA: random seed; the same seed gives the same result (default %(default)s)")


def options_from_args(args: argparse.Namespace) -> SearchOptions:
    return SearchOptions(
        opt=args.opt,
        lpf_limit=args.lpf_limit,
        nb_spatial_mappings_generated=args.nb_spatial_mappings_generated,
        temporal_mapping_search_engine=args.temporal_mapping_search_engine,
        temporal_mapping_type=args.temporal_mapping_type,
        enable_mix_spatial_mapping=args.enable_mix_spatial_mapping or args.in_memory_compute,
        exploit_data_locality=args.exploit_data_locality or args.enable_mix_spatial_mapping or args.in_memory_compute,
        salsa_iteration_number=args.salsa_iteration_number,
        salsa_seed=args.salsa_seed,
    )


def cmd_run(args: argparse.Namespace) -> int:
    from zigzag.api import run
    from zigzag.io.results import layer_table, save_network_outputs

    result = run(
        args.workload,
        args.accelerator,
        args.mapping,
        options_from_args(args),
        evaluate_all_operators=args.evaluate_all_operators,
        show_progress=False if args.quiet else None,
    )
    save_network_outputs(result, Path(args.output))
    table = layer_table(result.layers)[
        ["name", "energy_pJ", "latency_cycles", "mac_utilization", "spatial_mapping"]
    ]
    print(table.to_string(index=False, formatters={
        "energy_pJ": "{:.4g}".format, "latency_cycles": "{:.0f}".format, "mac_utilization": "{:.1%}".format,
    }))
    print(f"\ntotal energy: {result.energy:.10g} pJ\ntotal latency: {result.latency:.10g} cycles")
    total = result.total
    if total.tclk is not None:
        print(f"clock period (tclk): {total.tclk:.10g} ns\ntotal latency: {total.latency_ns:.10g} ns")
    if total.area_total is not None:
        print(f"area: {total.area_total:.10g} mm2")
    print(f"outputs written to {args.output}")
    return 0


def cmd_export_workload(args: argparse.Namespace) -> int:
    from zigzag.io.loaders import load_workload
    from zigzag.io.workload_export import workload_to_yaml

    workload = load_workload(args.workload, args.mapping, evaluate_all_operators=args.evaluate_all_operators)
    text = workload_to_yaml(workload)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
        print(f"{len(workload.layers)} layers written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zigzag",
        description="Analytical cost model and mapping search for DNN accelerators (ZigZag-compatible).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="find the best mapping of every layer of a workload and report its cost",
                         description="Search the best spatial and temporal mapping of every layer of WORKLOAD on "
                                     "ACCELERATOR and print per-layer energy/latency and the network totals.")
    run.add_argument("--workload", required=True, help="workload: ZigZag workload YAML or ONNX model")
    run.add_argument("--accelerator", required=True, help="accelerator description YAML (ZigZag format)")
    run.add_argument("--mapping", required=True, help="mapping YAML (ZigZag format; needs a 'default' entry)")
    run.add_argument("--output", default="outputs", help="folder for the result files (default %(default)s)")
    run.add_argument("--evaluate-all-operators", action="store_true",
                     help="ONNX: also evaluate pooling, element-wise and batched MatMul operators as layers "
                          "(ZigZag skips them)")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    add_search_options(run)
    run.set_defaults(func=cmd_run)

    export = sub.add_parser("export-workload", help="write any workload (ONNX or YAML) as a ZigZag workload YAML",
                            description="Parse WORKLOAD (ONNX or YAML) and write its layers in the workload-YAML "
                                        "format, so they can be inspected and edited.")
    export.add_argument("workload", help="ONNX model or workload YAML")
    export.add_argument("--mapping", required=True, help="mapping YAML (decides each layer's mapping entry)")
    export.add_argument("--output", default="-", help="output YAML file (default: standard output)")
    export.add_argument("--evaluate-all-operators", action="store_true",
                        help="also export pooling and element-wise ONNX operators as layers")
    export.set_defaults(func=cmd_export_workload)

    from zigzag.steps.cli import add_step_commands
    from zigzag.stream.cli import add_stream_commands

    add_step_commands(sub)
    add_stream_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (InputError, MappingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
