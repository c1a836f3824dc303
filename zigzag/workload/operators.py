"""Canonical layers of the operator model (docs/models/operators.md).

Every operator of a network is a layer with a loop nest: matrix products are MAC layers (``vector_op``
None), everything else is a *vector layer* naming its operation class (``VECTOR_OPS``). The ONNX importer
(``operators="all"``) and the LLM configuration generator build their layers only through these
functions, so an export and a generated workload compare layer for layer.

Every function returns layer dicts in the form ``zigzag.io.onnx_import.read_onnx`` gives (the
workload-YAML fields plus ``kind: "layer"``, ``operand_roles`` and ``vector_op``); decompositions return
lists with consecutive ids, each layer reading the one before it. ``sources`` maps an input operand to
the id of the layer producing it; an operand without a source is a constant of the layer.

Conventions: vector loop dims by output rank are ``VECTOR_DIMS`` (D = rows / tokens, K = features or key
positions); a one-input layer has operands ``O``, ``I``; a two-input layer also ``W``, the (possibly
broadcast) second input; scalar constants (x * 0.5, x + eps, x ** 2) are immediates, not operands; a
reduction over the last axis is ``O[..][d] += I[..][d][c]``. One operation = one loop iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: Operation classes of vector layers (the vector unit declares a cost per class).
VECTOR_OPS = (
    "add",
    "sub",
    "mul",
    "max",
    "neg",
    "where",
    "div",
    "exp",
    "tanh",
    "erf",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "sin",
    "cos",
    "pow",
    "reduce_sum",
    "reduce_max",
    "reduce_mean",
    "gather",
    "copy",
)
#: What an operand holds, for per-token figures (weight bytes, KV-cache bytes): ``state`` is a state-space
#: model's recurrent state, held and read like a KV cache but updated in place (its size does not grow).
ROLES = ("weight", "activation", "kv_cache", "state")
#: Loop dims of a vector layer by the rank of its output.
VECTOR_DIMS = {
    1: ("K",),
    2: ("D", "K"),
    3: ("B", "D", "K"),
    4: ("B", "H", "D", "K"),
    5: ("B", "H", "G", "D", "K"),
}
_MULTIPLICATIVE = {"mul", "div", "pow"}

Dims = Mapping[str, int]


@dataclass(frozen=True)
class Precision:
    """Bits per operand role; partial sums of matrix products and reductions are twice the activations."""

    weights: int = 8
    activations: int = 8
    kv_cache: int = 8

    def bits(self, role: str) -> int:
        """A recurrent state is stored at the KV cache's bits."""
        return {
            "weight": self.weights,
            "activation": self.activations,
            "kv_cache": self.kv_cache,
            "state": self.kv_cache,
        }[role]


DEFAULT_PRECISION = Precision()


def vector_dims(shape: list[int] | tuple[int, ...]) -> dict[str, int]:
    """The loop dims of a vector layer whose output has ``shape`` (unknown sizes read as 1)."""
    if len(shape) not in VECTOR_DIMS:
        raise ValueError(
            f"tensor rank {len(shape)} ({list(shape)}): vector layers take ranks 1 to 5"
        )
    return {dim: size or 1 for dim, size in zip(VECTOR_DIMS[len(shape)], shape)}


def broadcast_dims(shape: list[int] | tuple[int, ...], dims: Dims) -> tuple[str, ...]:
    """The dims of ``dims`` (an output's, in order) that an input of ``shape`` spans under ONNX
    (right-aligned) broadcasting: those where its size equals the output's."""
    names, sizes = list(dims), list(dims.values())
    offset = len(names) - len(shape)
    return tuple(
        names[offset + i]
        for i, size in enumerate(shape)
        if offset + i >= 0 and (size or 1) == sizes[offset + i]
    )


def operator_type(op: str) -> str:
    """The operator type of a vector layer of class ``op`` (``reduce_max`` -> ``ReduceMax``): ``Add``, ``Sub``
    and ``Mul`` are the element-wise types ZigZag knows."""
    return "".join(part.capitalize() for part in op.split("_"))


