#!/usr/bin/env python3
"""Benchmark the multi-core scheduler: schedules per second.

Cases, each scheduled ``--repeat`` times in this process after one warm-up run:

* ``small_lbl``, ``small_fused``, ``lbl``: the reference dumps (Stream's per-CN costs, its order);
* ``synthetic``: a fused-like problem on the TPU-like quad core (ResNet-like row tiling, about a
  thousand CNs and tens of thousands of edges: rows feed neighbouring rows, every fourth layer
  is tiled by columns and takes every row of its producer, as a fused Relu does);
* ``fused_resnet18``: the fused ResNet-18 case (TPU-like quad core, stacks ``0-10; 11-21``, then
  one layer per stack; 1,118 CNs, 53,261 edges): our CN graph and hardware with Stream's per-CN
  costs (``tests/data/stream/fused_resnet18_schedule.json.gz``, recorded from a reference run);
* any further dump given with ``--dump`` (same JSON layout, e.g. a fused ResNet-18 run).

With ``--reference-venv`` the reference Stream is run on the same cases in child processes
(``optimize_allocation_ga``, its cost table kept in ``--reference-cache``: run twice to time it
with the table cached, as Stream is usually compared).

The time covers one :func:`zigzag.multicore.schedule.schedule` call (problem already built); the
medians over the repeats of wall time and of this process's CPU time are printed (the latter is
less sensitive to a busy machine).
The machine load is printed: compare figures taken under similar load only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from zigzag.multicore.schedule import I1, I2, O, ScheduleProblem, schedule, scheduling_order

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.stream_reference_dump import hardware_from_files, problem_from_dump  # noqa: E402  (tests/ is not a package)

REF = REPO / "tests" / "data" / "reference" / "stream"


def synthetic_problem(nb_layers: int = 20, rows: int = 50, seed: int = 0) -> ScheduleProblem:
    """A fused-like ~``nb_layers × rows``-CN problem on the quad-core TPU hardware of ``lbl``."""
    rng = np.random.default_rng(seed)
    lbl = json.loads((REF / "lbl.json").read_text())
    hw = hardware_from_files(
        REF / lbl["meta"]["inputs"]["hardware"],
        REF,
        [(m["name"], m["cores"][0]) for m in lbl["memories"]],
    )
    n = nb_layers * rows
    layer = np.repeat(np.arange(nb_layers), rows)
    sub = np.tile(np.arange(rows), nb_layers)
    core = (layer % 4).astype(np.int64)
    sizes, operands, origins, base = [], [], [], []

    def tensor(size, operand, origin, prio):
        sizes.append(size)
        operands.append(operand)
        origins.append(origin)
        base.append(prio)
        return len(sizes) - 1

    operand_tensor = np.full((n, 3), -1, dtype=np.int64)
    constants = []
    for lay in range(nb_layers):
        w = tensor(int(rng.integers(20_000, 600_000)), I2, lay * rows, rows)
        for s in range(rows):
            cn = lay * rows + s
            operand_tensor[cn, I2] = w
            operand_tensor[cn, O] = tensor(int(rng.integers(5_000, 40_000)), O, cn, 0)
            if lay == 0:
                operand_tensor[cn, I1] = tensor(20_000, I1, cn, 1)
                constants.append((I1, I2))
            else:
                constants.append((I2,))
    src, dst, operand = [], [], []
    for lay in range(nb_layers):
        for s in range(rows - 1):  # intra-layer chain
            src.append(lay * rows + s)
            dst.append(lay * rows + s + 1)
            operand.append(-1)
        if lay == 0:
            continue
        for s in range(rows):
            producers = range(rows) if lay % 4 == 3 else range(max(0, s - 1), min(rows, s + 2))
            for p in producers:
                src.append((lay - 1) * rows + p)
                dst.append(lay * rows + s)
                operand.append(I1)
    final = np.ones(n, dtype=bool)
    return ScheduleProblem(
        hardware=hw,
        layer=layer,
        sub=sub,
        core=core,
        runtime=rng.integers(500, 5_000, n).astype(np.float64),
        onchip_energy=rng.uniform(1e4, 1e6, n),
        offchip_energy=np.zeros(n),
        too_large=((),) * n,
        bw_to_offchip=np.zeros(n),
        bw_from_offchip=np.zeros(n),
        final_output=final,
        operand_tensor=operand_tensor,
        constants=tuple(constants),
        tensor_size=np.array(sizes, dtype=np.int64),
        tensor_operand=np.array(operands, dtype=np.int64),
        tensor_origin=np.array(origins, dtype=np.int64),
        tensor_base_priority=np.array(base, dtype=np.int64),
        edge_src=np.array(src, dtype=np.int64),
        edge_dst=np.array(dst, dtype=np.int64),
        edge_operand=np.array(operand, dtype=np.int64),
        edge_bits=np.zeros(len(src), dtype=np.int64),
        order=scheduling_order(layer, sub, [tuple(range(nb_layers))]),
        name="synthetic",
    ).validated()


def fused_resnet18_problem() -> ScheduleProblem:
    """The reference fused ResNet-18 case: our CN graph and hardware, Stream's per-CN costs."""
    import gzip

    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files
    from zigzag.multicore.schedule.adapter import CNCost, problem_from_cn_graph

    ref = json.loads(
        gzip.open(
            REPO / "tests" / "data" / "stream" / "fused_resnet18_schedule.json.gz", "rt"
        ).read()
    )
    inputs = ref["inputs"]
    accelerator = load_multicore_accelerator(REF / inputs["hardware"], str(REF))
    graph = cn_graph_from_files(
        accelerator,
        REF / inputs["workload"],
        REF / inputs["mapping"],
        inputs["mode"],
        [tuple(s) for s in inputs["layer_stacks"]],
        cwd=str(REF),
    )
    cns = {(c[0], c[1]): c for c in ref["cns"]}
    costs = [
        CNCost(c[3], c[4], c[5], tuple(c[6]), c[7], c[8])
        for c in (cns[k] for k in zip(graph.layer.tolist(), graph.sub_id.tolist()))
    ]
    return problem_from_cn_graph(graph, accelerator, costs, name="fused_resnet18")


