"""Time Stream's cost table: every (CN shape, core) entry from scratch, then from the cache.

    python benchmarks/bench_cost_table.py [--case lbl|fused-like|small_lbl|small_fused]

Inputs: the CN graph is not built here yet, so the entries are the reference dumps' cost-table
entries (``tests/data/reference/stream/<case>.json``: each entry's CN loop sizes, in-edge bits and
core; layer facts from the case's ONNX). ``fused-like`` = the ``lbl`` entries with the layers of
the fused case's first two stacks (0-10, 11-21) cut the way fused mode cuts them (conv/pool into
output rows, Relu into columns, Add into rows; spec stream.md §4.2), i.e. the shapes of the fused
ResNet-18 cost table, but not its real CN graph. Prints the entries, the evaluations, the time from
an empty cache, the time when every entry is a cache hit, and the time to reload the one-file table.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from stream_reference import STREAM_DATA, load_dump, node_keys  # noqa: E402

from zigzag.stream.cost_table import CostTable  # noqa: E402
from zigzag.stream.hardware import load_multicore_accelerator  # noqa: E402

FUSED_STACKS = set(range(0, 22))
#: the dimension fused mode cuts each layer type along (spec stream.md §4.2)
FUSION_DIM = {"conv": "OY", "pooling": "OY", "relu": "K", "add": "D", "gemm": "D"}


def accelerator_of(case: str):
    """The case's multi-core accelerator (core files resolved from the reference folder)."""
    return load_multicore_accelerator(STREAM_DATA / load_dump(case)["meta"]["inputs"]["hardware"], cwd=STREAM_DATA)


def pairs_of(case: str) -> list:
    if case != "fused-like":
        return [(node, entry["core"]) for entry, node in node_keys(case)]
    import dataclasses

    pairs = []
    for entry, node in node_keys("lbl"):
        if entry["node"][0] in FUSED_STACKS:
            dim = FUSION_DIM[entry["op_type"]]
            sizes = tuple((d, 1 if d == dim else s) for d, s in node.loop_sizes)
            node = dataclasses.replace(node, loop_sizes=sizes, edge_bits=())
        pairs.append((node, entry["core"]))
    return pairs


def main() -> None:
    logging.getLogger("zigzag").setLevel(logging.ERROR)  # spatial-mapping clipping notes
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="fused-like", choices=["lbl", "fused-like", "small_lbl", "small_fused"])
    args = parser.parse_args()
    source = "lbl" if args.case == "fused-like" else args.case
    accelerator = accelerator_of(source)
    pairs = pairs_of(args.case)
    print(f"case {args.case}: {len(pairs)} (CN, core) pairs from the reference dump (no CN graph yet)")
    with tempfile.TemporaryDirectory() as tmp:
        cache, lut = Path(tmp) / "cache", Path(tmp) / "cost_lut.json"
        start = time.perf_counter()
        table = CostTable.for_accelerator(accelerator, cache=cache, lut_path=lut)
        entries = table.fill(pairs)
        scratch = time.perf_counter() - start
        table.save()
        evaluations = sum(e.evaluations for e in {e.key: e for e in entries}.values())
        print(f"from scratch: {scratch:.2f} s, {table.computed} distinct entries searched, "
              f"{evaluations} mapping evaluations ({evaluations / scratch:,.0f} per second)")
        start = time.perf_counter()
        hits = CostTable.for_accelerator(accelerator, cache=cache).fill(pairs)
        print(f"all cache hits (entry files): {time.perf_counter() - start:.3f} s")
        start = time.perf_counter()
        reloaded = CostTable.for_accelerator(accelerator, lut_path=lut).fill(pairs)
        print(f"one-file table reloaded ({lut.stat().st_size / 1e6:.1f} MB): {time.perf_counter() - start:.3f} s")
        print(f"cache hits and reloaded table identical to the computed entries: {hits == entries == reloaded}")
        total = sum(e.latency for e in entries)
        print(f"sum of entry latencies {total:.10g} cycles, on-chip {sum(e.onchip_energy for e in entries):.10g} pJ")


if __name__ == "__main__":
    main()