def _index(dims) -> str:
    return "".join(f"[{d.lower()}]" for d in dims)


def _spec(
    layer_id: int,
    name: str,
    op_type: str,
    equation: str,
    loops: Dims,
    precision: dict,
    sources: Mapping,
    roles: Mapping | None,
    vector_op: str | None,
) -> dict:
    spec = {
        "kind": "layer",
        "id": layer_id,
        "name": name,
        "operator_type": op_type,
        "equation": equation,
        "dimension_relations": [],
        "loop_dims": list(loops),
        "loop_sizes": list(loops.values()),
        "operand_precision": precision,
        "operand_source": dict(sources),
        "pr_loop_dims": None,
        "pr_loop_sizes": None,
        "padding": None,
    }
    if roles:
        spec["operand_roles"] = dict(roles)
    if vector_op is not None:
        if vector_op not in VECTOR_OPS:
            raise ValueError(
                f"unknown operation class '{vector_op}'; one of {', '.join(VECTOR_OPS)}"
            )
        spec["vector_op"] = vector_op
    return spec


def _sources(layer_id: int, operands: tuple[str, ...], sources: Mapping | None) -> dict[str, int]:
    """Sources of the input operands, this layer's id for constants."""
    sources = sources or {}
    return {op: sources.get(op, layer_id) for op in operands}


