"""Validation of a workload YAML document (layers, equations, dimension relations, sources)."""

from __future__ import annotations

import re
from typing import Any

from zigzag.io.validation.schema import (
    Field,
    Invalid,
    check_unique,
    check_value,
    count_entries,
    expect_top,
    run_check,
)


from zigzag.workload.operators import ROLES, VECTOR_OPS, operator_type

OPERATOR_TYPES = (
    "Max",
    "Conv",
    "Pooling",
    "Add",
    "Conv_downsample",
    "Gemm",
    "Pool",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
)
#: Operator types of vector layers (with ``vector_op``): one per operation class, e.g. ``ReduceMax``.
VECTOR_TYPES = tuple(
    t for t in dict.fromkeys(operator_type(op) for op in VECTOR_OPS) if t not in OPERATOR_TYPES
)

# Output `O`, then two one-character input operands; only the last may have empty brackets. A vector layer
# (with `vector_op`) may have one input, and its output may be a scalar (`O[]`).
_EQUATION = r"O(?:\[\w*\])+\s*\+?\s*=\s*\w(?:\[\w*\])+(?:\s*[*+]\s*\w(?:\[\w*\])+)?\s*"
_OPERAND_IN_EQUATION = re.compile(r"(\w)((?:\[\w*\])+)")
# `<data dim> = [<coef> *] <dim> + [<coef> *] <dim>`
_RELATION = r"(\w+)\s*=\s*(?:(\w+)\s*\*\s*)?(\w+)\s*\+\s*(?:(\w+)\s*\*\s*)?(\w+)"

_PRECISION = Field("int", minimum=0, what="bits, a whole number")
_LAYER = Field(
    "dict",
    what="a layer with id, operator_type, equation, loop_dims, ...",
    keys={
        "id": Field("int", required=True, what="the layer id, a whole number"),
        "name": Field("str", nullable=True, default=None),
        "operator_type": Field(
            "str",
            required=True,
            choices=OPERATOR_TYPES + VECTOR_TYPES,
            what=f"one of {', '.join(OPERATOR_TYPES)} (vector layers also {', '.join(VECTOR_TYPES)})",
        ),
        "equation": Field(
            "str",
            required=True,
            what="e.g. O[k][oy][ox]+=W[k][c][fy][fx]*I[c][iy][ix]",
            pattern=_EQUATION,
            form="'O[..]...+=W[..]...*I[..]...' with one-letter operand names, e.g. "
            "'O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]'",
        ),
        "dimension_relations": Field(
            "list",
            default=[],
            item=Field(
                "str",
                pattern=_RELATION,
                form="'<data dim>=<coef>*<dim>+<coef>*<dim>', e.g. 'ix=2*ox+1*fx'",
            ),
        ),
        "loop_dims": Field(
            "list",
            required=True,
            item=Field("str", upper=True),
            what="loop dimension names, e.g. [K, C]",
        ),
        "loop_sizes": Field(
            "list",
            required=True,
            what="one size per loop dimension, e.g. [64, 32]",
            item=Field("int", minimum=1, what="a loop size of at least 1"),
        ),
        "operand_precision": Field(
            "dict",
            required=True,
            what="bits per operand: I, W, O and O_final",
            keys={
                "I": _PRECISION,
                "W": _PRECISION,
                "O": Field("int", required=True, minimum=0, what="partial-sum precision in bits"),
                "O_final": Field(
                    "int", required=True, minimum=0, what="final output precision in bits"
                ),
            },
        ),
        "operand_source": Field("dict", default={}, keys={"W": Field("int"), "I": Field("int")}),
        "pr_loop_dims": Field("list", nullable=True, default=None, item=Field("str", upper=True)),
        "pr_loop_sizes": Field(
            "list",
            nullable=True,
            default=None,
            item=Field("int", minimum=1, what="the total size of this dimension"),
        ),
        "padding": Field(
            "list",
            nullable=True,
            default=None,
            item=Field(
                "list",
                length=2,
                what="[begin, end]",
                item=Field("int", minimum=0, what="a padding in elements"),
            ),
        ),
        "vector_op": Field(
            "str",
            nullable=True,
            default=None,
            choices=VECTOR_OPS,
            what=f"an operation class: one of {', '.join(VECTOR_OPS)}",
        ),
        "operand_roles": Field(
            "dict",
            default={},
            keys={
                op: Field("str", choices=ROLES, what=f"one of {', '.join(ROLES)}")
                for op in ("O", "I", "W")
            },
        ),
    },
)


def validate_workload(data: Any, file: Any) -> list[dict]:
    """Check a workload document (a list of layers, from `file`) and return it normalised."""
    return run_check(file, _validate_workload, data)


def _validate_workload(data: Any) -> list[dict]:
    expect_top(data, "list", "a list of layers, each starting with '- id: <n>'")
    if not data:
        raise Invalid(
            "top level", "the workload has no layers; add at least one layer ('- id: 0 ...')"
        )
    layers = [check_value(raw, _LAYER, _layer_label(i, raw)) for i, raw in enumerate(data)]
    all_ids = {layer["id"] for layer in layers}
    earlier: dict[int, int] = {}
    for i, layer in enumerate(layers):
        where = _layer_label(i, layer)
        if layer["id"] in earlier:
            raise Invalid(
                f"{where}.id",
                f"id {layer['id']} is already used by layer[{earlier[layer['id']]}]; "
                "give every layer a unique id",
            )
        _check_layer(where, layer)
        _check_operand_sources(where, layer, earlier, all_ids)
        earlier[layer["id"]] = i
    return layers


