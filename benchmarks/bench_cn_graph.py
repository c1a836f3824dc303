"""How long building the CN graph takes: ResNet-18 fused row by row on the TPU-like quad core,
then Concat-heavy torchvision networks (GoogLeNet, DenseNet-121, SqueezeNet) in both modes.

    .venv/bin/python benchmarks/bench_cn_graph.py [--repeat 5] [--torchvision DIR] \
        [--reference-venv /work/ref/stream-venv --reference-source /work/ref/stream]

Prints the best-of-N time of ``build_cn_graph`` (stacks, tiling, CNs, edges; the ONNX and
hardware parsing are timed separately), and, with ``--reference-venv``, the reference Stream's
time for the same case (its parsing and generation stages up to the CN graph, run in a
subprocess by ``stream_reference_cn_graph.py`` from a temporary copy of the reference folder).
The torchvision networks (shapes-only ONNX files, default: ``shared/reference/torchvision`` in
a folder above the repository) are cut on the TPU-like quad core with its flexible mapping.
The machine's load average is printed first: timings on a loaded machine are longer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "data" / "reference" / "stream"
HARDWARE = "stream/inputs/examples/hardware/tpu_like_quad_core.yaml"
WORKLOAD = "stream/inputs/examples/workload/resnet18.onnx"
MAPPING = "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml"
STACKS = "0-10;11-21"


def ours(repeat: int) -> None:
    sys.path.insert(0, str(ROOT))
    from zigzag.multicore.cn_graph import build_cn_graph
    from zigzag.multicore.inputs import load_cn_graph_inputs
    from zigzag.multicore.tiling import parse_layer_stacks

    begin = time.perf_counter()
    _, workload, facts = load_cn_graph_inputs(
        REF / HARDWARE, REF / WORKLOAD, REF / MAPPING, cwd=str(REF)
    )
    parse = time.perf_counter() - begin
    stacks = parse_layer_stacks(STACKS)
    times, cpu = [], []
    for _ in range(repeat):
        begin, cpu_begin = time.perf_counter(), time.process_time()
        graph = build_cn_graph(
            workload, "fused", stacks, weight_capacity=facts.total_weight_capacity
        )
        times.append(time.perf_counter() - begin)
        cpu.append(time.process_time() - cpu_begin)
    print(
        f"ResNet-18 fused (stacks {STACKS}): {len(graph)} CNs, {graph.nb_edges} edges "
        f"({graph.nb_intra_layer_edges} intra-layer)"
    )
    print(
        f"  ours: parse hardware+mapping+ONNX {parse:.3f} s; build CN graph best {min(times):.3f} s, "
        f"median {sorted(times)[len(times) // 2]:.3f} s over {repeat} runs (CPU best {min(cpu):.3f} s)"
    )


TORCHVISION = ("googlenet", "densenet121", "squeezenet1_1")


def default_torchvision() -> Path | None:
    """``shared/reference/torchvision`` in the first folder above the repository that has it."""
    return next(
        (
            p / "shared" / "reference" / "torchvision"
            for p in ROOT.parents
            if (p / "shared" / "reference" / "torchvision").is_dir()
        ),
        None,
    )


def torchvision(folder: Path, repeat: int) -> None:
    import logging

    sys.path.insert(0, str(ROOT))
    from zigzag.multicore.cn_graph import build_cn_graph
    from zigzag.multicore.inputs import load_cn_graph_inputs

    logging.disable(
        logging.WARNING
    )  # the cores' spatial unrollings are reduced often; not the point here
    hardware = ROOT / "inputs" / "stream" / "hardware" / "tpu_like_quad_core.yaml"
    mapping = ROOT / "inputs" / "stream" / "mapping" / "tpu_like_quad_core.yaml"
    for net in TORCHVISION:
        begin = time.perf_counter()
        _, workload, facts = load_cn_graph_inputs(hardware, folder / f"{net}.onnx", mapping)
        parse = time.perf_counter() - begin
        for mode in ("lbl", "fused"):
            times, cpu = [], []
            for _ in range(repeat):
                begin, cpu_begin = time.perf_counter(), time.process_time()
                graph = build_cn_graph(
                    workload, mode, None, weight_capacity=facts.total_weight_capacity
                )
                times.append(time.perf_counter() - begin)
                cpu.append(time.process_time() - cpu_begin)
            print(
                f"{net} {mode}: {len(graph)} CNs, {graph.nb_edges} edges; build CN graph best {min(times):.3f} s "
                f"of {repeat} (CPU best {min(cpu):.3f} s; parse {parse:.3f} s)"
            )


def reference(venv: Path, source: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "stream"
        shutil.copytree(REF, work)
        out = Path(tmp) / "ref.json"
        begin = time.perf_counter()
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                str(ROOT / "benchmarks" / "stream_reference_cn_graph.py"),
                "--accelerator",
                HARDWARE,
                "--workload",
                WORKLOAD,
                "--mapping",
                MAPPING,
                "--mode",
                "fused",
                "--layer-stacks",
                STACKS,
                "--output",
                str(out),
                "--summary-only",
            ],
            cwd=work,
            env=os.environ | {"PYTHONPATH": str(source)},
            check=True,
            capture_output=True,
        )
        wall = time.perf_counter() - begin
        data = json.loads(out.read_text())
    print(
        f"  reference Stream: {data['nb_cns']} CNs, {data['nb_edges']} edges; stages up to the CN graph "
        f"{data['build_seconds']:.1f} s, CPU {data['build_cpu_seconds']:.1f} s (subprocess wall time {wall:.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--torchvision",
        type=Path,
        default=default_torchvision(),
        help="folder of googlenet.onnx, densenet121.onnx, squeezenet1_1.onnx",
    )
    parser.add_argument("--reference-venv", type=Path, default=None)
    parser.add_argument("--reference-source", type=Path, default=Path("/work/ref/stream"))
    args = parser.parse_args()
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    ours(args.repeat)
    if args.torchvision is not None:
        torchvision(args.torchvision, args.repeat)
    else:
        print("torchvision networks: not found; give --torchvision DIR")
    if args.reference_venv:
        reference(args.reference_venv, args.reference_source)


if __name__ == "__main__":
    main()