def measure(problem: ScheduleProblem, repeat: int) -> tuple[float, float, object]:
    """Median (wall seconds, CPU seconds of this process) of one schedule, and the result."""
    result = schedule(problem)
    walls, cpus = [], []
    for _ in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        schedule(problem)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return float(np.median(walls)), float(np.median(cpus)), result


# Runs the reference Stream on one case in a child process (cwd = a copy of the reference folder);
# prints the wall time of optimize_allocation_ga and whether its cost table was already cached.
REFERENCE_WORKER = r"""
import json, logging, os, sys, time
logging.disable(logging.CRITICAL)
spec = json.loads(sys.argv[1])
from stream.api import optimize_allocation_ga
lut = os.path.join(spec["cache"], spec["case"], "cost_lut.pickle")
cached = os.path.exists(lut)
t0 = time.perf_counter()
scme = optimize_allocation_ga(hardware=spec["hardware"], workload=spec["workload"], mapping=spec["mapping"],
    mode=spec["mode"], layer_stacks=[tuple(s) for s in spec["layer_stacks"]], nb_ga_generations=4,
    nb_ga_individuals=4, experiment_id=spec["case"], output_path=spec["cache"], skip_if_exists=False)
print(json.dumps({"seconds": time.perf_counter() - t0, "cost_table_cached": cached, "latency": float(scme.latency)}))
"""

REFERENCE_CASES = {
    "small_lbl": (
        "small/dual_testing_core_offchip_v2.yaml",
        "small/small_3conv.onnx",
        "small/mapping_plain.yaml",
        "lbl",
        [[0], [1], [2]],
    ),
    "small_fused": (
        "small/dual_testing_core_offchip_v2.yaml",
        "small/small_3conv.onnx",
        "small/mapping_plain.yaml",
        "fused",
        [[0, 1, 2]],
    ),
    "lbl": (
        "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
        "stream/inputs/examples/workload/resnet18.onnx",
        "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml",
        "lbl",
        [[0]],
    ),
    "fused_resnet18": (
        "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
        "stream/inputs/examples/workload/resnet18.onnx",
        "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml",
        "fused",
        [list(range(0, 11)), list(range(11, 22))] + [[i] for i in range(22, 49)],
    ),
}


