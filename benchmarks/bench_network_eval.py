#!/usr/bin/env python3
"""Cost of one whole-network evaluation on a fresh accelerator, as a hardware sweep pays it.

Usage:  python benchmarks/bench_network_eval.py [--arrays 16 32 64] [--buffers 1 3] [--lpf-limit 6]
        python benchmarks/bench_network_eval.py --arrays 32 --buffers 1 3 --bandwidths 128 256 512 1024 --share

Variants of ``inputs/hardware/flow_tpu_32x32.yaml`` (array edge × unified-buffer size in MiB, the
mapping's unrolling following the array edge) are written as YAML files into a temporary folder;
every variant is evaluated on each network (ResNet-18 and MobileNetV2 by default) in this
process, with nothing reused across variants: inputs are loaded from the files (``load_inputs``,
as ``zigzag.api.run`` does) and every distinct layer is searched anew (``evaluate_network``).

Printed per variant × network: CPU seconds to load the inputs and to search, layer searches and
evaluated temporal mappings; then the mean seconds per network evaluation, layer searches per
second, the load of the ONNX file alone (what a sweep reads once per network, not per variant),
and the projected time of 1,000 variants × 2 networks on 2 cores (mean CPU seconds × 2,000 / 2;
and, for comparison, from the wall time measured at the machine's present load).
``--bandwidths`` adds an axis (the unified buffer's port bandwidths). ``--share`` evaluates the
variants as a hardware sweep's batch job does (``zigzag.sweep.point``): inputs made as it makes
them (the accelerator validated from the variant's document, no YAML file; the mapping validated
against it; each network read once per mapping), and searched through one cache of candidates kept
across them (``zigzag.mapping_search.batched.shared``, ``.structural``: variants differing in
memory sizes and bandwidths take each other's allocations); then it evaluates a seeded sample of
them (``--check``, ``--seed``) again through the unshared path, loaded from the YAML files, and
says whether every layer's result is identical.
The imports, with numba's loading of the compiled kernels, are timed apart (printed as
``imports``): a sweep's job server pays them once, before it forks its batch jobs, so they are
not part of a network evaluation's cost.
The last lines say whether issue 43's target (1,000 variants in 60 s on 2 cores) is met.
CPU time (``time.process_time``) is the measure, since the machine is shared; wall time and the
machine load (``os.getloadavg``) are printed beside it.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import logging
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BASE_HARDWARE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
BASE_MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
MIB_BITS = 8 * 2**20
#: issue 43's target: 1,000 variants x (ResNet-18 + MobileNetV2) in at most this many seconds on 2 cores
TARGET_SECONDS = 60


def variant_documents(
    edge: int, buffer_mib: float, bandwidth: int | None = None
) -> tuple[dict, list]:
    """The accelerator and mapping documents of one variant: an ``edge`` × ``edge`` array and a
    unified buffer of ``buffer_mib`` MiB (and ``bandwidth`` bits per cycle on its ports, when
    given); the mapping unrolls ``edge`` wherever the base unrolls 32."""
    hardware = yaml.safe_load(BASE_HARDWARE.read_text())
    hardware["name"] = f"tpu_{edge}x{edge}_ub{buffer_mib:g}m" + (
        f"_bw{bandwidth}" if bandwidth else ""
    )
    hardware["operational_array"]["sizes"] = [edge, edge]
    hardware["memories"]["unified_buffer"]["size"] = int(buffer_mib * MIB_BITS)
    if bandwidth:
        for port in hardware["memories"]["unified_buffer"]["ports"]:
            port["bandwidth_max"] = bandwidth
    mapping = copy.deepcopy(yaml.safe_load(BASE_MAPPING.read_text()))
    for entry in mapping:
        for dimension, unrollings in entry["spatial_mapping"].items():
            entry["spatial_mapping"][dimension] = [
                u.replace(", 32", f", {edge}") for u in unrollings
            ]
    return hardware, mapping


def write_variants(
    folder: Path, arrays: list[int], buffers: list[float], bandwidths=(None,)
) -> list[tuple[str, Path, Path]]:
    """Write every variant's two files into ``folder``; returns (name, accelerator, mapping)."""
    variants = []
    for edge, buffer_mib, bandwidth in itertools.product(arrays, buffers, bandwidths):
        hardware, mapping = variant_documents(edge, buffer_mib, bandwidth)
        hardware_file = folder / f"{hardware['name']}.yaml"
        mapping_file = folder / f"{hardware['name']}_mapping.yaml"
        hardware_file.write_text(yaml.safe_dump(hardware, sort_keys=False))
        mapping_file.write_text(yaml.safe_dump(mapping, sort_keys=False))
        variants.append((hardware["name"], hardware_file, mapping_file))
    return variants


