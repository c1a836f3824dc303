"""The workflow's parse rules: input files -> normalised JSON, read by the later rules.

* ``parse_workload``: a workload (ONNX or YAML) with its mapping file -> every node in
  processing order (layers as workload-YAML dicts with their chosen mapping entry, and the
  dependency-only ONNX nodes), the validated mapping entries and the inputs' SHA-256.
  Done once per distinct (workload, mapping, evaluate_all_operators), shared by every
  experiment using them.
* ``parse_accelerator``: an accelerator file -> its validated, normalised dict. Done once per
  accelerator file.

Bad input stops here with the one-line error of the loaders, before any layer job exists.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from zigzag.io.sealed import read_step_file, write_sealed
from zigzag.mapping.entry import MappingEntry
from zigzag.notes import collected_warnings
from zigzag.workload.inference import Inference
from zigzag.workload.layer import Layer
from zigzag.workload.workload import DummyNode, Workload, build_layer

#: changes when the parsed files' layout changes
PARSED_FORMAT = 1


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _source(path: str | Path) -> dict:
    return {"path": str(path), "sha256": file_digest(path)}


def parse_workload(
    workload: str,
    mapping: str,
    out_path: str | Path,
    *,
    evaluate_all_operators: bool = False,
    operators: str = "zigzag",
    causal_blocks: int = 8,
) -> dict:
    """Parse and validate a workload with its mapping; write the normalised workload file."""
    from zigzag.io.loaders import load_workload, validate_mapping
    from zigzag.io.yaml_files import load_yaml

    mapping_data = validate_mapping(load_yaml(mapping), str(mapping))
    entries = [MappingEntry.from_dict(e) for e in mapping_data]
    with collected_warnings() as notes:
        parsed = load_workload(
            workload,
            entries,
            evaluate_all_operators=evaluate_all_operators,
            mapping_file=str(mapping),
            operators=operators,
            causal_blocks=causal_blocks,
        )
    layers = parsed.layers
    nodes = [
        {"kind": "layer", **node.to_spec()}
        if isinstance(node, Layer)
        else {
            "kind": "dummy",
            "id": node.id,
            "name": node.name,
            "type": node.type,
            "operand_source": dict(node.operand_source),
        }
        for node in parsed.graph.nodes
    ]
    document = {
        "format": PARSED_FORMAT,
        "workload": _source(workload),
        "mapping": _source(mapping),
        "evaluate_all_operators": evaluate_all_operators,
        **(
            {"operators": operators, "causal_blocks": causal_blocks}
            if operators != "zigzag"
            else {}
        ),
        "mapping_entries": mapping_data,
        "processing_order": [layer.id for layer in layers],
        "nodes": nodes,
        "notes": notes,  # the warnings about these inputs, shown with the experiments' results
    }
    if (
        parsed.inference is not None
    ):  # an LLM step (docs/reference/workload.md#llm-workloads-from-a-model-configuration)
        document["inference"] = parsed.inference.to_dict()
    write_sealed(out_path, document)
    return document


def parse_accelerator(accelerator: str, out_path: str | Path) -> dict:
    """Parse and validate an accelerator file; write its normalised form."""
    from zigzag.io.loaders import read_accelerator

    data = read_accelerator(accelerator)
    document = {"format": PARSED_FORMAT, "accelerator": _source(accelerator), "data": data}
    write_sealed(out_path, document)
    return document


def read_parsed(path: str | Path) -> dict:
    """A file written by :func:`parse_workload` or :func:`parse_accelerator`, checked."""
    return read_step_file(path)


def parsed_layers(document: dict) -> list:
    """The layers of a parsed workload, in processing order."""
    by_id = {node["id"]: node for node in document["nodes"] if node["kind"] == "layer"}
    return [
        build_layer(by_id[i], [MappingEntry.from_dict(by_id[i]["mapping"])])
        for i in document["processing_order"]
    ]


def parsed_workload(document: dict):
    """The parsed workload as a :class:`Workload` (layers, dependency-only nodes, inference metadata)."""
    layers = {layer.id: layer for layer in parsed_layers(document)}
    nodes = [
        layers[n["id"]]
        if n["kind"] == "layer"
        else DummyNode(n["id"], n["name"], n["type"], dict(n["operand_source"]))
        for n in document["nodes"]
    ]
    inference = document.get("inference")
    return Workload(nodes, Inference.from_dict(inference) if inference else None)
