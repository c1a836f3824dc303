#!/usr/bin/env python3
"""Stream 2.1.1 and us on Stream 2.1.1's own example accelerators (docs/models/stream2-comparison.md).

For every non-AIE accelerator the ``stream-dse`` 2.1.1 wheel ships (copied unchanged into
``tests/data/stream2/hardware``) and one small CNN (``tests/data/stream2/small_cnn.onnx``), with no
mapping file:

* **release**: Stream 2.1.1's ``stream.api.evaluate_mapping`` (its generic mapping generator, its
  constraint-optimisation allocation), run by the release's own Python in a separate environment
  (``--release-python``; ``pip install stream-dse==2.1.1 six`` there, never in ours). Cycles are its
  ``MappingEstimate.cycles``; energy the sum of its groups' solver-reported ``total_pj``.
* **ours (auto)**: our ``stream.api.evaluate_mapping`` with no mapping (our automatic mapping,
  layer by layer, constraint-optimisation allocation, the late-2024 schedule model).
* **ours (release's mapping)**: the mapping the release chose (its ``group_<i>/mapping.yaml``
  files, merged) read as a Stream 2.x mapping file, scheduled by us layer by layer with the
  release's allocation.

Prints a markdown table (latency and energy side by side with the ratio ours / release) and writes
``<out>/stream2_compare.json``. Run from the repository root::

    python benchmarks/stream2_compare.py --release-python /work/venvs/stream2/bin/python --out results/stream2-compare
    python benchmarks/stream2_compare.py --ours-only --out results/stream2-compare
    python benchmarks/stream2_compare.py --make-workload tests/data/stream2/small_cnn.onnx

``--ours-only`` runs only **ours (auto)**: the release is never started (its figures, and so the
ratios, come from ``<out>/<accelerator>/release/result.json`` where an earlier run left one, else
"-"), and **ours (release's mapping)** is skipped (that mapping gives every layer its own
``inter_core_tiling``, so only the automatic side depends on our allocation's defaulted splits).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
HARDWARE = REPO / "tests" / "data" / "stream2" / "hardware"  # absolute: the release runs elsewhere
WORKLOAD = REPO / "tests" / "data" / "stream2" / "small_cnn.onnx"

RELEASE_TIMEOUT = 1200  # seconds per accelerator

#: what the release's Python runs: one accelerator, no mapping; prints one JSON line
RELEASE_RUNNER = """
import json, sys, time
from stream.api import SolveOptions, evaluate_mapping
hardware, workload, out = sys.argv[1:4]
begin = time.time()
try:
    estimate = evaluate_mapping(hardware, workload, out, None, SolveOptions(time_limit_s=60))
except Exception as error:
    print("RESULT " + json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}))
    raise SystemExit(0)
groups = estimate.context.get("group_allocations") or {}
energies = [((g or {}).get("performance") or {}).get("energy") for g in groups.values()]
energy = sum(e["total_pj"] for e in energies if e) if all(energies) and energies else None
print("RESULT " + json.dumps({"cycles": estimate.cycles, "energy_pj": energy,
                              "seconds": round(time.time() - begin, 1)}))
