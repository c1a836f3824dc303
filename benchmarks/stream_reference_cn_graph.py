"""Run the reference Stream (commit ed4e12e) up to its CN graph and dump it as JSON.

Run with the reference's interpreter, from a folder laid out like ``tests/data/reference/stream``
(Stream finds core files relative to the working directory)::

    cd <copy of tests/data/reference/stream>
    PYTHONPATH=/work/ref/stream /work/ref/stream-venv/bin/python stream_reference_cn_graph.py \
        --accelerator H --workload W --mapping M --mode fused --layer-stacks "0-10;11-21" --output out.json

It chains the reference's own parsing and generation stages (accelerator, ONNX, layer stacks,
tiling, tiled workload) and ends with a small collecting stage; the seconds spent in the chain are
written to the JSON (``build_seconds``, and ``build_cpu_seconds`` = process CPU time) so ``bench_cn_graph.py`` can compare.
"""

from __future__ import annotations

import argparse
import json
import time

from stream.stages.generation.layer_stacks_generation import LayerStacksGenerationStage
from stream.stages.generation.tiled_workload_generation import TiledWorkloadGenerationStage
from stream.stages.generation.tiling_generation import TilingGenerationStage
from stream.stages.parsing.accelerator_parser import AcceleratorParserStage
from stream.stages.parsing.onnx_model_parser import ONNXModelParserStage
from stream.stages.stage import MainStage, Stage


class _Collect(Stage):
    """Leaf stage: keep the CN graph it receives."""

    seen: dict = {}

    def __init__(self, list_of_callables, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        _Collect.seen = kwargs

    def is_leaf(self) -> bool:
        return True

    def run(self):
        yield None, None


def _stacks(text: str | None):
    if not text:
        return None
    stacks = []
    for part in text.split(";"):
        lo, _, hi = part.partition("-")
        stacks.append(tuple(range(int(lo), int(hi or lo) + 1)))
    return stacks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", required=True)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--mapping", required=True)
    parser.add_argument("--mode", choices=("lbl", "fused"), required=True)
    parser.add_argument("--layer-stacks", default=None)
    parser.add_argument("--output", required=True)
    parser.add_argument("--summary-only", action="store_true", help="counts only, no per-CN dump")
    args = parser.parse_args()

    start, cpu_start = time.perf_counter(), time.process_time()
    MainStage(
        [
            AcceleratorParserStage,
            ONNXModelParserStage,
            LayerStacksGenerationStage,
            TilingGenerationStage,
            TiledWorkloadGenerationStage,
            _Collect,
        ],
        accelerator=args.accelerator,
        workload_path=args.workload,
        mapping_path=args.mapping,
        mode=args.mode,
        layer_stacks=_stacks(args.layer_stacks),
    ).run()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    graph = _Collect.seen["workload"]
    edges = list(graph.edges(data=True))
    intra = sum(1 for a, b, _ in edges if a.id == b.id)
    out = {
        "made_by": "benchmarks/stream_reference_cn_graph.py (reference Stream ed4e12e, zigzag-dse 3.8.0)",
        "inputs": {
            k: getattr(args, k)
            for k in ("accelerator", "workload", "mapping", "mode", "layer_stacks")
        },
        "layer_stacks": [list(s) for s in _Collect.seen["layer_stacks"]],
        "build_seconds": seconds,
        "build_cpu_seconds": cpu_seconds,
        "nb_cns": graph.number_of_nodes(),
        "nb_edges": len(edges),
        "nb_intra_layer_edges": intra,
        "nb_inter_layer_edges": len(edges) - intra,
    }
    if not args.summary_only:
        out["cns"] = [
            {
                "id": [n.id, n.sub_id],
                "loop_ranges": {str(d): list(r) for d, r in n.loop_ranges.items()},
                "group": n.group,
                "core": n.chosen_core_allocation,
                "operand_sizes_bits": {str(op): t.size for op, t in n.operand_tensors.items()},
                "produces_final_output": n.produces_final_output,
                "data_produced_unique": n.data_produced_unique,
                "nb_real_predecessors": n.nb_real_predecessors,
            }
            for n in sorted(graph.node_list, key=lambda n: (n.id, n.sub_id))
        ]
        out["edges"] = [
            {
                "src": [a.id, a.sub_id],
                "dst": [b.id, b.sub_id],
                "operand": str(d.get("operand", "")) or None,
                "bits": d["bits"],
            }
            for a, b, d in edges
        ]
    with open(args.output, "w") as fh:
        json.dump(out, fh)
    print(f"reference CN graph: {out['nb_cns']} CNs, {out['nb_edges']} edges in {seconds:.3f} s")


if __name__ == "__main__":
    main()
