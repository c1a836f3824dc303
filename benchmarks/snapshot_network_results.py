#!/usr/bin/env python3
"""Write the full results of whole-network evaluations, to check that a speed-up changes nothing.

Usage:  python benchmarks/snapshot_network_results.py OUT_DIR
        python tools/compare_results.py OUT_BEFORE OUT_AFTER

Evaluates every example network on variants of the TPU example (the variants of
``bench_network_eval.py``) and on the other example accelerators, with each optimisation
criterion, and writes one JSON per case into ``OUT_DIR``: every layer's complete result (as the
workflow writes it, and every field of its result object) and the network total. Run it before and after a change to the evaluator and
compare the two folders with ``tools/compare_results.py`` (numbers must be exactly equal).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_network_eval import REPO, variant_documents  # noqa: E402

NETWORKS = ["resnet18", "mobilenetv2", "alexnet", "transformer_block"]
EXAMPLES = ["flow_eyeriss_14x12", "flow_edgetpu_4x4x8x8"]
CRITERIA = ["latency", "energy", "EDP"]


def cases(folder: Path) -> list[tuple[str, Path, Path]]:
    """(name, accelerator file, mapping file) of every accelerator compared."""
    found = []
    for edge, buffer_mib in [(16, 1), (32, 3), (64, 0.25)]:
        hardware, mapping = variant_documents(edge, buffer_mib)
        hardware_file, mapping_file = (
            folder / f"{hardware['name']}.yaml",
            folder / f"{hardware['name']}_map.yaml",
        )
        hardware_file.write_text(yaml.safe_dump(hardware, sort_keys=False))
        mapping_file.write_text(yaml.safe_dump(mapping, sort_keys=False))
        found.append((hardware["name"], hardware_file, mapping_file))
    for name in EXAMPLES:
        found.append(
            (
                name,
                REPO / "inputs" / "hardware" / f"{name}.yaml",
                REPO / "inputs" / "mapping" / f"{name}.yaml",
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--lpf-limit", type=int, default=6)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    from zigzag.api import run
    from zigzag.errors import InputError, MappingError
    from zigzag.cost.json_forms import complete_json, cumulative_json
    from zigzag.mapping_search.options import SearchOptions

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zz_snapshot_") as tmp:
        for name, hardware_file, mapping_file in cases(Path(tmp)):
            for network in NETWORKS:
                for opt in CRITERIA:
                    workload = REPO / "inputs" / "workload" / f"{network}.onnx"
                    try:
                        result = run(
                            workload,
                            hardware_file,
                            mapping_file,
                            SearchOptions(opt=opt, lpf_limit=args.lpf_limit),
                            show_progress=False,
                        )
                    except (
                        InputError,
                        MappingError,
                    ) as exc:  # e.g. a buffer too small: the message is the result
                        document = {"error": str(exc)}
                    else:
                        document = {
                            "total": cumulative_json(result.total),
                            "layers": [
                                complete_json(cost, layer, result.accelerators[layer.id])
                                for layer, cost in result.layers
                            ],
                            "layer_results": [cost.to_dict() for _, cost in result.layers],
                        }
                    path = args.out / f"{name}@{network}@{opt}.json"
                    path.write_text(json.dumps(document, indent=1, sort_keys=True, default=str))
                    print(
                        path.name,
                        document.get("error")
                        or f"{result.energy:.6g} pJ {result.latency:.6g} cycles",
                    )


if __name__ == "__main__":
    main()
