"""Write layer dicts (e.g. from ``read_onnx``) as a workload YAML file (docs/reference/workload.md).

* Dummy nodes are dropped. An operand whose source is a dummy is re-pointed to the nearest layer
  upstream (following the dummy's sources in order, I before W), so the dependency survives; if no
  layer is upstream (only graph inputs), the operand becomes constant (the layer's own id). A
  dummy that merges two branches can only pass one of them on.
* The workload validator only accepts certain operator types, so ``MatMul`` is written as
  ``Gemm`` and ``QLinearConv`` as ``Conv``. Names are kept, so mapping entries selected by layer
  name still apply; an entry named after the ONNX type (``MatMul``) no longer does.
"""

from __future__ import annotations

from functools import cache

import yaml

from zigzag.io.onnx_layers import LAYER_FIELDS
from zigzag.workload.workload import DummyNode

YAML_OPERATOR_TYPE = {"MatMul": "Gemm", "QLinearConv": "Conv", "Mul": "Add", "Sub": "Add"}


def workload_nodes(workload) -> list[dict]:
    """The node dicts (as ``read_onnx`` gives them) of a parsed :class:`Workload`, in id order."""
    nodes = []
    for node in sorted(workload.graph.nodes, key=lambda n: n.id):
        if isinstance(node, DummyNode):
            nodes.append(
                {
                    "kind": "dummy",
                    "id": node.id,
                    "name": node.name,
                    "type": node.type,
                    "operand_source": dict(node.operand_source),
                }
            )
        else:
            spec = node.to_spec()
            spec.pop("mapping")
            nodes.append({"kind": "layer", **spec})
    return nodes


def workload_to_yaml(workload) -> str:
    """A parsed workload (from ONNX or YAML) as a workload YAML document."""
    return layers_to_yaml(workload_nodes(workload))


def layers_to_yaml(nodes: list[dict]) -> str:
    """The layer nodes as a workload YAML document (a list of layer dicts)."""
    by_id = {node["id"]: node for node in nodes}

    @cache
    def layer_upstream(node_id: int) -> int | None:
        node = by_id[node_id]
        if node["kind"] == "layer":
            return node_id
        found = (layer_upstream(src) for src in node["operand_source"].values())
        return next((f for f in found if f is not None), None)

    def yaml_layer(node: dict) -> dict:
        layer = {field: node[field] for field in LAYER_FIELDS}
        if node.get("vector_op") is None:
            layer["operator_type"] = YAML_OPERATOR_TYPE.get(
                node["operator_type"], node["operator_type"]
            )
        layer |= {key: node[key] for key in ("operand_roles", "vector_op") if node.get(key)}
        sources = {op: layer_upstream(src) for op, src in node["operand_source"].items()}
        layer["operand_source"] = {
            op: node["id"] if src is None else src for op, src in sources.items()
        }
        return layer

    layers = [yaml_layer(node) for node in nodes if node["kind"] == "layer"]
    return yaml.safe_dump(layers, sort_keys=False, default_flow_style=None, width=120)
