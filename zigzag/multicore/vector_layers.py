"""Operators beyond matrix products on the multi-core floor: computation layers, data-moving nodes.

When some core of the accelerator declares a vector unit (``vector_unit:`` in its core file,
docs/models/operators.md), the element-wise, transcendental and reduction operators that Stream
bypasses become layers with an operation class (``Layer.vector_op``), costed on that core by the
single-core operator model; their classes are the single-core importer's
(``zigzag.io.onnx_operators``). A layer whose mapping entry is the default one goes to the first
core whose vector unit runs its class; a mapping entry that puts it on a core that cannot run it is
a one-line error. An operator the floor cannot cost (rank above 4, several reduction axes,
broadcasting its produced input, a class no vector unit runs) is then a one-line error too
(:func:`refuse_bypass`); without any vector unit they stay bypassed as in Stream
(:func:`bypassed_operators` names those in the data path). Data-moving operators (Slice, Split,
Expand, ...) are kept as nodes run on the element maps (:func:`moving_node`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from zigzag.errors import InputError
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
    if (
        cls is None
        or not preds
        or not any(cls in classes for classes in parser.vector_classes.values())
    ):
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
        constant = next(
            (t for t in proto.input if t and t != main and parser.shapes.table.get(t)), None
        )
        spans = _spanned(dims, out, parser.shapes.table[constant]) if constant else ()
        w_index, sources = _index(spans) or "[]", {"I": parser.producer[main], "W": node_id}
    else:
        w_index = _index(_spanned(dims, out, shapes[other]))
        sources = {"I": parser.producer[main], "W": parser.producer[other]}
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        proto.op_type.lower(),
        equation=f"O{full}+=I{full}*W{w_index}",
        loop_sizes=dict(zip(dims, out)),
        precision=parser.precision(proto, node_id, preds[:2]),
        source=sources,
        vector_op=cls,
    )


def _reduction(parser, proto, node_id: int, produced: list[str], cls: str):
    """A reduction over one axis (the last, or another: a sum over experts): ``O[kept] +=
    I[kept with c at the axis]``; None to leave it bypassed (several axes, a rank above 4)."""
    shape = parser.shape(proto, node_id, proto.input[0])
    if proto.input[0] not in produced or not 2 <= len(shape) <= 4:
        return None
    axes = parser.attrs(proto).get("axes")
    if axes is None and len(proto.input) > 1 and proto.input[1]:
        parser.shapes.complete()
        folded = parser.shapes.constants.get(proto.input[1])
        axes = None if folded is None else [int(a) for a in folded.reshape(-1)]
    if axes is None or len(axes) != 1:
        return None
    axis = axes[0] % len(shape)
    dims = tuple("C" if i == axis else d for i, d in enumerate(DIMS[len(shape)]))
    kept = tuple(d for d in dims if d != "C")
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        proto.op_type.lower(),
        equation=f"O{_index(kept)}+=I{_index(dims)}*W[]",
        loop_sizes=dict(zip(dims, shape)),
        precision=parser.precision(proto, node_id, [parser.producer[proto.input[0]]]),
        source={"I": parser.producer[proto.input[0]], "W": node_id},
        vector_op=cls,
    )


def top_k(parser, proto, node_id: int, preds: list[int]):
    """TopK over the last axis (a mixture of experts' routing: the k largest of E scores) as k
    passes of a row maximum, class ``reduce_max``: ``O[rows][k] += I[rows][c]`` (C = the axis);
    its two outputs (values, indices) are the layer's. A one-line error when no core runs
    ``reduce_max`` or the TopK is not over the last axis of a rank-2..4 tensor."""
    shape = parser.shape(proto, node_id, proto.input[0])
    axis = parser.attrs(proto).get("axis", -1)
    parser.shapes.complete()
    k = parser.shapes.constants.get(proto.input[1]) if len(proto.input) > 1 else None
    declared = set().union(*parser.vector_classes.values())
    if (
        "reduce_max" not in declared
        or k is None
        or not 2 <= len(shape) <= 4
        or axis % len(shape) != len(shape) - 1
    ):
        raise parser.error(
            proto,
            node_id,
            "TopK has no cost on this accelerator: it needs a constant k, a "
            "rank-2..4 input, the last axis, and a core whose vector unit runs "
            "reduce_max; declare it or remove the TopK",
        )
    rows = DIMS[len(shape)][:-1]
    rows = tuple("D" if d == "K" else d for d in rows)
    loops = dict(zip(rows, shape[:-1])) | {"K": int(k.reshape(-1)[0]), "C": shape[-1]}
    return parser.make_layer(
        proto,
        node_id,
        proto.op_type,
        "topk",
        equation=f"O{_index(rows + ('K',))}+=I{_index(rows + ('C',))}*W[]",
        loop_sizes=loops,
        precision=parser.precision(proto, node_id, preds[:1]),
        source={"I": parser.producer[proto.input[0]], "W": node_id},
        vector_op="reduce_max",
    )


#: LayerNormalization as its opset-14 pieces: (part, class, equation form, I source, W source), sources
#: as offsets from the first part's id (None: the node's produced input; "own": a constant)
LAYER_NORM = (
    ("mean", "reduce_mean", "reduce", None, "own"),
    ("sub", "sub", "row", None, 0),
    ("pow", "pow", "scalar", 1, "own"),
    ("var", "reduce_mean", "reduce", 2, "own"),
    ("eps", "add", "row_scalar", 3, "own"),
    ("sqrt", "sqrt", "row_scalar", 4, "own"),
    ("div", "div", "row", 1, 5),
    ("gamma", "mul", "feature", 6, "own"),
    ("beta", "add", "feature", 7, "own"),
)


def layer_norm_layers(parser, proto, node_id: int, preds: list[int]):
    """A LayerNormalization over the last axis as the nine layers of its opset-14 export (the same
    layers, in the same order, as the single-core importer gives), or None to leave it bypassed."""
    shape = parser.shape(proto, node_id, proto.input[0])
    axis = parser.attrs(proto).get("axis", -1)
    declared = set().union(*parser.vector_classes.values())
    if (
        proto.input[0] not in parser.producer
        or not 2 <= len(shape) <= 4
        or axis % len(shape) != len(shape) - 1
        or not {part[1] for part in LAYER_NORM} <= declared
    ):
        return None
    dims = DIMS[len(shape)]
    row, full = _index(dims[:-1]), _index(dims)
    reduced = dims[:-1] + ("C",)
    forms = {
        "reduce": (f"O{row}+=I{_index(reduced)}*W[]", reduced),
        "row": (f"O{full}+=I{full}*W{row}", dims),
        "scalar": (f"O{full}+=I{full}*W[]", dims),
        "feature": (f"O{full}+=I{full}*W[{dims[-1].lower()}]", dims),
        "row_scalar": (
            f"O{full}+=I{full}*W[]",
            dims,
        ),  # on the kept (size 1) last axis, as exported
    }
    precision = parser.precision(proto, node_id, preds[:1])
    layers = []
    for offset, (part, cls, form, i_src, w_src) in enumerate(LAYER_NORM):
        equation, loops = forms[form]
        sizes = dict(zip(loops, shape[:-1] + [1] if form == "row_scalar" else shape))
        source = {
            "I": parser.producer[proto.input[0]] if i_src is None else node_id + i_src,
            "W": node_id + offset if w_src == "own" else node_id + w_src,
        }
        layers.append(
            parser.make_layer(
                proto,
                node_id + offset,
                proto.op_type,
                part,
                equation=equation,
                loop_sizes=sizes,
                precision=precision,
                source=source,
                name=f"{proto.name}-{part}/",
                vector_op=cls,
            )
        )
    return layers


def cache_append(parser, proto, node_id: int, preds: list[int]):
    """A decode step's KV-cache append: a Concat of past keys or values (a graph input, maybe
    sliced to a sliding window) with the new token's. The Concat stays a propagation node, and
    ``parser.caches`` records how many elements of its output are the past cache: the layer that
    reads it (:func:`cache_operands`) fetches them from where the cache lives, while the new token
    comes from the layer producing it (a dependency). With a core whose vector unit runs ``copy``
    the append is also a ``copy`` layer (type ``cache_append``) over the new token's elements only,
    read from its producer and, nobody consuming it, written to the off-chip memory (the cache).
    None unless it is such a Concat."""
    produced = [t for t in proto.input if _carries_data(parser, t)]
    past = [t for t in proto.input if t not in produced and _from_graph_input(parser, t)]
    if (
        len(produced) != 1
        or len(past) != 1
        or len(proto.input) != 2
        or "axis" not in parser.attrs(proto)
    ):
        return None
    new = parser.shape(proto, node_id, produced[0])
    made = []
    if any("copy" in classes for classes in parser.vector_classes.values()) and 1 <= len(new) <= 4:
        full = _index(DIMS[len(new)])
        made.append(
            parser.make_layer(
                proto,
                node_id,
                proto.op_type,
                "cache_append",
                equation=f"O{full}+=I{full}*W[]",
                loop_sizes=dict(zip(DIMS[len(new)], new)),
                precision=parser.precision(proto, node_id, preds[:1]),
                source={"I": parser.producer[produced[0]], "W": node_id},
                name=f"{proto.name}-append/",
                vector_op="copy",
            )
        )
    join_id = node_id + len(made)
    inputs = [parser.producer.get(t) for t in proto.input]
    made.append(
        PropagationNode(
            join_id,
            proto.name,
            proto.op_type,
            "concat",
            tuple(preds),
            {
                "axis": parser.attrs(proto)["axis"],
                "inputs": inputs,
                "shapes": [parser.shape(proto, node_id, t) for t in proto.input],
            },
        )
    )
    axis = parser.attrs(proto)["axis"] % len(new)
    past_shape = parser.shape(proto, node_id, past[0])
    parser.caches[join_id] = (math.prod(past_shape), past_shape[axis], past_shape[axis] + new[axis])
    return made


#: nodes the KV cache's data passes through, unchanged in amount, on its way to the layer reading it
_CACHE_PATH = ("concat", "transpose", "reshape", "flatten", "onnx", "dummy")


def cache_operands(
    nodes: dict, caches: dict[int, tuple[int, int, int]], layer
) -> tuple[tuple, ...]:
    """(operand, share, token dim, past tokens, tokens) of ``layer``'s operands whose data comes, through
    data-moving nodes only, from a KV-cache append (``caches``: append node id -> (elements of past
    cache, past tokens, tokens after the append)). ``share``: the past cache's elements over the
    operand's; ``token dim``: the operand's one loop dim as long as the tokens after the append
    (its first ``past tokens`` are the cache), or "" when none or several are."""
    found = []
    for op, source in layer.input_operand_source.items():
        node, seen = nodes.get(source), 0
        while node is not None and getattr(node, "kind", None) in _CACHE_PATH and seen < 16:
            if node.id in caches:
                elements, past, total = caches[node.id]
                size = layer.layer.operand_size_elem(op)
                dims = [d for d in layer.operand_dims[op] if layer.sizes.get(d) == total]
                found.append(
                    (op, min(1.0, elements / size), dims[0] if len(dims) == 1 else "", past, total)
                )
                break
            node, seen = (nodes.get(node.sources[0]) if node.sources else None), seen + 1
    return tuple(found)


def expert_operands(nodes: dict, gathers: dict[int, float], layer) -> tuple[tuple, ...]:
    """(operand, share, "", 0, 0) of ``layer``'s operands whose data comes, through data-moving nodes only,
    from a Gather of expert weights per (token, expert) pair (``gathers``: Gather node id -> the distinct
    experts over the pairs, ``zigzag.io.onnx_kernels.gathered_experts``): fetched where the weights live,
    each distinct expert once (the share of the operand's elements), as the single-core import reads them."""
    found = []
    for op, source in layer.input_operand_source.items():
        node, seen = nodes.get(source), 0
        while node is not None and getattr(node, "kind", None) in _EXPERT_PATH and seen < 16:
            if node.id in gathers:
                found.append((op, gathers[node.id], "", 0, 0))
                break
            node, seen = (nodes.get(node.sources[0]) if node.sources else None), seen + 1
    return tuple(found)


#: nodes gathered expert weights pass through on their way to the product reading them
_EXPERT_PATH = ("gather", "transpose", "reshape", "flatten", "onnx", "dummy")


def placed_entry(parser, proto, node_id: int, entry, vector_op: str, loops: dict[str, int]):
    """The mapping entry of a vector layer: the default entry moves it, whole, to the first core
    whose vector unit runs ``vector_op``; an explicit entry must name only such cores."""
    able = sorted(core for core, classes in parser.vector_classes.items() if vector_op in classes)
    if entry.name == "default" and able:
        dim, pieces = _fitting_pieces(loops, parser.vector_memory_bits.get(able[0]))
        return replace(
            entry,
            core_allocation=(able[0],) * pieces,
            core_allocation_is_fixed=True,
            inter_core_tiling=((dim, pieces),),
            group_allocation=None,
            intra_core_tiling=_rows_tiling(entry.intra_core_tiling, loops),
        )
    unable = [core for core in entry.core_allocation if core not in able]
    if unable:
        raise parser.error(
            proto,
            node_id,
            f"mapping entry '{entry.name}' puts this '{vector_op}' layer on core(s) "
            f"{unable}, whose vector unit cannot run it; use core(s) {able or 'none'} "
            "or declare the class in that core's vector_unit",
        )
    return entry


def _rows_tiling(tiling, loops: dict[str, int]):
    """The default entry's row cut for a vector layer: on ``K`` for a Softmax layer (Stream names
    its rows ``K``, ``C`` being the reduced axis), so that fused mode cuts scores in row blocks;
    a cut that does not divide its loop is dropped (rounding the loop up would count data that
    does not exist, e.g. a 128th token in a cache of 127)."""
    if "D" not in loops and "C" in loops and "K" in loops:
        tiling = tuple(("K" if dim == "D" else dim, factor) for dim, factor in tiling)
    return tuple(
        (dim, factor)
        for dim, factor in tiling
        if not isinstance(factor, int) or dim not in loops or loops[dim] % factor == 0
    )


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
    return (
        depth > 0
        and node is not None
        and node.op_type in ("Concat", "Identity", "Reshape", "Cast", "Slice")
        and len([t for t in node.input if t]) >= 1
        and _from_graph_input(parser, node.input[0], depth - 1)
    )


def _carries_data(parser, tensor: str) -> bool:
    """Does ``tensor`` come from a layer (possibly through other nodes), not only from constants
    and graph inputs (an Identity of a weight, mask arithmetic, a slice of the KV cache)?"""
    source = parser.producer.get(tensor)
    return source is not None and _node_carries_data(parser.nodes, source)


def _node_carries_data(nodes, node_id: int) -> bool:
    node = nodes[node_id]
    return not hasattr(node, "kind") or any(_node_carries_data(nodes, src) for src in node.sources)


#: Bypassed operators that do no work (type changes, copies; IsNaN: the NaN guard exporters put
#: after an attention's Softmax): not named as uncosted.
NO_WORK_OPS = frozenset({"Identity", "Cast", "Dropout", "CastLike", "IsNaN"})


def bypassed_operators(workload) -> Counter:
    """Operator types of the bypassed (dummy) nodes that data produced by a layer flows through."""
    return Counter(node.op_type for node in bypassed_nodes(workload))


def bypassed_nodes(workload) -> list:
    """The bypassed (dummy) nodes doing work that data produced by a layer flows through, in order."""
    reached = set()
    for node_id, node in workload.nodes.items():  # ids are in topological order
        if not hasattr(node, "kind") or any(src in reached for src in node.sources):
            reached.add(node_id)
    return [
        node
        for node_id, node in workload.nodes.items()
        if node_id in reached
        and getattr(node, "kind", None) == "dummy"
        and node.op_type not in NO_WORK_OPS
        and not node.attrs.get("folded")
    ]


def refuse_bypass(node, file: str | None, vector_classes: dict) -> InputError:
    """The one-line error for a working operator left without a core on an accelerator whose
    cores declare vector units (there, nothing may run uncosted)."""
    cls = CLASSES.get(node.op_type)
    if cls is None:
        why = "the multi-core floor has no operator model for it"
    elif not any(cls in classes for classes in vector_classes.values()):
        why = f"no core's vector unit runs its class '{cls}'"
    else:
        why = (
            "the multi-core floor models it only over one axis of a rank-1..4 tensor (a reduction), without "
            "broadcasting its computed input"
        )
    return InputError(
        file,
        f"node '{node.name}' ({node.op_type})",
        f"would run with no core and no cost: {why}; rewrite the node (e.g. one reduction per axis, "
        "or reduce over the last axis), declare the class in a core's vector_unit, or remove it",
    )


def moving_node(parser, proto, node_id: int, preds: list[int]):
    """A node moving its first input's data (Slice, Split, Expand, ...), its other inputs constants."""
    parser.shapes.complete()
    values = {}
    for tensor in proto.input[1:]:
        if not tensor:
            continue
        if tensor not in parser.shapes.constants:
            raise parser.error(
                proto,
                node_id,
                f"input '{tensor}' is not a constant; {proto.op_type} can only "
                "move data with constant indices, shapes and sizes",
            )
        values[tensor] = parser.shapes.constants[tensor]
    opsets = {entry.domain or "": entry.version for entry in parser.model.opset_import}
    return PropagationNode(
        node_id,
        proto.name,
        proto.op_type,
        "onnx",
        tuple(preds[:1]),
        {"proto": proto, "values": values, "opsets": opsets, "output_for": {}},
    )


def _index(dims) -> str:
    return "".join(f"[{d.lower()}]" for d in dims)


def _spanned(dims: tuple[str, ...], out: list[int], shape: list[int]) -> tuple[str, ...]:
    """The output dims a right-aligned broadcast input spans (its size equals the output's)."""
    aligned = [None] * (len(out) - len(shape)) + list(shape)
    return tuple(d for d, o, s in zip(dims, out, aligned) if s is not None and s == o)