def run_reference(venv: str, stream_src: str, case: str, cache: Path) -> dict:
    """Time the reference Stream on ``case`` (its cost table is kept in ``cache`` for the next run)."""
    import shutil
    import subprocess
    import tempfile

    hardware, workload, mapping, mode, stacks = REFERENCE_CASES[case]
    with tempfile.TemporaryDirectory() as work:
        for sub in ("stream", "small"):
            shutil.copytree(REF / sub, Path(work) / sub)
        spec = {
            "case": case,
            "hardware": hardware,
            "workload": workload,
            "mapping": mapping,
            "mode": mode,
            "layer_stacks": stacks,
            "cache": str(cache),
        }
        env = dict(os.environ, PYTHONPATH=stream_src, PYTHONHASHSEED="0")
        out = subprocess.run(
            [str(Path(venv) / "bin" / "python"), "-c", REFERENCE_WORKER, json.dumps(spec)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument(
        "--dump", action="append", default=[], help="further dump JSON files to schedule"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the last case")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="also time sum(range(10**7)), a rough gauge of how busy the machine is",
    )
    parser.add_argument(
        "--reference-venv", help="also time the reference Stream (a venv with zigzag-dse 3.8.0)"
    )
    parser.add_argument(
        "--reference-src", default="/work/ref/stream", help="the Stream sources (PYTHONPATH)"
    )
    parser.add_argument(
        "--reference-cache",
        default=str(REPO / "results" / "reference-stream"),
        help="where the reference keeps its cost tables between runs",
    )
    parser.add_argument(
        "--reference-case",
        action="append",
        choices=sorted(REFERENCE_CASES),
        help="reference cases to time (default: all)",
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    if args.calibrate:
        t0, c0 = time.perf_counter(), time.process_time()
        sum(range(10**7))
        print(
            f"sum(range(10**7)): wall {time.perf_counter() - t0:.3f} s, CPU {time.process_time() - c0:.3f} s "
            "(about 0.1 s on an idle machine)"
        )
    problems = [problem_from_dump(REF / f"{c}.json") for c in ("small_lbl", "small_fused", "lbl")]
    problems.append(synthetic_problem())
    t0 = time.perf_counter()
    problems.append(fused_resnet18_problem())
    print(f"fused ResNet-18 CN graph + problem built in {time.perf_counter() - t0:.2f} s")
    problems += [problem_from_dump(d) for d in args.dump]
    print(
        f"{'case':14s} {'CNs':>6s} {'edges':>7s} {'transfers':>9s} {'wall ms':>9s} {'CPU ms':>8s} "
        f"{'schedules/s':>11s}  latency"
    )
    for p in problems:
        wall, cpu, result = measure(p, args.repeat)
        print(
            f"{p.name:14s} {p.nb_cns:6d} {p.nb_edges:7d} {len(result.transfers):9d} {wall * 1e3:9.1f} "
            f"{cpu * 1e3:8.1f} {1 / wall:11.1f}  {result.latency:.0f}"
        )
    if args.reference_venv:
        ours = {p.name: p for p in problems}
        for case in args.reference_case or sorted(REFERENCE_CASES):
            ref = run_reference(
                args.reference_venv, args.reference_src, case, Path(args.reference_cache)
            )
            wall, _, _ = measure(ours[case], 1)
            print(
                f"reference {case:14s}: {ref['seconds']:8.2f} s (whole run; cost table cached: "
                f"{ref['cost_table_cached']}), latency {ref['latency']:.0f}; ours (one schedule) {wall * 1e3:.1f} ms"
            )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if args.profile:
        import cProfile
        import pstats

        cProfile.runctx(
            "schedule(p)",
            globals(),
            {"p": problems[-1], "schedule": schedule},
            "/tmp/bench_schedule.prof",
        )
        pstats.Stats("/tmp/bench_schedule.prof").sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