def _layer_label(index: int, layer: Any) -> str:
    """`layer[3] (id 3, conv2_1)`, with whatever id and name are usable."""
    tags = []
    if isinstance(layer, dict):
        if isinstance(layer.get("id"), int) and not isinstance(layer.get("id"), bool):
            tags.append(f"id {layer['id']}")
        if isinstance(layer.get("name"), str):
            tags.append(layer["name"])
    return f"layer[{index}]" + (f" ({', '.join(tags)})" if tags else "")


def _check_layer(where: str, layer: dict) -> None:
    loop_dims = layer["loop_dims"]
    if len(layer["loop_sizes"]) != len(loop_dims):
        raise Invalid(
            f"{where}.loop_sizes",
            f"has {count_entries(len(layer['loop_sizes']))} but loop_dims has "
            f"{len(loop_dims)}; give one size per loop dimension, in the same order",
        )
    check_unique(loop_dims, f"{where}.loop_dims", "loop dimension")
    data_dims = _check_relations(where, layer["dimension_relations"], loop_dims)
    _check_equation(where, layer, loop_dims, data_dims)
    for key in ("padding", "pr_loop_sizes"):
        _check_pr_list(where, layer, key)


def _check_relations(where: str, relations: list[str], loop_dims: list[str]) -> list[str]:
    """Return the data dimensions defined by the relations, after checking their terms."""
    data_dims = []
    for i, text in enumerate(relations):
        at = f"{where}.dimension_relations[{i}]"
        match = re.fullmatch(_RELATION, text)
        assert match is not None  # guaranteed by the schema
        target, coef_a, dim_a, coef_b, dim_b = match.groups()
        for coef in (coef_a, coef_b):
            if coef is not None and not (re.fullmatch(r"[0-9]+", coef) and int(coef) > 0):
                raise Invalid(
                    at,
                    f"coefficient '{coef}' in '{text}' is not a positive whole number; write "
                    "each term as <number>*<dim>, e.g. 'ix=2*ox+1*fx'",
                )
        for dim in (dim_a, dim_b):
            if dim.upper() not in loop_dims:
                raise Invalid(
                    at,
                    f"'{dim}' in '{text}' is not a loop dimension of this layer "
                    f"({', '.join(loop_dims)}); add it to loop_dims or use one of those",
                )
        data_dims.append(target.upper())
    return data_dims


def _check_equation(where: str, layer: dict, loop_dims: list[str], data_dims: list[str]) -> None:
    """Inputs named I and W with a precision each; every index a loop or data dimension."""
    operands = _OPERAND_IN_EQUATION.findall(layer["equation"])
    inputs = [name for name, _ in operands[1:]]
    vector = layer.get("vector_op") is not None
    if layer["operator_type"] in VECTOR_TYPES and not vector:
        raise Invalid(
            f"{where}.operator_type",
            f"'{layer['operator_type']}' is the operator type of a vector "
            "layer; give its operation class as vector_op, or use one of "
            + ", ".join(OPERATOR_TYPES),
        )
    if sorted(inputs) != ["I", "W"] and not (vector and inputs == ["I"]):
        raise Invalid(
            f"{where}.equation",
            f"the input operands are {' and '.join(inputs)}, but they must be "
            "named I and W, e.g. 'O[k]+=W[k][c]*I[c]' (a vector layer may have I alone); rename them",
        )
    for name, brackets in operands:
        for dim in re.findall(r"\[(\w+)\]", brackets):
            if dim.upper() not in loop_dims and dim.upper() not in data_dims:
                raise Invalid(
                    f"{where}.equation",
                    f"index '{dim}' of operand {name} is neither a loop dimension "
                    f"({', '.join(loop_dims)}) nor defined by a dimension relation; add it to "
                    "loop_dims and loop_sizes, or define it in dimension_relations",
                )
    for name in inputs:
        if name not in layer["operand_precision"]:
            raise Invalid(
                f"{where}.operand_precision",
                f"has no precision for input operand {name} of the equation; add {name}: <bits>",
            )


def _check_pr_list(where: str, layer: dict, key: str) -> None:
    """`padding` and `pr_loop_sizes` give one entry per `pr_loop_dims` entry."""
    values, pr_dims = layer[key], layer["pr_loop_dims"]
    if values is None:
        return
    if pr_dims is None:
        raise Invalid(
            f"{where}.{key}",
            f"{key} needs pr_loop_dims (the partially relevant dimensions it "
            f"applies to, e.g. [IX, IY]); add pr_loop_dims or remove {key}",
        )
    if len(values) != len(pr_dims):
        raise Invalid(
            f"{where}.{key}",
            f"has {count_entries(len(values))} but pr_loop_dims has {len(pr_dims)}; "
            "give one entry per pr_loop_dims entry",
        )


def _check_operand_sources(
    where: str, layer: dict, earlier: dict[int, int], all_ids: set[int]
) -> None:
    """Each source is the layer itself (a constant operand) or an earlier layer."""
    own = layer["id"]
    for operand, source in layer["operand_source"].items():
        if source == own or source in earlier:
            continue
        at = f"{where}.operand_source.{operand}"
        fix = (
            f"use the id of an earlier layer, or this layer's own id ({own}) for a constant operand"
        )
        if source in all_ids:
            raise Invalid(
                at,
                f"layer id {source} comes later in the file, but a layer can only read from "
                f"layers listed before it; {fix}",
            )
        raise Invalid(at, f"there is no layer with id {source}; {fix}")