def batch_inputs():
    """``load(workload file, accelerator document, mapping document)``: the inputs as a sweep's
    batch job makes them (``zigzag.sweep.point``): the accelerator validated from its document,
    the mapping validated against it, the workload read once per (file, mapping)."""
    from zigzag.io.accelerator_dict import accelerator_from_dict
    from zigzag.io.loaders import checked_accelerator, checked_mapping, load_workload
    from zigzag.mapping.entry import MappingEntry

    parsed = {}

    def load(workload_file, hardware: dict, mapping: list):
        data = checked_accelerator(hardware, hardware["name"])
        entries = checked_mapping(mapping, data, "mapping")
        key = (workload_file, json.dumps(entries, sort_keys=True))
        if key not in parsed:
            parsed[key] = load_workload(workload_file, [MappingEntry.from_dict(e) for e in entries])
        return parsed[key], accelerator_from_dict(data)

    return load


def figures(result) -> list[str]:
    """Every layer's result and the total of a network evaluation, as text (floats exactly)."""
    return [repr(r) for _, r in result.layers] + [repr(result.total)]


def shared_search(options, network, documents=()):
    """A layer search through one cache of candidates kept across the variants, as a sweep's batch
    job does (``zigzag.sweep.point``): variants of one structure take each other's allocations, and
    the cache is told the variants' ``documents`` (bandwidth siblings' latencies in one pass)."""
    from zigzag.mapping_search.batched.shared import SharedCandidates
    from zigzag.mapping_search.job_keys import JobKeys

    tables, job_keys = SharedCandidates(), JobKeys()
    tables.expect(documents)

    def search(layer, accelerator):
        keys = job_keys.keys(layer, accelerator, options)[1:]
        return network.search_layer(
            layer, accelerator, options, show_progress=False, shared=(tables, *keys)
        )[0]

    return search


