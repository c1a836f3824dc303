"""Run the reference Stream (commit ed4e12e) up to its cost table and dump it as JSON.

Run with the reference's interpreter, from a folder laid out like ``tests/data/reference/stream``
(Stream finds core files relative to the working directory)::

    cd <copy of tests/data/reference/stream>
    PYTHONPATH=/work/ref/stream /work/ref/stream-venv/bin/python stream_reference_cost_table.py \\
        '{"hardware": H, "workload": W, "mapping": M, "mode": "fused", "layer_stacks": [[0, 1], [2]]}' out.json

It chains the reference's own stages up to ``ZigZagCoreMappingEstimationStage`` (with a fresh
``cost_lut_path``) and ends with a collecting stage that writes, per cost-table node and core: the
node's loop sizes and in-edge bits, the core, and ZigZag's figures as Stream keeps them. The seconds
spent in the cost-table stage alone are written as ``seconds``.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time

from stream.stages.estimation.zigzag_core_mapping_estimation import ZigZagCoreMappingEstimationStage
from stream.stages.generation.layer_stacks_generation import LayerStacksGenerationStage
from stream.stages.generation.tiled_workload_generation import TiledWorkloadGenerationStage
from stream.stages.generation.tiling_generation import TilingGenerationStage
from stream.stages.parsing.accelerator_parser import AcceleratorParserStage
from stream.stages.parsing.onnx_model_parser import ONNXModelParserStage
from stream.stages.stage import MainStage, Stage
from stream.utils import get_required_offchip_bandwidth, get_too_large_operands

CLOCK: dict[str, float] = {}
FOUR_WAY = ("rd_out_to_low", "wr_in_by_low", "rd_out_to_high", "wr_in_by_high")


class _Clock(Stage):
    """Pass-through stage noting when the cost-table stage starts."""

    def run(self):
        CLOCK["start"] = time.perf_counter()
        yield from self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs).run()


class _Collect(Stage):
    """Leaf stage: write the cost table it receives."""

    output = ""

    def __init__(self, list_of_callables, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.seen = kwargs

    def is_leaf(self) -> bool:
        return True

    def run(self):
        seconds = time.perf_counter() - CLOCK["start"]
        lut, accelerator, workload = (
            self.seen["cost_lut"],
            self.seen["accelerator"],
            self.seen["workload"],
        )
        entries = []
        for node in lut.get_nodes():
            bits: dict[str, int] = {}
            for _, _, data in workload.in_edges(node, data=True):
                if "operand" in data:
                    bits[str(data["operand"])] = bits.get(str(data["operand"]), 0) + data["bits"]
            for core in lut.get_cores(node):
                cme = lut.get_cme(node, core)
                streamed = get_too_large_operands(cme, accelerator, core.id)
                bandwidth = get_required_offchip_bandwidth(cme, streamed)
                entries.append(
                    {
                        "node": [node.id, node.sub_id],
                        "name": node.name,
                        "op_type": node.type,
                        "core": core.id,
                        "loop_dim_sizes": {str(d): s for d, s in node.layer_dim_sizes.items()},
                        "edge_bits": bits,
                        "too_large_operands_for_core": [str(m) for m in streamed],
                        "offchip_bw": {d: getattr(bandwidth, d) for d in FOUR_WAY},
                        "energy_total": cme.energy_total,
                        "latency_total0": cme.latency_total0,
                        "latency_total1": cme.latency_total1,
                        "latency_total2": cme.latency_total2,
                        "mem_energy_breakdown": {
                            str(op): list(v) for op, v in cme.mem_energy_breakdown.items()
                        },
                    }
                )
        with open(_Collect.output, "w") as handle:
            json.dump(
                {"seconds": seconds, "nb_cns": len(workload.node_list), "entries": entries}, handle
            )
        yield None, None


def main() -> None:
    logging.disable(logging.CRITICAL)
    case = json.loads(sys.argv[1])
    _Collect.output = sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        MainStage(
            [
                AcceleratorParserStage,
                ONNXModelParserStage,
                LayerStacksGenerationStage,
                TilingGenerationStage,
                TiledWorkloadGenerationStage,
                _Clock,
                ZigZagCoreMappingEstimationStage,
                _Collect,
            ],
            accelerator=case["hardware"],
            workload_path=case["workload"],
            mapping_path=case["mapping"],
            loma_lpf_limit=6,
            mode=case["mode"],
            layer_stacks=case.get("layer_stacks"),
            cost_lut_path=f"{tmp}/cost_lut.pickle",
        ).run()


if __name__ == "__main__":
    main()
