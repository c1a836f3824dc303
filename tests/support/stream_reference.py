"""Cost-table inputs rebuilt from the Stream reference dumps (tests and benchmarks only).

Each ``cost_lut`` entry of a dump names its representative CN, its loop sizes and its core; the
layer facts Stream adds (equation, precisions, strides, input sizes; docs/models/multi-core.md#onnx-workloads) come from
the case's ONNX file, the in-edge bits from the dump's edges.
"""

from __future__ import annotations

import json
from pathlib import Path

from support import DATA
from zigzag.multicore.cost_table import NodeKey

STREAM_DATA = DATA / "reference" / "stream"

_EQUATIONS = {
    "conv": "O[b][g][k][oy][ox]+=W[k][c][fy][fx]*I[b][g][c][iy][ix]",
    "conv_grouped": "O[b][g][k][oy][ox]+=W[g][c][fy][fx]*I[b][g][c][iy][ix]",
    "pooling": "O[b][k][oy][ox]+=W[fy][fx]*I[b][k][iy][ix]",
    "gemm": "O[d][k]+=I[d][c]*W[c][k]",
}
_SIMD_DIMS = {1: "k", 2: "d k", 3: "b d k", 4: "b h d k"}


def load_dump(case: str) -> dict:
    return json.loads((STREAM_DATA / f"{case}.json").read_text())


def onnx_facts(path: Path) -> dict[str, dict]:
    """Per ONNX node name: attributes and the shapes of its first input and output."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    shapes = {}
    for info in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        shapes[info.name] = [d.dim_value for d in info.type.tensor_type.shape.dim]
    for init in model.graph.initializer:
        shapes.setdefault(init.name, list(init.dims))
    facts = {}
    for node in model.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        facts[node.name] = {
            "attrs": attrs,
            "input": shapes.get(node.input[0]) if node.input else None,
            "inputs": len(node.input),
        }
    return facts


def _layer_facts(op_type: str, facts: dict, sizes: dict[str, int]) -> tuple[str, dict, tuple, dict]:
    """(equation, precision, relations, pr sizes) of a Stream layer (docs/models/multi-core.md#onnx-workloads)."""
    attrs, ia = facts["attrs"], facts["input"]
    if op_type in ("conv", "pooling"):
        strides = list(attrs.get("strides", [1, 1]))
        dilations = list(attrs.get("dilations", [1, 1]))
        relations = (
            f"ix={strides[0]}*ox+{dilations[0]}*fx",
            f"iy={strides[1]}*oy+{dilations[1]}*fy",
        )
        if op_type == "conv":
            equation = _EQUATIONS["conv" if attrs.get("group", 1) == 1 else "conv_grouped"]
            precision = {"W": 8, "I": 8, "O": 16, "O_final": 8}
            pr_sizes = {"IX": ia[3], "IY": ia[2]}
        else:
            equation = _EQUATIONS["pooling"]
            precision = {"O": 8, "O_final": 8, "W": 0, "I": 8}
            pr_sizes = {"IX": ia[2], "IY": ia[3]}
        return equation, precision, relations, pr_sizes
    if op_type == "gemm":
        return _EQUATIONS["gemm"], {"W": 8, "I": 8, "O_final": 8, "O": 16}, (), {}
    dims = " ".join(f"[{d}]" for d in _SIMD_DIMS[len(sizes)].split())
    weight = dims if facts["inputs"] == 2 and op_type in ("add", "mul") else ""
    equation = f"O{dims}+=I{dims}*W{weight}"
    return equation, {"W": 8, "I": 8, "O_final": 8, "O": 16}, (), {}


def node_key(entry: dict, facts: dict[str, dict], edge_bits: dict[str, int]) -> NodeKey:
    """The node key of a reference cost entry (its loop sizes, name and op type)."""
    sizes = {d: int(s) for d, s in entry["loop_dim_sizes"].items()}
    equation, precision, relations, pr_sizes = _layer_facts(
        entry["op_type"], facts[entry["name"]], sizes
    )
    return NodeKey(
        equation=equation,
        loop_sizes=tuple(sizes.items()),
        precision=tuple(precision.items()),
        relations=relations,
        pr_sizes=tuple(pr_sizes.items()),
        edge_bits=tuple(sorted(edge_bits.items())),
    )


def node_keys(case: str) -> list[tuple[dict, NodeKey]]:
    """(dump cost entry, its node key) for every ``cost_lut`` entry of a dump."""
    dump = load_dump(case)
    facts = onnx_facts(STREAM_DATA / dump["meta"]["inputs"]["workload"])
    edge_bits: dict[tuple, dict[str, int]] = {}
    for edge in dump["edges"]:
        if "operand" in edge:
            bits = edge_bits.setdefault(tuple(edge["dst"]), {})
            bits[edge["operand"]] = bits.get(edge["operand"], 0) + edge["bits"]
    return [
        (entry, node_key(entry, facts, edge_bits.get(tuple(entry["node"]), {})))
        for entry in dump["cost_lut"]
    ]
