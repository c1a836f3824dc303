"""Time Stream's cost table: every (CN shape, core) entry from scratch, then from the cache.

    python benchmarks/bench_cost_table.py [--case fused-like|lbl|small_lbl|small_fused]
    python benchmarks/bench_cost_table.py --case fused \\
        --reference-venv /work/ref/stream-venv --reference-source /work/ref/stream

Which entries: the CN graph is not built here, so the (CN, core) pairs come from the reference:

* ``lbl``, ``small_lbl``, ``small_fused``: the cost-table entries of the reference dumps
  (``tests/data/reference/stream/<case>.json``: each entry's CN loop sizes, in-edge bits, core);
* ``fused-like`` (no reference needed): the ``lbl`` entries with the layers of the fused case's
  stacks (0-10, 11-21) cut the way fused mode cuts them (conv/pool into rows, Relu into columns,
  Add into rows; docs/models/multi-core.md#computation-nodes): the shapes of the fused table, not its real CN graph;
* with ``--reference-venv``: the reference Stream is run up to its cost table on the case
  (``fused`` = ResNet-18 on the quad core, stacks 0-10 and 11-21), its time is printed, its
  entries are the ones we compute, and every figure is compared.

Layer facts (equation, precisions, strides, input sizes) come from the case's ONNX file. Prints
the entries, the evaluations, the time from an empty cache, with every entry a cache hit, and
to reload the one-file table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.stream_reference import STREAM_DATA, load_dump, node_key, node_keys, onnx_facts  # noqa: E402

from zigzag.multicore.cost_table import CostTable  # noqa: E402
from zigzag.multicore.topology import load_multicore_accelerator  # noqa: E402

QUAD = {
    "hardware": "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
    "workload": "stream/inputs/examples/workload/resnet18.onnx",
    "mapping": "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml",
}
FUSED_STACKS = [list(range(0, 11)), list(range(11, 22))]
#: the dimension fused mode cuts each layer type along (docs/models/multi-core.md#computation-nodes)
FUSION_DIM = {"conv": "OY", "pooling": "OY", "relu": "K", "add": "D", "gemm": "D"}


def case_inputs(case: str) -> dict:
    if case == "fused":
        return {**QUAD, "mode": "fused", "layer_stacks": FUSED_STACKS}
    if case == "fused-like":
        return {**QUAD, "mode": "lbl", "layer_stacks": None}
    meta = load_dump(case)["meta"]
    return {
        **{k: meta["inputs"][k] for k in ("hardware", "workload", "mapping")},
        "mode": meta["options"]["mode"],
        "layer_stacks": meta["options"]["layer_stacks"],
    }


def dump_pairs(case: str) -> list:
    if case != "fused-like":
        return [(node, entry["core"]) for entry, node in node_keys(case)]
    pairs = []
    in_stacks = {layer for stack in FUSED_STACKS for layer in stack}
    for entry, node in node_keys("lbl"):
        if entry["node"][0] in in_stacks:
            dim = FUSION_DIM[entry["op_type"]]
            sizes = tuple((d, 1 if d == dim else s) for d, s in node.loop_sizes)
            node = dataclasses.replace(node, loop_sizes=sizes, edge_bits=())
        pairs.append((node, entry["core"]))
    return pairs


def run_reference(inputs: dict, venv: Path, source: Path) -> dict:
    """The reference's cost table of the case (run in a copy of the reference folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "case"
        shutil.copytree(STREAM_DATA, folder)
        out = Path(tmp) / "reference.json"
        env = {**os.environ, "PYTHONPATH": str(source)}
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                str(REPO / "benchmarks" / "stream_reference_cost_table.py"),
                json.dumps(inputs),
                str(out),
            ],
            cwd=folder,
            env=env,
            check=True,
        )
        return json.loads(out.read_text())


def compare(entry, expected: dict) -> bool:
    r = entry.result
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)  # noqa: E731
    return (
        all(
            getattr(r, f) == expected[f]
            for f in ("latency_total0", "latency_total1", "latency_total2")
        )
        and close(r.energy_total, expected["energy_total"])
        and list(entry.too_large_operands) == expected["too_large_operands_for_core"]
        and all(close(entry.offchip_bw[d], v) for d, v in expected["offchip_bw"].items())
        and all(
            close(a, b)
            for op, levels in expected["mem_energy_breakdown"].items()
            for a, b in zip(r.mem_energy_breakdown[op], levels)
        )
    )


def main() -> None:
    logging.getLogger("zigzag").setLevel(logging.ERROR)  # spatial-mapping clipping notes
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case",
        default="fused-like",
        choices=["fused", "fused-like", "lbl", "small_lbl", "small_fused"],
    )
    parser.add_argument(
        "--reference-venv", type=Path, help="venv of the reference Stream (zigzag-dse 3.8.0 & deps)"
    )
    parser.add_argument(
        "--reference-source", type=Path, help="the reference Stream checkout (put on PYTHONPATH)"
    )
    args = parser.parse_args()
    inputs = case_inputs(args.case)
    accelerator = load_multicore_accelerator(STREAM_DATA / inputs["hardware"], cwd=STREAM_DATA)
    reference = None
    if args.reference_venv:
        if args.case == "fused-like" or not args.reference_source:
            parser.error(
                "--reference-venv needs --reference-source and a real case (fused, lbl, small_*)"
            )
        reference = run_reference(inputs, args.reference_venv, args.reference_source)
        facts = onnx_facts(STREAM_DATA / inputs["workload"])
        pairs = [(node_key(e, facts, e["edge_bits"]), e["core"]) for e in reference["entries"]]
        print(
            f"case {args.case}: {len(pairs)} (CN, core) cost-table entries of the reference "
            f"({reference['nb_cns']} CNs)"
        )
    elif args.case == "fused":
        parser.error("case fused needs the CN graph: give --reference-venv and --reference-source")
    else:
        pairs = dump_pairs(args.case)
        print(
            f"case {args.case}: {len(pairs)} (CN, core) pairs from the reference dump (no CN graph here)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        cache, lut = Path(tmp) / "cache", Path(tmp) / "cost_lut.json"
        start = time.perf_counter()
        table = CostTable.for_accelerator(accelerator, cache=cache, lut_path=lut)
        entries = table.fill(pairs)
        scratch = time.perf_counter() - start
        table.save()
        evaluations = sum(e.evaluations for e in {e.key: e for e in entries}.values())
        print(
            f"from scratch: {scratch:.2f} s, {table.computed} distinct entries searched, "
            f"{evaluations} mapping evaluations ({evaluations / scratch:,.0f} per second)"
        )
        start = time.perf_counter()
        hits = CostTable.for_accelerator(accelerator, cache=cache).fill(pairs)
        print(f"all cache hits (entry files): {time.perf_counter() - start:.3f} s")
        start = time.perf_counter()
        reloaded = CostTable.for_accelerator(accelerator, lut_path=lut).fill(pairs)
        print(
            f"one-file table reloaded ({lut.stat().st_size / 1e6:.1f} MB): {time.perf_counter() - start:.3f} s"
        )
        print(
            f"cache hits and reloaded table identical to the computed entries: {hits == entries == reloaded}"
        )
    if reference is not None:
        same = sum(
            compare(entry, expected) for entry, expected in zip(entries, reference["entries"])
        )
        print(
            f"reference cost-table stage: {reference['seconds']:.1f} s ({reference['seconds'] / scratch:.0f}x ours); "
            f"entries equal to the reference's: {same} of {len(entries)}"
        )


if __name__ == "__main__":
    main()