def causal_split(
    tokens: int, blocks: int, past: int = 0, window: int | None = None
) -> list[tuple[int, int]]:
    """(query rows, keys attended) per block of a causal attention over ``tokens`` new tokens after ``past``
    cached ones: rows split into ``blocks`` near-equal blocks; block i attends every key up to its last row,
    and with a sliding ``window`` (a query attends itself and the ``window - 1`` keys before it) none before
    the window of its first row."""
    count = max(1, min(blocks, tokens))
    sizes = [tokens // count + (1 if i < tokens % count else 0) for i in range(count)]
    ends = [sum(sizes[: i + 1]) for i in range(count)]
    firsts = [
        max(0, past + end - size - window + 1) if window else 0 for size, end in zip(sizes, ends)
    ]
    return [(size, past + end - first) for size, end, first in zip(sizes, ends, firsts)]


# ----- MAC layers ---------------------------------------------------------------------------------
def matmul(
    layer_id: int,
    name: str,
    *,
    rows: int,
    reduction: int,
    cols: int,
    batch: int | None = None,
    heads: int | None = None,
    groups: int | None = None,
    w_role: str = "weight",
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
    operator_type: str = "MatMul",
    roles: bool = True,
    bits: tuple[int, int, int] | None = None,
    per_head_weight: bool = False,
) -> dict:
    """``O[b][h][g][d][k] += I[b][h][g][d][c] * W[..][c][k]``: loops ``C D K`` then ``B``, ``H``, ``G`` when
    given. A constant weight (``w_role="weight"``) is not indexed by the batch dims; a computed one (an
    activation or the KV cache) by ``B`` and ``H`` but not ``G``: with grouped-query attention ``H`` counts
    kv heads and ``G`` the query heads sharing one, so K and V are read once per group.
    ``bits`` = (weight, activation, partial-sum) bits overrides ``precision`` (ONNX precision attributes);
    ``roles=False`` leaves the operand roles out (today's ZigZag-compatible import);
    ``per_head_weight``: a constant weight of its own per head ``H`` (multi-head latent attention's
    absorbed up-projections), indexed by ``H``."""
    outer = {d: s for d, s in (("B", batch), ("H", heads), ("G", groups)) if s is not None}
    w_outer = (
        ("[h]" if per_head_weight and heads is not None else "")
        if w_role == "weight"
        else _index(d for d in outer if d != "G")
    )
    equation = f"O{_index(outer)}[d][k]+=I{_index(outer)}[d][c]*W{w_outer}[c][k]"
    weight, act, partial = bits or (
        precision.bits(w_role),
        precision.activations,
        2 * precision.activations,
    )
    if bits and w_role != "weight":
        weight = act
    operand_roles = {"O": "activation", "I": "activation", "W": w_role} if roles else None
    return _spec(
        layer_id,
        name,
        operator_type,
        equation,
        {"C": reduction, "D": rows, "K": cols} | outer,
        {"W": weight, "I": act, "O_final": act, "O": partial},
        _sources(layer_id, ("W", "I"), sources)
        if sources is not None
        else {"W": layer_id, "I": layer_id},
        operand_roles,
        None,
    )


# ----- vector layers ------------------------------------------------------------------------------
def elementwise(
    layer_id: int,
    name: str,
    op: str,
    dims: Dims,
    *,
    w_dims: tuple[str, ...] | None = None,
    roles: Mapping[str, str] | None = None,
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> dict:
    """An element-wise layer of class ``op`` over ``dims`` (ordered {dim: size}): ``O = I`` (one input,
    scalar constants being immediates) or ``O = I (op) W`` with ``W`` indexed by ``w_dims`` (broadcast)."""
    roles = (
        {"O": "activation", "I": "activation"}
        | ({"W": "activation"} if w_dims is not None else {})
        | dict(roles or {})
    )
    symbol = "*" if op in _MULTIPLICATIVE else "+"
    second = f"{symbol}W{_index(w_dims) or '[]'}" if w_dims is not None else ""
    equation = f"O{_index(dims)}=I{_index(dims)}{second}"
    operands = ("I", "W") if w_dims is not None else ("I",)
    out = precision.bits(roles["O"])
    bits = {op_: precision.bits(roles[op_]) for op_ in operands} | {"O": out, "O_final": out}
    return _spec(
        layer_id,
        name,
        operator_type(op),
        equation,
        dict(dims),
        bits,
        _sources(layer_id, operands, sources),
        roles,
        op,
    )


def reduction(
    layer_id: int,
    name: str,
    op: str,
    dims: Dims,
    *,
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> dict:
    """A reduction of class ``op`` over the last dim of ``dims`` (its input's dims):
    ``O[..][d] += I[..][d][c]``, loops = the kept dims then ``C``."""
    names = list(dims)
    kept = {d: dims[d] for d in names[:-1]}
    loops = kept | {"C": dims[names[-1]]}
    equation = f"O{_index(kept) or '[]'}+=I{_index(list(kept) + ['C'])}"
    act = precision.activations
    return _spec(
        layer_id,
        name,
        operator_type(op),
        equation,
        loops,
        {"I": act, "O": 2 * act, "O_final": act},
        _sources(layer_id, ("I",), sources),
        {"O": "activation", "I": "activation"},
        op,
    )


def top_k(
    layer_id: int,
    name: str,
    dims: Dims,
    k: int,
    *,
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> dict:
    """The ``k`` largest values over the last dim of ``dims`` (its input's; e.g. a router choosing
    k of E experts) as k passes of a row maximum (class ``reduce_max``):
    ``O[..][k] += I[..][c]``, loops = the other dims, then ``K`` (= k) and ``C``."""
    names = list(dims)
    kept = {d: dims[d] for d in names[:-1]}
    if "K" in kept or "C" in kept:
        raise ValueError(f"top_k over {names}: the kept dims may not be named K or C")
    loops = kept | {"K": k, "C": dims[names[-1]]}
    equation = f"O{_index(list(kept) + ['K'])}+=I{_index(list(kept) + ['C'])}"
    act = precision.activations
    return _spec(
        layer_id,
        name,
        "TopK",
        equation,
        loops,
        {"I": act, "O": act, "O_final": act},
        _sources(layer_id, ("I",), sources),
        {"O": "activation", "I": "activation"},
        "reduce_max",
    )


def gather(
    layer_id: int,
    name: str,
    dims: Dims,
    *,
    table_role: str = "weight",
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> dict:
    """A lookup (embedding rows, positions, a token of a sequence): ``O = I`` over the rows read; ``I`` is the
    table (a weight, or an activation)."""
    return elementwise(
        layer_id,
        name,
        "gather",
        dims,
        roles={"I": table_role},
        sources=sources,
        precision=precision,
    )


def cache_append(
    layer_id: int,
    name: str,
    dims: Dims,
    *,
    sources: Mapping | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> dict:
    """The KV-cache append: the new tokens' K or V (``dims`` = theirs, e.g. ``B H D K`` with D = new tokens)
    copied into the cache. A cache is appended in place, so the past entries are not copied again."""
    return elementwise(
        layer_id, name, "copy", dims, roles={"O": "kv_cache"}, sources=sources, precision=precision
    )


# ----- decompositions ------------------------------------------------------------------------------
def _chain(
    first_id: int, name: str, source: int | None, steps: list[tuple], precision: Precision
) -> list[dict]:
    """Layers from steps ``(kind, suffix, op, dims, w_dims, I source, W source, W role)``; a source is a
    step index (earlier layer), ``"x"`` (the input), or None (a constant)."""
    layers: list[dict] = []

    def resolve(ref):
        if ref == "x":
            return source
        return None if ref is None else first_id + ref

    for index, (kind, suffix, op, dims, w_dims, i_ref, w_ref, w_role) in enumerate(steps):
        layer_id = first_id + index
        srcs = {k: v for k, v in (("I", resolve(i_ref)), ("W", resolve(w_ref))) if v is not None}
        if kind == "reduce":
            layers.append(
                reduction(layer_id, f"{name}/{suffix}", op, dims, sources=srcs, precision=precision)
            )
        else:
            roles = {"W": w_role} if w_dims is not None else None
            layers.append(
                elementwise(
                    layer_id,
                    f"{name}/{suffix}",
                    op,
                    dims,
                    w_dims=w_dims,
                    roles=roles,
                    sources=srcs,
                    precision=precision,
                )
            )
    return layers


def _rows(dims: Dims) -> tuple[dict[str, int], tuple[str, ...]]:
    """(dims with the last set to 1, the dims but the last): a per-row statistic and how it broadcasts."""
    names = list(dims)
    return dict(dims) | {names[-1]: 1}, tuple(names[:-1])


def layernorm(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """LayerNorm over the last dim, as exported at opset 14: mean, x - mean, square, mean, + eps, sqrt,
    divide, * gamma, + beta (9 layers; gamma and beta are weights)."""
    row, keep = _rows(dims)
    last = (list(dims)[-1],)
    return _chain(
        first_id,
        name,
        source,
        [
            ("reduce", "ReduceMean", "reduce_mean", dims, None, "x", None, None),
            ("elem", "Sub", "sub", dims, keep, "x", 0, "activation"),
            ("elem", "Pow", "pow", dims, None, 1, None, None),
            ("reduce", "ReduceMean_1", "reduce_mean", dims, None, 2, None, None),
            ("elem", "Add", "add", row, None, 3, None, None),
            ("elem", "Sqrt", "sqrt", row, None, 4, None, None),
            ("elem", "Div", "div", dims, keep, 1, 5, "activation"),
            ("elem", "Mul", "mul", dims, last, 6, None, "weight"),
            ("elem", "Add_1", "add", dims, last, 7, None, "weight"),
        ],
        precision,
    )


def rmsnorm(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """RMSNorm over the last dim, as exported at opset 14: square, mean, + eps, sqrt, 1 / x, x * that,
    * gamma (7 layers)."""
    row, keep = _rows(dims)
    return _chain(
        first_id,
        name,
        source,
        [
            ("elem", "Pow", "pow", dims, None, "x", None, None),
            ("reduce", "ReduceMean", "reduce_mean", dims, None, 0, None, None),
            ("elem", "Add", "add", row, None, 1, None, None),
            ("elem", "Sqrt", "sqrt", row, None, 2, None, None),
            ("elem", "Div", "div", row, None, 3, None, None),
            ("elem", "Mul", "mul", dims, keep, "x", 4, "activation"),
            ("elem", "Mul_1", "mul", dims, (list(dims)[-1],), 5, None, "weight"),
        ],
        precision,
    )


def softmax(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """Softmax over the last dim: row max, x - max, exp, row sum, divide (5 layers)."""
    _, keep = _rows(dims)
    return _chain(
        first_id,
        name,
        source,
        [
            ("reduce", "ReduceMax", "reduce_max", dims, None, "x", None, None),
            ("elem", "Sub", "sub", dims, keep, "x", 0, "activation"),
            ("elem", "Exp", "exp", dims, None, 1, None, None),
            ("reduce", "ReduceSum", "reduce_sum", dims, None, 2, None, None),
            ("elem", "Div", "div", dims, keep, 2, 3, "activation"),
        ],
        precision,
    )


def gelu(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    form: str = "tanh",
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """GELU as exported: ``tanh`` form 0.5x(1 + tanh(0.79788(x + 0.044715x^3))) (8 layers, GPT-2's);
    ``erf`` form x(1 + erf(x / sqrt 2)) * 0.5 (5 layers, BERT's)."""
    if form == "tanh":
        steps = [
            ("elem", "Mul", "mul", dims, None, "x", None, None),
            ("elem", "Pow", "pow", dims, None, "x", None, None),
            ("elem", "Mul_1", "mul", dims, None, 1, None, None),
            ("elem", "Add", "add", dims, tuple(dims), "x", 2, "activation"),
            ("elem", "Mul_2", "mul", dims, None, 3, None, None),
            ("elem", "Tanh", "tanh", dims, None, 4, None, None),
            ("elem", "Add_1", "add", dims, None, 5, None, None),
            ("elem", "Mul_3", "mul", dims, tuple(dims), 0, 6, "activation"),
        ]
    elif form == "erf":
        steps = [
            ("elem", "Div", "div", dims, None, "x", None, None),
            ("elem", "Erf", "erf", dims, None, 0, None, None),
            ("elem", "Add", "add", dims, None, 1, None, None),
            ("elem", "Mul", "mul", dims, tuple(dims), "x", 2, "activation"),
            ("elem", "Mul_1", "mul", dims, None, 3, None, None),
        ]
    else:
        raise ValueError(f"GELU form '{form}': give tanh or erf")
    return _chain(first_id, name, source, steps, precision)


def silu(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """SiLU: sigmoid, x * sigmoid (2 layers)."""
    return _chain(
        first_id,
        name,
        source,
        [
            ("elem", "Sigmoid", "sigmoid", dims, None, "x", None, None),
            ("elem", "Mul", "mul", dims, tuple(dims), "x", 0, "activation"),
        ],
        precision,
    )


def rotary(
    first_id: int,
    name: str,
    dims: Dims,
    source: int | None,
    cos_source: int | None = None,
    sin_source: int | None = None,
    table_dims: tuple[str, ...] | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> list[dict]:
    """Rotary embedding of q or k (``dims`` ``B H D K``, K = head dim) as exported: x * cos, -(second half),
    rotate_half(x) * sin, sum (4 layers; the halves' Slice and Concat move data only). ``table_dims``: the dims
    the cos / sin tables span (default all but ``H``); their sources are the layers computing them."""
    table = table_dims if table_dims is not None else tuple(d for d in dims if d != "H")
    names = list(dims)
    half = dict(dims) | {names[-1]: dims[names[-1]] // 2}
    layers = _chain(
        first_id,
        name,
        source,
        [
            ("elem", "Mul", "mul", dims, table, "x", None, "activation"),
            ("elem", "Neg", "neg", half, None, "x", None, None),
            ("elem", "Mul_1", "mul", dims, table, 1, None, "activation"),
            ("elem", "Add", "add", dims, tuple(dims), 0, 2, "activation"),
        ],
        precision,
    )
    for layer, table_source in ((layers[0], cos_source), (layers[2], sin_source)):
        if table_source is not None:
            layer["operand_source"]["W"] = table_source
    return layers
