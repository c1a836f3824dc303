"""Write what the reference ZigZag (zigzag-dse 3.8.5) shows as ``cme.spatial_mapping`` and
``cme.temporal_mapping`` for every layer of a workload (oracle data for
tests/compat/test_compat_printed_mappings.py). Run with the reference installed, outside this checkout (so
that `import zigzag` finds the reference), e.g.:

    cd /tmp && /path/to/reference-venv/bin/python /path/to/tools/make_printed_mapping_oracle.py \
        --workload W --accelerator A --mapping M --output out.json

The stage list is the reference API's without its VisualizationStage, which fails on a layer with
no temporal loop. Loops are written as ``[dim, size]`` pairs, per operand and memory level.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile


def loops(per_operand: dict) -> dict:
    return {
        str(op): [[[str(dim), size] for dim, size in level] for level in levels]
        for op, levels in per_operand.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("workload", "accelerator", "mapping", "output"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--opt", default="latency", choices=("latency", "energy"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    from zigzag.mapping.temporal_mapping import TemporalMappingType
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    from zigzag.stages.main import MainStage
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.mapping.temporal_mapping_generator_stage import TemporalMappingGeneratorStage
    from zigzag.stages.parser.accelerator_parser import AcceleratorParserStage
    from zigzag.stages.parser.workload_parser import WorkloadParserStage
    from zigzag.stages.results.reduce_stages import (
        MinimalEnergyStage,
        MinimalLatencyStage,
        SumStage,
    )
    from zigzag.stages.workload_iterator import WorkloadStage

    reduction = MinimalLatencyStage if args.opt == "latency" else MinimalEnergyStage
    with tempfile.TemporaryDirectory() as dump:
        cmes = MainStage(
            [
                WorkloadParserStage,
                AcceleratorParserStage,
                SumStage,
                WorkloadStage,
                reduction,
                SpatialMappingGeneratorStage,
                reduction,
                TemporalMappingGeneratorStage,
                CostModelStage,
            ],
            accelerator=args.accelerator,
            workload=args.workload,
            mapping=args.mapping,
            loma_lpf_limit=6,
            loma_show_progress_bar=False,
            nb_mappings_generated=3,
            enable_mix_spatial_mapping_generation=False,
            access_same_data_considered_as_no_access=True,
            temporal_mapping_type=TemporalMappingType("uneven"),
            dump_folder=dump,
            pickle_filename=f"{dump}/cmes.pickle",
        ).run()
    layers = []
    for cme, _ in cmes[0][1]:
        layers.append(
            {
                "layer": cme.layer.name,
                "energy_total": cme.energy_total,
                "latency_total2": cme.latency_total2,
                "spatial_mapping": loops(cme.spatial_mapping.mapping_dict_origin),
                "spatial_mapping_int": loops(cme.spatial_mapping_int.mapping_dict_origin),
                "temporal_mapping": loops(cme.temporal_mapping.mapping_dic_origin),
                "temporal_mapping_stationary": loops(cme.temporal_mapping.mapping_dic_stationary),
                "printed_spatial_mapping": str(cme.spatial_mapping),
                "printed_temporal_mapping": str(cme.temporal_mapping),
            }
        )
    with open(args.output, "w") as file:
        json.dump(
            {
                "generator": "tools/make_printed_mapping_oracle.py with zigzag-dse 3.8.5",
                "inputs": {
                    "workload": args.workload,
                    "accelerator": args.accelerator,
                    "mapping": args.mapping,
                    "opt": args.opt,
                    "lpf_limit": 6,
                },
                "layers": layers,
            },
            file,
            indent=1,
        )


if __name__ == "__main__":
    main()
