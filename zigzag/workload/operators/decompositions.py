"""Operators exported as several vector layers (normalisations, softmax, activations, rotary
embedding), each a chain of layers with consecutive ids built from :mod:`.layers`."""

from __future__ import annotations

from zigzag.workload.operators.conventions import DEFAULT_PRECISION, Dims, Precision
from zigzag.workload.operators.layers import elementwise, reduction


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
