"""ONNX model -> layer descriptions (docs/reference/workload.md#onnx-models).

``read_onnx`` returns one dict per ONNX node, in node order (id = position in the graph):

* ``kind: "layer"`` -- the fields of a workload-YAML layer (docs/reference/workload.md), so the same layer
  builder consumes both; ``operator_type`` is the ONNX op type (``Conv``, ``QLinearConv``,
  ``Gemm``, ``MatMul``) or, for the optional extra operators, ``Pooling`` / ``Add`` / ``Sub`` /
  ``Mul``;
* ``kind: "dummy"`` -- an operator that is not evaluated; it only carries dependencies.

Behaviour matches the reference (ZigZag 3.8.5) by default, including its quirk of pairing the
ONNX (height, width) attributes of a convolution the wrong way round: kernel, stride, dilation
and pads index 0 (height) go with the ``x`` loops (``FX``, ``ix=...*ox``, ``IX`` padding) while
``OX`` and the ``IX`` size come from the width axis. Harmless for square convolutions;
``reference_hw_pairing=False`` pairs them correctly.

Differences from the reference: a missing or unknown tensor shape triggers one run of ONNX shape
inference with the model's constant shape computations folded (``zigzag.io.onnx_shapes``; the
reference fails); ``If`` sub-graphs are not unrolled (the ``If`` node is a dummy); input
problems, including precision attributes that are not a single INT, raise ``InputError`` instead
of assertions or ``ValueError``. As in the reference, ``auto_pad`` is ignored (explicit ``pads``
only) and ONNX element types do not set precisions.

``evaluate_all_operators=True`` also turns pooling (MaxPool, AveragePool, GlobalAveragePool)
into ``Pooling`` layers and element-wise Add / Sub / Mul into layers of their own operator type,
written like the hand-made YAML workloads' ``Add`` layers; such operators whose shapes do not fit
those forms stay dummies, and so does index arithmetic (an Add or Mul on shape values, see
docs/reference/onnx-operators.md).
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from pathlib import Path

import networkx as nx
from onnx import ModelProto

from zigzag.errors import InputError
from zigzag.io.onnx_layers import (
    EXTRA_OPERATORS,
    LAYER_OPERATORS,
    _check_sizes,
    _dummy,
    _elementwise,
    _Model,
    _Node,
)
from zigzag.io.onnx_operators import convert as convert_all_operators
from zigzag.io.onnx_reading import load_model

logger = logging.getLogger(__name__)


def read_onnx(
    source: str | Path | ModelProto,
    *,
    evaluate_all_operators: bool = False,
    file: str | None = None,
    reference_hw_pairing: bool = True,
    operators: str = "zigzag",
    causal_blocks: int = 8,
    causal: bool | None = None,
) -> list[dict]:
    """One layer or dummy dict per ONNX node, in node order (see the module docstring).

    ``file`` names the model in error messages (default: the path given). The model is not
    modified. ``operators="all"``: every operator as layers of the operator model instead
    (``zigzag.io.onnx_operators``; layers only, numbered in order), causal attention split into
    ``causal_blocks`` query blocks (0: counted in full; ``causal`` True / False overrides the detection).
    """
    if file is None and not isinstance(source, ModelProto):
        file = str(source)
    model = _Model(load_model(source, file), file, reference_hw_pairing)
    if operators == "all":
        return convert_all_operators(model, file, causal_blocks, causal)
    if operators != "zigzag":
        raise InputError(file, "operators", f"'{operators}' is not one of zigzag, all")
    converters = LAYER_OPERATORS | (EXTRA_OPERATORS if evaluate_all_operators else {})
    producers: dict[str, list[int]] = {}
    result = []
    skipped: Counter[str] = Counter()  # op type -> nodes not evaluated (no converter)
    unfit: Counter[str] = Counter()  # op type -> nodes whose shapes the converter cannot take
    arithmetic: Counter[str] = (
        Counter()
    )  # op type -> index arithmetic on shapes (not tensor operators)
    for node_id, proto in enumerate(model.model.graph.node):
        for tensor in proto.output:
            producers.setdefault(tensor, []).append(node_id)
        preds = [m for tensor in proto.input for m in producers.get(tensor, [])]
        node = _Node(node_id, proto.name or f"Op{node_id}", proto, preds, producers)
        convert = converters.get(proto.op_type)
        if convert is _elementwise and model.is_shape_arithmetic(node):
            arithmetic[proto.op_type] += 1
            result.append(_dummy(node))
            continue
        converted = convert(model, node) if convert else None
        if converted is not None:
            _check_sizes(model, node, converted)
        else:
            (unfit if convert else skipped)[proto.op_type] += 1
        result.append(converted or _dummy(node))
    if not any(node["kind"] == "layer" for node in result):
        raise _nothing_to_evaluate(file, skipped + unfit + arithmetic, evaluate_all_operators)
    _warn_not_evaluated(file or "<onnx model>", skipped, unfit, evaluate_all_operators)
    for op_type, count in arithmetic.items():
        logger.info(
            "%s: %d %s node%s on shape values (index arithmetic, not tensor operators) kept as "
            "dependencies",
            file or "<onnx model>",
            count,
            op_type,
            "s" * (count > 1),
        )
    return result


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"{count} {op_type}" for op_type, count in counts.items()) or "no nodes"


def _nothing_to_evaluate(file: str | None, found: Counter[str], all_operators: bool) -> InputError:
    evaluated = list(LAYER_OPERATORS) + (list(EXTRA_OPERATORS) if all_operators else [])
    extra = (
        "" if all_operators else f" (with evaluate_all_operators also {', '.join(EXTRA_OPERATORS)})"
    )
    return InputError(
        file,
        None,
        f"no operator of the model can be evaluated (it has {_counted(found)}); the evaluated operators are "
        f"{', '.join(evaluated)}{extra}: give a model with at least one of them",
    )


def _warn_not_evaluated(
    file: str, skipped: Counter[str], unfit: Counter[str], all_operators: bool
) -> None:
    """One warning line per operator type kept only as a dependency, with its count."""
    for op_type, count in skipped.items():
        why = (
            "--evaluate-all-operators evaluates them"
            if op_type in EXTRA_OPERATORS and not all_operators
            else "no cost model; kept as dependencies"
        )
        logger.warning(
            "%s: %d %s node%s not evaluated (%s)", file, count, op_type, "s" * (count > 1), why
        )
    for op_type, count in unfit.items():
        logger.warning(
            "%s: %d %s node%s not evaluated (shapes not supported; kept as dependencies)",
            file,
            count,
            op_type,
            "s" * (count > 1),
        )


def dependency_edges(nodes: list[dict]) -> list[tuple[int, int]]:
    """Edges producer -> consumer, one per distinct non-constant operand source (docs/reference/workload.md#onnx-models).

    They come in the reference's insertion order, so a networkx topological sort of a graph built
    from the nodes (in order) and these edges visits the nodes in the reference's order.
    """
    edges = {
        (src, n["id"]): None
        for n in nodes
        for src in n["operand_source"].values()
        if src != n["id"]
    }
    return list(edges)


def without_dummies(
    nodes: list[dict], edges: list[tuple[int, int]]
) -> tuple[list[dict], list[tuple[int, int]]]:
    """The layer nodes and their edges, with every dummy bridged (its producers joined to its consumers)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(n["id"] for n in nodes)
    graph.add_edges_from(edges)
    dummies = [n["id"] for n in nodes if n["kind"] == "dummy"]
    for dummy in dummies:
        graph.add_edges_from(
            itertools.product(list(graph.predecessors(dummy)), list(graph.successors(dummy)))
        )
    graph.remove_nodes_from(dummies)
    return [n for n in nodes if n["kind"] == "layer"], list(graph.edges)