"""


def make_workload(path: Path) -> None:
    """The small CNN: Conv-Relu-MaxPool-Conv-Relu-Add-GlobalAveragePool-Flatten-Gemm, 1x3x32x32."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0", **conv),
        helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
        helper.make_node(
            "MaxPool", ["r0"], ["p0"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node("Conv", ["p0", "w1"], ["c1"], name="conv1", **conv),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Add", ["r1", "p0"], ["a1"], name="add1"),
        helper.make_node("GlobalAveragePool", ["a1"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w2"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[weight("w0", 16, 3, 3, 3), weight("w1", 16, 16, 3, 3), weight("w2", 16, 10)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(onnx.shape_inference.infer_shapes(model), str(path))


def run_release(python: str, hardware: Path, out: Path) -> dict:
    """The release's figures (kept in ``out/result.json``: a rerun reuses them)."""
    saved = out / "result.json"
    if saved.exists():
        return json.loads(saved.read_text())
    result = _release(python, hardware, out)
    if "error" not in result:
        saved.write_text(json.dumps(result))
    return result


def saved_release(out: Path) -> dict:
    """The release's figures an earlier run kept in ``out/result.json``, else none."""
    saved = out / "result.json"
    return json.loads(saved.read_text()) if saved.exists() else {}


def _release(python: str, hardware: Path, out: Path) -> dict:
    try:
        # from a folder of its own, so that the release, not our ``stream`` package, is imported
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [python, "-c", RELEASE_RUNNER, str(hardware), str(WORKLOAD), str(out.resolve())],
            capture_output=True,
            text=True,
            check=False,
            timeout=RELEASE_TIMEOUT,
            cwd=out,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
    except subprocess.TimeoutExpired:
        return {"error": f"not finished in {RELEASE_TIMEOUT} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return json.loads(lines[-1].removeprefix("RESULT "))


def release_mapping(out: Path) -> Path | None:
    """The release's per-group mapping files merged into one Stream 2.x mapping file."""
    files = sorted(out.glob("group_*/mapping.yaml"), key=lambda p: int(p.parent.name.split("_")[1]))
    if not files:
        return None
    layers, groups = [], []
    for file in files:
        data = yaml.safe_load(file.read_text())
        layers += data.get("layers", [])
        groups += data.get("fused_groups", [])
    merged = out / "release_mapping.yaml"
    merged.write_text(yaml.safe_dump({"layers": layers, "fused_groups": groups}, sort_keys=False))
    return merged


def run_ours(
    hardware: Path, out: Path, mapping: Path | None, lbl: bool, workload: Path = WORKLOAD
) -> dict:
    from stream.api import SolveOptions, evaluate_mapping
    from zigzag.multicore.pipeline.calls import optimize_co

    begin = time.time()
    try:
        if mapping is None:
            estimate = evaluate_mapping(
                str(hardware), str(WORKLOAD), str(out), None, SolveOptions(time_limit_s=60)
            )
            schedule = estimate.context.schedule
        else:
            from zigzag.multicore.mapping import load_stream_mapping
            from zigzag.multicore.topology import load_multicore_accelerator

            accelerator = load_multicore_accelerator(hardware)
            parsed = load_stream_mapping(mapping, accelerator)
            mode = "lbl" if lbl else "fused"
            schedule = optimize_co(
                accelerator, str(WORKLOAD), parsed, mode, time_limit=60, output=out
            ).schedule
    except Exception as error:  # a row of the table, not a crash of the benchmark
        return {"error": f"{type(error).__name__}: {error}"[:300]}
    return {
        "cycles": schedule.latency,
        "energy_pj": schedule.energy,
        "seconds": round(time.time() - begin, 1),
    }


def _cell(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(ours, release) -> str:
    if ours is None or release in (None, 0):
        return "-"
    return f"{ours / release:.2f}"


COLUMNS = (
    ("ours_auto", "ours (auto)"),
    ("ours_release_mapping", "ours (release's mapping)"),
)


def table(rows: list[dict]) -> str:
    """Two markdown tables (cycles, energy): the release, then each of ours with its ratio."""
    out = []
    for figure, unit in (("cycles", "cycles"), ("energy_pj", "energy (pJ)")):
        head = f"| accelerator | release {unit} | " + " | ".join(
            f"{name} | ratio" for _, name in COLUMNS
        )
        out.append(head + " |\n|" + "---|" * (2 + 2 * len(COLUMNS)))
        for row in rows:
            release = row["release"].get(figure)
            cells = [row["hardware"], _cell(release)]
            for key, _ in COLUMNS:
                ours = row.get(key, {}).get(figure)
                cells += [_cell(ours), _ratio(ours, release)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    errors = [
        f"- {row['hardware']} ({side}): {row[side]['error']}"
        for row in rows
        for side in ("release", *(k for k, _ in COLUMNS))
        if "error" in row.get(side, {})
    ]
    return "\n".join(out) + ("\n" + "\n".join(errors) if errors else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--release-python", help="the Python of an environment with stream-dse 2.1.1"
    )
    parser.add_argument("--out", default="results/stream2-compare")
    parser.add_argument("--only", nargs="*", help="accelerator file names (default: all shipped)")
    parser.add_argument("--make-workload", type=Path, help="write the small CNN there and stop")
    parser.add_argument(
        "--ours-only",
        action="store_true",
        help="run only ours (auto); the release's figures from <out>/<accelerator>/release/result.json",
    )
    args = parser.parse_args()
    if args.make_workload:
        make_workload(args.make_workload)
        return
    if not args.release_python and not args.ours_only:
        parser.error("--release-python is required (or --ours-only)")
    logging.basicConfig(level=logging.ERROR)
    out = Path(args.out)
    rows = []
    for hardware in sorted(HARDWARE.glob("*.yaml")):
        if args.only and hardware.name not in args.only:
            continue
        folder = out / hardware.stem
        if args.ours_only:
            row = {"hardware": hardware.name, "release": saved_release(folder / "release")}
            row["ours_auto"] = run_ours(hardware, folder / "ours_auto", None, lbl=True)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            continue
        row = {
            "hardware": hardware.name,
            "release": run_release(args.release_python, hardware, folder / "release"),
        }
        row["ours_auto"] = run_ours(hardware, folder / "ours_auto", None, lbl=True)
        chosen = release_mapping(folder / "release")
        missing = {"error": "the release wrote no mapping"}
        row["ours_release_mapping"] = (
            run_ours(hardware, folder / "ours_release_mapping", chosen, lbl=True)
            if chosen
            else missing
        )
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "stream2_compare.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
