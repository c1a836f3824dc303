"""The single layers of the operator model: a matrix product (a MAC layer) and the vector layers
(element-wise, reduction, top-k, lookup, KV-cache append), each returned as a layer dict."""

from __future__ import annotations

from typing import Mapping

from zigzag.workload.operators.conventions import (
    DEFAULT_PRECISION,
    VECTOR_OPS,
    Dims,
    Precision,
    operator_type,
)

_MULTIPLICATIVE = {"mul", "div", "pow"}


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
