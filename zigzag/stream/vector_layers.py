"""Operators beyond matrix products on the multi-core floor: computation layers, data-moving nodes.

When some core of the accelerator declares a vector unit (``vector_unit:`` in its core file,
docs/models/operators.md), the element-wise, transcendental and reduction operators that Stream
bypasses become layers with an operation class (``Layer.vector_op``), costed on that core by the
single-core operator model; their classes are the single-core importer's
(``zigzag.io.onnx_operators``). A layer whose mapping entry is the default one goes to the first
core whose vector unit runs its class; a mapping entry that puts it on a core that cannot run it is
a one-line error. Operators of rank above 4, or broadcasting their produced input, stay bypassed
(:func:`bypassed_operators` names those in the data path). Data-moving operators (Slice, Split,
Expand, ...) are kept as nodes run on the element maps (:func:`moving_node`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from zigzag.io.onnx_operators import BINARY, REDUCE, UNARY

#: classes of Stream's own element-wise layers and of the operators it bypasses
CLASSES = {**BINARY, **UNARY, **REDUCE, "Relu": "max", "Silu": "sigmoid", "Gelu": "erf"}
#: the classes of the four Softmax layers (row max, exp(x - max), row sum, division)
SOFTMAX_CLASSES = {"max": "reduce_max", "exp": "exp", "sum": "reduce_sum", "div": "div"}
DIMS = {1: ("K",), 2: ("D", "K"), 3: ("B", "D", "K"), 4: ("B", "H", "D", "K")}


@dataclass(frozen=True)
class PropagationNode:
    """A node that computes nothing: it only forwards (and maybe reshapes) its input's data.

    ``kind`` is ``flatten`` (attr ``axis``), ``reshape`` (``shape``), ``transpose`` (``perm``),
    ``gather`` (``axis``, ``indices``), ``concat`` (``axis``, ``shapes`` of all inputs, ``inputs``
    = producer id per input or None for a constant), ``onnx`` (a data-moving ONNX node run on the
    element map: ``proto``, constant input ``values``, ``output_for`` = the output each successor
    reads) or ``dummy``.
    """

    id: int
    name: str
    op_type: str
    kind: str
    sources: tuple[int, ...]
    attrs: dict = field(default_factory=dict)


def vector_layer(parser, proto, node_id: int, preds: list[int]):
    """The layer of ``proto`` with its operation class, or None to leave it bypassed."""
    cls = CLASSES.get(proto.op_type)
    if cls is None or not preds or not any(cls in classes for classes in parser.vector_classes.values()):
        return None
    produced = [t for t in proto.input if _carries_data(parser, t)]
    if not produced:
        return None
    out = parser.shape(proto, node_id, proto.output[0])
    if proto.op_type in REDUCE:
        return _reduction(parser, proto, node_id, produced, cls)
    if not 1 <= len(out) <= 4:
        return None
    dims = DIMS[len(out)]
    full = _index(dims)
    shapes = {t: parser.shape(proto, node_id, t) for t in produced}
    main = next((t for t in produced if shapes[t] == out), None)
    if main is None:
        return None  # the produced data is broadcast: left bypassed
    other = next((t for t in produced if t != main), None)
    if other is None:  # a constant second input (a weight, a scale): indexed by the dims it spans
        constant = next((t for t in proto.input if t and t != main and parser.shapes.table.get(t)), None)
        spans = _spanned(dims, out, parser.shapes.table[constant]) if constant else ()
        w_index, sources = _index(spans) or "[]", {"I": parser.producer[main], "W": node_id}
    else:
        w_index = _index(_spanned(dims, out, shapes[other]))
        sources = {"I": parser.producer[main], "W": parser.producer[other]}
    return parser.make_layer(
        proto, node_id, proto.op_type, proto.op_type.lower(), equation=f"O{full}+=I{full}*W{w_index}",
        loop_sizes=dict(zip(dims, out)), precision=parser.precision(proto, node_id, preds[:2]), source=sources,
        vector_op=cls,
    )


def _reduction(parser, proto, node_id: int, produced: list[str], cls: str):
    """A reduction over the last axis: ``O[kept] += I[kept][c]``; other axes stay bypassed."""
    shape = parser.shape(proto, node_id, proto.input[0])
    if proto.input[0] not in produced or not 2 <= len(shape) <= 4:
        return None
    axes = parser.attrs(proto).get("axes")
    if axes is None and len(proto.input) > 1 and proto.input[1]:
        parser.shapes.complete()
        folded = parser.shapes.constants.get(proto.input[1])
        axes = None if folded is None else [int(a) for a in folded.reshape(-1)]
    if axes is None or [a % len(shape) for a in axes] != [len(shape) - 1]:
        return None
    kept = DIMS[len(shape)][:-1] if len(shape) > 1 else ()
    dims = kept + ("C",)
    return parser.make_layer(
        proto, node_id, proto.op_type, proto.op_type.lower(),
        equation=f"O{_index(kept)}+=I{_index(dims)}*W[]", loop_sizes=dict(zip(dims, shape)),
        precision=parser.precision(proto, node_id, [parser.producer[proto.input[0]]]),
        source={"I": parser.producer[proto.input[0]], "W": node_id}, vector_op=cls,
    )


#: LayerNormalization as its opset-14 pieces: (part, class, equation form, I source, W source), sources
#: as offsets from the first part's id (None: the node's produced input; "own": a constant)
LAYER_NORM = (
    ("mean", "reduce_mean", "reduce", None, "own"), ("sub", "sub", "row", None, 0),
    ("pow", "pow", "scalar", 1, "own"), ("var", "reduce_mean", "reduce", 2, "own"),
    ("eps", "add", "row_scalar", 3, "own"), ("sqrt", "sqrt", "row_scalar", 4, "own"),
    ("div", "div", "row", 1, 5), ("gamma", "mul", "feature", 6, "own"), ("beta", "add", "feature", 7, "own"),
)


def layer_norm_layers(parser, proto, node_id: int, preds: list[int]):
    """A LayerNormalization over the last axis as the nine layers of its opset-14 export (the same
    layers, in the same order, as the single-core importer gives), or None to leave it bypassed."""
    shape = parser.shape(proto, node_id, proto.input[0])
    axis = parser.attrs(proto).get("axis", -1)
    declared = set().union(*parser.vector_classes.values())
    if (proto.input[0] not in parser.producer or not 2 <= len(shape) <= 4 or axis % len(shape) != len(shape) - 1
            or not {part[1] for part in LAYER_NORM} <= declared):
        return None
    dims = DIMS[len(shape)]
    row, full = _index(dims[:-1]), _index(dims)
    reduced = dims[:-1] + ("C",)
    forms = {
        "reduce": (f"O{row}+=I{_index(reduced)}*W[]", reduced), "row": (f"O{full}+=I{full}*W{row}", dims),
        "scalar": (f"O{full}+=I{full}*W[]", dims), "feature": (f"O{full}+=I{full}*W[{dims[-1].lower()}]", dims),
        "row_scalar": (f"O{full}+=I{full}*W[]", dims),  # on the kept (size 1) last axis, as exported
    }
    precision = parser.precision(proto, node_id, preds[:1])
    layers = []
    for offset, (part, cls, form, i_src, w_src) in enumerate(LAYER_NORM):
        equation, loops = forms[form]
        sizes = dict(zip(loops, shape[:-1] + [1] if form == "row_scalar" else shape))
        source = {"I": parser.producer[proto.input[0]] if i_src is None else node_id + i_src,
                  "W": node_id + offset if w_src == "own" else node_id + w_src}
        layers.append(parser.make_layer(
            proto, node_id + offset, proto.op_type, part, equation=equation,
            loop_sizes=sizes, precision=precision, source=source, name=f"{proto.name}-{part}/", vector_op=cls))
    return layers


def cache_append(parser, proto, node_id: int, preds: list[int]):
    """A Concat of past keys or values (a graph input: the KV cache) with the new token's as a
    ``copy`` layer: its constant operand ``W`` is the cache, read from where the accelerator keeps
    it (DRAM), ``I`` the new data; None unless it is such a Concat and some core runs ``copy``."""
    produced = [t for t in proto.input if _carries_data(parser, t)]
    out = parser.shape(proto, node_id, proto.output[0])
    if (len(produced) != 1 or not any(_from_graph_input(parser, t) for t in proto.input) or not 1 <= len(out) <= 4
            or not any("copy" in classes for classes in parser.vector_classes.values())):
        return None
    full = _index(DIMS[len(out)])
    return parser.make_layer(
        proto, node_id, proto.op_type, "cache_append", equation=f"O{full}+=I{full}*W{full}",
        loop_sizes=dict(zip(DIMS[len(out)], out)), precision=parser.precision(proto, node_id, preds[:1]),
        source={"I": parser.producer[produced[0]], "W": node_id}, vector_op="copy",
    )


def placed_entry(parser, proto, node_id: int, entry, vector_op: str, loops: dict[str, int]):
    """The mapping entry of a vector layer: the default entry moves it, whole, to the first core
    whose vector unit runs ``vector_op``; an explicit entry must name only such cores."""
    able = sorted(core for core, classes in parser.vector_classes.items() if vector_op in classes)
    if entry.name == "default" and able:
        dim, pieces = _fitting_pieces(loops, parser.vector_memory_bits.get(able[0]))
        return replace(entry, core_allocation=(able[0],) * pieces, core_allocation_is_fixed=True,
                       inter_core_tiling=((dim, pieces),), group_allocation=None)
    unable = [core for core in entry.core_allocation if core not in able]
    if unable:
        raise parser.error(proto, node_id, f"mapping entry '{entry.name}' puts this '{vector_op}' layer on core(s) "
                                           f"{unable}, whose vector unit cannot run it; use core(s) {able or 'none'} "
                                           "or declare the class in that core's vector_unit")
    return entry


def _fitting_pieces(loops: dict[str, int], memory_bits: int | None) -> tuple[str, int]:
    """The loop and the number of pieces (groups, all on the one core) a vector layer is cut into
    so that a piece's operands (at most three tensors of all the loops, 16 bits an element) take at
    most half of the core's memory: heads, else columns, batch, rows."""
    dim = next((d for d in ("H", "K", "B", "D") if loops.get(d, 1) > 1), next(iter(loops)))
    if not memory_bits:
        return dim, 1
    pieces = math.ceil(3 * 16 * math.prod(loops.values()) / (memory_bits / 2))
    size = loops[dim]
    if pieces <= 1:
        return dim, 1
    return dim, next((f for f in range(pieces, size + 1) if size % f == 0), size)


