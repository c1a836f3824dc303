"""Record how the reference ZigZag parses the shared ONNX models (test oracle).

Run with the reference environment, never with ours (both packages import as ``zigzag``)::

    /work/.venv-reference/bin/python tools/make_onnx_oracle.py

Writes ``tests/data/onnx_oracle.json``: per model (the three shared ones and our
``transformer_block.onnx``), per ONNX node, what the reference built (layer data as handed to its
layer factory, derived layer attributes, chosen mapping entry; dummy type and sources), plus the
dependency edges with and without dummy nodes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import networkx as nx
import zigzag.parser.onnx.conv_parser as conv_parser
import zigzag.parser.onnx.gemm_parser as gemm_parser
from zigzag.parser.mapping_factory import MappingFactory
from zigzag.parser.onnx.onnx_model_parser import ONNXModelParser
from zigzag.parser.workload_factory import LayerNodeFactory
from zigzag.stages.parser.workload_parser import WorkloadParserStage
from zigzag.workload.dummy_node import DummyNode

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared/reference/zigzag")
MODELS = {
    "resnet18": SHARED / "workload" / "resnet18.onnx",
    "alexnet": SHARED / "workload" / "alexnet.onnx",
    "mobilenetv2": SHARED / "workload" / "mobilenetv2.onnx",
    "transformer_block": ROOT / "inputs" / "workload" / "transformer_block.onnx",
}
MAPPING = SHARED / "mapping" / "tpu_like.yaml"
OUT = ROOT / "tests" / "data" / "onnx_oracle.json"


class RecordingFactory(LayerNodeFactory):
    """The reference layer factory, remembering the layer data it was given (by layer id)."""

    seen: dict[int, dict] = {}

    def __init__(self, node_data, mapping_data):
        RecordingFactory.seen[node_data["id"]] = json.loads(json.dumps(node_data))
        super().__init__(node_data, mapping_data)


def layer_record(node, mapping_data: list[dict]) -> dict:
    """Everything our parser can be compared on, for one reference LayerNode."""
    entry = MappingFactory(node.name, node.type, mapping_data).mapping_data["name"]
    return {
        "kind": "layer",
        "id": node.id,
        "name": node.name,
        "type": node.type,
        "equation": node.equation.data,
        "loop_sizes": {str(d): s for d, s in node.layer_dim_sizes.items()},
        "relations": [str(r) for r in node.dimension_relations],
        "padding": {str(d): list(p) for d, p in node.padding.data.items()},
        "pr_sizes": {str(d): s for d, s in node.pr_layer_dim_sizes.items()},
        "precision": {str(op): p for op, p in node.operand_precision.data.items()},
        "constant_operands": [str(op) for op in node.constant_operands],
        "input_operand_source": {str(op): s for op, s in node.input_operand_source.items()},
        "mapping_entry": entry,
        "layer_data": RecordingFactory.seen[node.id],
    }


def dummy_record(node: DummyNode) -> dict:
    return {
        "kind": "dummy",
        "id": node.id,
        "name": node.name,
        "type": node.type,
        "operand_source": {str(op): s for op, s in node.input_operand_source.items()},
    }


def model_record(path: Path, mapping_data: list[dict]) -> dict:
    RecordingFactory.seen = {}
    workload = ONNXModelParser(str(path), str(MAPPING)).run()
    nodes = [workload.node_id_to_obj[i] for i in sorted(workload.node_id_to_obj)]
    records = [
        dummy_record(n) if isinstance(n, DummyNode) else layer_record(n, mapping_data)
        for n in nodes
    ]
    no_dummy = workload.get_copy_no_dummy()
    return {
        "nodes": records,
        "edges": sorted([a.id, b.id] for a, b in workload.edges()),
        "edges_without_dummies": sorted([a.id, b.id] for a, b in no_dummy.edges()),
        "topological_order": [n.id for n in nx.topological_sort(workload)],
    }


def to_json(oracle: dict) -> str:
    """Indented JSON, but each node record and each edge list on one line (compact, diff-friendly)."""
    inline: dict[str, str] = {}

    def placeholder(value) -> str:
        key = f"@{len(inline)}@"
        inline[key] = json.dumps(value)
        return key

    for model in oracle["models"].values():
        for key, value in model.items():
            model[key] = [placeholder(n) for n in value] if key == "nodes" else placeholder(value)
    text = json.dumps(oracle, indent=1)
    for key, value in inline.items():
        text = text.replace(f'"{key}"', value)
    return text + "\n"


def main() -> None:
    logging.disable(logging.WARNING)
    conv_parser.LayerNodeFactory = RecordingFactory
    gemm_parser.LayerNodeFactory = RecordingFactory
    mapping_data = WorkloadParserStage.parse_mapping_data(str(MAPPING))
    oracle = {
        "generated_by": "zigzag-dse 3.8.5 (reference), tools/make_onnx_oracle.py",
        "mapping": MAPPING.name,
        "models": {name: model_record(path, mapping_data) for name, path in MODELS.items()},
    }
    OUT.write_text(to_json(oracle))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