def timed(function, *args, **kwargs):
    """``function(*args, **kwargs)``, its CPU seconds and its wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--arrays", type=int, nargs="+", default=[16, 32, 64], help="array edges")
    parser.add_argument(
        "--buffers", type=float, nargs="+", default=[1, 3], help="unified buffer sizes, MiB"
    )
    parser.add_argument(
        "--bandwidths",
        type=int,
        nargs="+",
        default=[None],
        help="unified-buffer port bandwidths, bits per cycle (default: the base file's)",
    )
    parser.add_argument("--networks", nargs="+", default=["resnet18", "mobilenetv2"])
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument(
        "--share",
        action="store_true",
        help="share candidates across the variants as a sweep's batch job does "
        "(zigzag.mapping_search.batched.shared and .structural), and check a seeded sample of them "
        "against the unshared path",
    )
    parser.add_argument("--check", type=int, default=2, help="variants checked with --share")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)

    load_before = os.getloadavg()
    import_cpu = time.process_time()
    import zigzag.mapping_search.batched.kernels  # noqa: F401 - compiled code loaded once per process,
    import zigzag.mapping_search.batched.movement_kernels  # noqa: F401 - as a sweep's job server does
    import zigzag.mapping_search.network as network
    from zigzag.io.loaders import load_inputs
    from zigzag.io.onnx_import import read_onnx
    from zigzag.mapping_search.options import SearchOptions

    import_cpu = time.process_time() - import_cpu
    counts = {"searches": 0, "evaluations": 0}
    search_layer = network.search_layer

    def counting_search_layer(*call_args, **call_kwargs):
        result, stats = search_layer(*call_args, **call_kwargs)
        counts["searches"] += 1
        counts["evaluations"] += stats.evaluations
        return result, stats

    network.search_layer = counting_search_layer
    options = SearchOptions(lpf_limit=args.lpf_limit)
    given = {}  # variant name -> its (accelerator, mapping) documents, for --share
    if args.share:
        load_batch = batch_inputs()
        for edge, buffer_mib, bandwidth in itertools.product(
            args.arrays, args.buffers, args.bandwidths
        ):
            hardware, mapping = variant_documents(edge, buffer_mib, bandwidth)
            given[hardware["name"]] = hardware, mapping
    documents = [hardware for hardware, _ in given.values()]
    search = shared_search(options, network, documents) if args.share else None
    kept = {}  # (variant, network) -> the result's figures, for the check of --share
    workloads = {name: REPO / "inputs" / "workload" / f"{name}.onnx" for name in args.networks}
    print(
        f"lpf_limit {args.lpf_limit}; imports {import_cpu:.2f} CPU s; load before {load_before[0]:.2f}"
    )
    print(
        f"{'variant':<18} {'network':<12} {'load s':>7} {'search s':>8} {'wall s':>7} {'searches':>8} "
        f"{'evaluations':>11} {'energy pJ':>12} {'latency cc':>12}"
    )
    totals = {"load": 0.0, "search": 0.0, "wall": 0.0, "runs": 0, "searches": 0, "evaluations": 0}
    with tempfile.TemporaryDirectory(prefix="zz_bench_eval_") as tmp:
        for name, hardware_file, mapping_file in write_variants(
            Path(tmp), args.arrays, args.buffers, args.bandwidths
        ):
            for workload_name, workload_file in workloads.items():
                before = dict(counts)
                (workload, accelerator), load_cpu, load_wall = (
                    timed(load_batch, workload_file, *given[name])
                    if args.share
                    else timed(load_inputs, workload_file, hardware_file, mapping_file)
                )
                result, search_cpu, search_wall = timed(
                    network.evaluate_network,
                    workload,
                    accelerator,
                    options,
                    show_progress=False,
                    search=search,
                )
                kept[name, workload_name] = figures(result)
                searches = counts["searches"] - before["searches"]
                evaluations = counts["evaluations"] - before["evaluations"]
                print(
                    f"{name:<18} {workload_name:<12} {load_cpu:>7.3f} {search_cpu:>8.3f} "
                    f"{load_wall + search_wall:>7.3f} {searches:>8} {evaluations:>11} "
                    f"{result.energy:>12.5g} {result.latency:>12.5g}"
                )
                totals["load"] += load_cpu
                totals["search"] += search_cpu
                totals["wall"] += load_wall + search_wall
                totals["runs"] += 1
                totals["searches"] += searches
                totals["evaluations"] += evaluations
        checked = None
        if args.share:  # a seeded sample evaluated again through the unshared path
            sample = random.Random(args.seed).sample(sorted(kept), min(args.check, len(kept)))
            files = {
                name: (h, m)
                for name, h, m in write_variants(
                    Path(tmp), args.arrays, args.buffers, args.bandwidths
                )
            }
            checked = all(
                figures(
                    network.evaluate_network(
                        *load_inputs(workloads[w], *files[name]), options, show_progress=False
                    )
                )
                == kept[name, w]
                for name, w in sample
            )
    onnx_cpu = sum(timed(read_onnx, path, file=str(path))[1] for path in workloads.values()) / len(
        workloads
    )
    runs = totals["runs"]
    per_evaluation = (totals["load"] + totals["search"]) / runs
    print(
        f"\nper network evaluation: {per_evaluation:.3f} CPU s (load "
        f"{'as a batch job ' if args.share else ''}{totals['load'] / runs:.3f}, "
        f"search {totals['search'] / runs:.3f}; ONNX read alone {onnx_cpu:.3f}); wall {totals['wall'] / runs:.3f} s"
    )
    print(
        f"layer searches per CPU second: {totals['searches'] / totals['search']:.1f}; "
        f"evaluated mappings per CPU second: {totals['evaluations'] / totals['search']:.0f}"
    )
    print(
        f"projected 1,000 variants x 2 networks on 2 cores: {per_evaluation * 2000 / 2:.0f} s "
        f"({per_evaluation * 2000 / 2 / 60:.1f} min; search only {totals['search'] / runs * 1000:.0f} s; "
        f"from the wall time at this machine load: {totals['wall'] / runs * 1000 / 60:.1f} min)"
    )
    projected = per_evaluation * 2000 / 2
    print(
        f"target: 1,000 variants x 2 networks in <= {TARGET_SECONDS} CPU s on 2 cores: "
        f"{'met' if projected <= TARGET_SECONDS else 'not met'} ({projected:.0f} s"
        + (", candidates shared across the variants" if args.share else ", nothing shared")
        + ")"
    )
    if checked is not None:
        print(
            f"{min(args.check, runs)} (variant, network) pairs (seed {args.seed}) evaluated again "
            f"unshared: {'identical' if checked else 'DIFFERENT'} (every layer's result)"
        )
    print(
        f"machine load (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        "after {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )


if __name__ == "__main__":
    sys.exit(main())