def _from_graph_input(parser, tensor: str, depth: int = 4) -> bool:
    """Is ``tensor`` a graph input (not a weight), or data moved from one without computation?"""
    model = parser.model
    if tensor in {i.name for i in model.graph.input} - {i.name for i in model.graph.initializer}:
        return True
    node = next((n for n in model.graph.node if tensor in n.output), None)
    return (depth > 0 and node is not None and node.op_type in ("Concat", "Identity", "Reshape", "Cast")
            and len([t for t in node.input if t]) >= 1 and _from_graph_input(parser, node.input[0], depth - 1))


def _carries_data(parser, tensor: str) -> bool:
    """Does ``tensor`` come from a layer (possibly through other nodes), not only from constants
    (an Identity of a weight, mask arithmetic on the graph inputs)?"""
    source = parser.producer.get(tensor)
    if source is None:
        return False
    node = parser.nodes[source]
    return not hasattr(node, "kind") or bool(node.sources)


#: Bypassed operators that do no work (type changes, copies; IsNaN: the NaN guard exporters put
#: after an attention's Softmax): not named as uncosted.
NO_WORK_OPS = frozenset({"Identity", "Cast", "Dropout", "CastLike", "IsNaN"})


def bypassed_operators(workload) -> Counter:
    """Operator types of the bypassed (dummy) nodes that data produced by a layer flows through."""
    reached = set()
    for node_id, node in workload.nodes.items():  # ids are in topological order
        if not hasattr(node, "kind") or any(src in reached for src in node.sources):
            reached.add(node_id)
    return Counter(node.op_type for node_id, node in workload.nodes.items()
                   if node_id in reached and getattr(node, "kind", None) == "dummy"
                   and node.op_type not in NO_WORK_OPS)


def moving_node(parser, proto, node_id: int, preds: list[int]):
    """A node moving its first input's data (Slice, Split, Expand, ...), its other inputs constants."""
    parser.shapes.complete()
    values = {}
    for tensor in proto.input[1:]:
        if not tensor:
            continue
        if tensor not in parser.shapes.constants:
            raise parser.error(proto, node_id, f"input '{tensor}' is not a constant; {proto.op_type} can only "
                                             "move data with constant indices, shapes and sizes")
        values[tensor] = parser.shapes.constants[tensor]
    opsets = {entry.domain or "": entry.version for entry in parser.model.opset_import}
    return PropagationNode(node_id, proto.name, proto.op_type, "onnx", tuple(preds[:1]),
                           {"proto": proto, "values": values, "opsets": opsets, "output_for": {}})


def _index(dims) -> str:
    return "".join(f"[{d.lower()}]" for d in dims)


def _spanned(dims: tuple[str, ...], out: list[int], shape: list[int]) -> tuple[str, ...]:
    """The output dims a right-aligned broadcast input spans (its size equals the output's)."""
    aligned = [None] * (len(out) - len(shape)) + list(shape)
    return tuple(d for d, o, s in zip(dims, out, aligned) if s is not None and s == o)
