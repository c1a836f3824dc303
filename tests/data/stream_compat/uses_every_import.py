"""A Stream user's script (made for this project) using every name Stream's scripts import.

Run from a folder holding `small/` and `stream/inputs/` of tests/data/reference/stream; prints a
JSON summary on its last line.
"""

import json
import os

from stream.api import optimize_allocation_co, optimize_allocation_ga
from stream.cost_model.cost_model import StreamCostModelEvaluation
from stream.stages.allocation.genetic_algorithm_allocation import GeneticAlgorithmAllocationStage
from stream.stages.estimation.zigzag_core_mapping_estimation import ZigZagCoreMappingEstimationStage
from stream.stages.generation.layer_stacks_generation import LayerStacksGenerationStage
from stream.stages.generation.scheduling_order_generation import SchedulingOrderGenerationStage
from stream.stages.generation.tiled_workload_generation import TiledWorkloadGenerationStage
from stream.stages.generation.tiling_generation import TilingGenerationStage
from stream.stages.parsing.accelerator_parser import AcceleratorParserStage
from stream.stages.parsing.onnx_model_parser import (
    ONNXModelParserStage as StreamONNXModelParserStage,
)
from stream.stages.set_fixed_allocation_performance import SetFixedAllocationPerformanceStage
from stream.stages.stage import MainStage
from stream.utils import CostModelEvaluationLUT
from stream.visualization.memory_usage import plot_memory_usage
from stream.visualization.perfetto import convert_scme_to_perfetto_json
from stream.visualization.schedule import visualize_timeline_plotly

accelerator = "small/dual_testing_core_offchip_v2.yaml"
workload_path = "small/small_3conv.onnx"
mapping_path = "small/mapping_plain.yaml"
experiment_id = "small-fused"

scme = optimize_allocation_ga(
    hardware=accelerator,
    workload=workload_path,
    mapping=mapping_path,
    mode="fused",
    layer_stacks=[(0, 1, 2)],
    nb_ga_generations=2,
    nb_ga_individuals=4,
    experiment_id=experiment_id,
    output_path="outputs",
    skip_if_exists=False,
)
cost_lut = CostModelEvaluationLUT(f"outputs/{experiment_id}/cost_lut.pickle")
visualize_timeline_plotly(
    scme,
    draw_dependencies=True,
    draw_communication=True,
    fig_path=f"outputs/{experiment_id}/schedule.html",
    layer_ids=[0, 1],
    cost_lut=cost_lut,
)
plot_memory_usage(
    scme, (0, 50), (20, 50), show_dram=True, fig_path=f"outputs/{experiment_id}/memory.png"
)
convert_scme_to_perfetto_json(
    scme, cost_lut, json_path=f"outputs/{experiment_id}/scme.json", layer_ids=[2]
)

# The late-2024 stage chain under Stream's module paths (as stream.api builds it).
answers = MainStage(
    [
        AcceleratorParserStage,
        StreamONNXModelParserStage,
        LayerStacksGenerationStage,
        TilingGenerationStage,
        TiledWorkloadGenerationStage,
        ZigZagCoreMappingEstimationStage,
        SetFixedAllocationPerformanceStage,
        SchedulingOrderGenerationStage,
        GeneticAlgorithmAllocationStage,
    ],
    accelerator=accelerator,
    workload_path=workload_path,
    mapping_path=mapping_path,
    loma_lpf_limit=6,
    nb_ga_generations=2,
    nb_ga_individuals=4,
    mode="lbl",
    layer_stacks=None,
    cost_lut_path="outputs/stages/cost_lut.pickle",
    operands_to_prefetch=[],
).run()
scme_lbl = answers[0][0]

scme_co = optimize_allocation_co(
    accelerator, workload_path, mapping_path, "fused", [(0, 1, 2)], "co", "outputs"
)

node = cost_lut.get_nodes()[0]
core = cost_lut.get_cores(node)[0]
print(
    json.dumps(
        {
            "fused": {
                "latency": scme.latency,
                "energy": scme.energy,
                "onchip": scme.total_cn_onchip_energy,
                "is_scme": isinstance(scme, StreamCostModelEvaluation),
                "cns": len(scme.workload.node_list),
            },
            "lbl": {
                "latency": scme_lbl.latency,
                "energy": scme_lbl.energy,
                "is_scme": isinstance(scme_lbl, StreamCostModelEvaluation),
            },
            "lut": {
                "nodes": len(cost_lut.get_nodes()),
                "latency_total2": cost_lut.get_cme(node, core).latency_total2,
            },
            "files": sorted(os.listdir(f"outputs/{experiment_id}")),
            "co": {
                "latency": scme_co.latency,
                "is_scme": isinstance(scme_co, StreamCostModelEvaluation),
                "files": sorted(os.listdir("outputs/co")),
            },
        }
    )
)
