"""A workload: layers (and dependency-only nodes from ONNX) joined by data dependencies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from zigzag.mapping.entry import MappingEntry, select_entry
from zigzag.workload.inference import Inference
from zigzag.workload.layer import DimRelation, Layer, parse_equation

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True, eq=False)
class DummyNode:
    """An ONNX operator that is not evaluated (Relu, Reshape, ...); it only carries dependencies."""

    id: int
    name: str
    type: str
    operand_source: dict[str, int]


class Workload:
    """Layers and dummy nodes as a networkx graph (edges: producer -> consumer); ``inference``: what an LLM
    workload computes (phase, batch, tokens, context), None for other networks."""

    def __init__(self, nodes: list[Layer | DummyNode], inference: Inference | None = None):
        import networkx as nx  # imported here: single-layer jobs build layers, never a Workload

        self.inference = inference
        self.graph = nx.DiGraph()
        for node in nodes:
            self.graph.add_node(node)
        by_id = {node.id: node for node in nodes}
        for node in nodes:
            sources = (
                node.input_operand_source.values()
                if isinstance(node, Layer)
                else node.operand_source.values()
            )
            for src in sources:
                if src != node.id:
                    self.graph.add_edge(by_id[src], node)

    def topological_sort(self) -> list[Layer | DummyNode]:
        import networkx as nx

        return list(nx.topological_sort(self.graph))

    @property
    def layers(self) -> list[Layer]:
        """The evaluated layers in processing (topological) order."""
        return [n for n in self.topological_sort() if isinstance(n, Layer)]

    def without_dummies(self) -> nx.DiGraph:
        """The layer graph with dependency-only nodes bridged and removed."""
        graph = self.graph.copy()
        for node in list(self.graph.nodes):
            if isinstance(node, DummyNode):
                for pred in list(graph.predecessors(node)):
                    for succ in list(graph.successors(node)):
                        graph.add_edge(pred, succ)
        graph.remove_nodes_from([n for n in self.graph.nodes if isinstance(n, DummyNode)])
        return graph

    def __len__(self) -> int:
        return len(self.layers)


def build_layer(spec: dict, mapping: list[MappingEntry]) -> Layer:
    """A Layer from a validated workload-YAML layer dict (or the same dict made from ONNX)."""
    layer_id = spec["id"]
    name = spec.get("name") or f"Layer{layer_id}"
    operator_type = spec["operator_type"]
    loop_sizes = {str(d).upper(): int(s) for d, s in zip(spec["loop_dims"], spec["loop_sizes"])}
    pr_dims = [d.upper() for d in (spec.get("pr_loop_dims") or [])]
    padding = {d: tuple(p) for d, p in zip(pr_dims, spec.get("padding") or [])}
    given_pr = dict(zip(pr_dims, spec.get("pr_loop_sizes") or []))
    entry = select_entry(mapping, name, operator_type)
    entry = _entry_for_layer(entry, loop_sizes)
    return Layer(
        id=layer_id,
        name=name,
        operator_type=operator_type,
        equation=spec["equation"],
        loop_sizes=loop_sizes,
        operand_dims=parse_equation(spec["equation"]),
        relations=tuple(DimRelation.parse(r) for r in spec.get("dimension_relations") or []),
        precision=dict(spec["operand_precision"]),
        operand_source=dict(spec.get("operand_source") or {}),
        mapping=entry,
        given_pr_sizes=given_pr,
        padding=padding,
        operand_roles=dict(spec.get("operand_roles") or {}),
        vector_op=spec.get("vector_op"),
    )


def _entry_for_layer(entry: MappingEntry, loop_sizes: dict[str, int]) -> MappingEntry:
    """Drop temporal-ordering rows naming dims the layer lacks (as ZigZag does at parse time).

    Unlike ZigZag, the wildcard row ``['*', '*']`` is kept: it anchors the rows after it to the
    outermost end of the loop nest, as ZigZag's documentation describes.
    """
    ordering = tuple((d, s) for d, s in entry.temporal_ordering if d in loop_sizes or d == "*")
    if ordering == entry.temporal_ordering:
        return entry
    return MappingEntry(
        name=entry.name,
        spatial_mapping=entry.spatial_mapping,
        memory_operand_links=entry.memory_operand_links,
        spatial_mapping_hint=entry.spatial_mapping_hint,
        temporal_ordering=ordering,
    )
