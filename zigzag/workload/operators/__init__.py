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

The model is three modules: ``conventions`` (operation classes, roles, precision, loop dims),
``layers`` (one layer each: ``matmul`` and the vector layers) and ``decompositions`` (operators
exported as chains of vector layers); this package gives them as one namespace
(``from zigzag.workload import operators as ops``; ``ops.matmul(...)``).
"""

from __future__ import annotations

from zigzag.workload.operators.conventions import (
    DEFAULT_PRECISION,
    ROLES,
    VECTOR_DIMS,
    VECTOR_OPS,
    Dims,
    Precision,
    broadcast_dims,
    causal_split,
    operator_type,
    vector_dims,
)
from zigzag.workload.operators.decompositions import (
    gelu,
    layernorm,
    rmsnorm,
    rotary,
    silu,
    softmax,
)
from zigzag.workload.operators.layers import (
    cache_append,
    elementwise,
    gather,
    matmul,
    reduction,
    top_k,
)

__all__ = [
    "DEFAULT_PRECISION",
    "ROLES",
    "VECTOR_DIMS",
    "VECTOR_OPS",
    "Dims",
    "Precision",
    "broadcast_dims",
    "cache_append",
    "causal_split",
    "elementwise",
    "gather",
    "gelu",
    "layernorm",
    "matmul",
    "operator_type",
    "reduction",
    "rmsnorm",
    "rotary",
    "silu",
    "softmax",
    "top_k",
    "vector_dims",
]
