"""Arithmetic expressions of a sweep, evaluated safely (no Python ``eval``).

An expression is parsed with :mod:`ast` and walked over a whitelist: numbers, names, the
operators ``+ - * / // % **``, comparisons (for constraints), and the functions ``min max ceil
floor log2 round abs``. Names resolve through a caller-given function, so a name may be a sweep
parameter (``D1``) or a path into the accelerator document (``memories.sb.size``,
``operational_array.sizes[0]``).

Quantities may carry a unit, written right after the number: memory sizes in bytes or bits
(``32KiB``, ``1MiB``, ``2kB``, ``512b``; memory sizes of an accelerator file are in bits, so a
byte unit is multiplied by 8), areas (``5 mm2``, ``300um2``), times (``2ms``, ``10ns``) and
energies (``3uJ``, ``100pJ``). Each unit converts to the base unit of its kind (bits, mm², s, pJ).
"""

from __future__ import annotations

import ast
import difflib
import functools
import math
import operator
import re
from typing import Callable

#: unit -> (kind, factor to the kind's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "b": ("size", 1),
    "B": ("size", 8),
    "Kib": ("size", 1024),
    "Mib": ("size", 1024**2),
    "Gib": ("size", 1024**3),
    "KiB": ("size", 8 * 1024),
    "MiB": ("size", 8 * 1024**2),
    "GiB": ("size", 8 * 1024**3),
    "kB": ("size", 8e3),
    "KB": ("size", 8e3),
    "MB": ("size", 8e6),
    "GB": ("size", 8e9),
    "mm2": ("area", 1),
    "um2": ("area", 1e-6),
    "s": ("time", 1),
    "ms": ("time", 1e-3),
    "us": ("time", 1e-6),
    "ns": ("time", 1e-9),
    "J": ("energy", 1e12),
    "mJ": ("energy", 1e9),
    "uJ": ("energy", 1e6),
    "nJ": ("energy", 1e3),
    "pJ": ("energy", 1),
    "cycles": ("cycles", 1),
}
_NUMBER = r"(?<![\w.])(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)"
_QUANTITY = re.compile(
    _NUMBER + r"\s*(" + "|".join(sorted(UNITS, key=len, reverse=True)) + r")(?![\w])"
)
_WHOLE_QUANTITY = re.compile(r"\s*" + _QUANTITY.pattern + r"\s*")

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
FUNCTIONS: dict[str, Callable] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "round": round,
    "abs": abs,
}


class ExpressionError(ValueError):
    """An expression that does not parse, names something unknown or cannot be computed."""


def quantity(text: str) -> tuple[float | int, str | None] | None:
    """``"32KiB"`` -> ``(262144, "size")``, ``"-2 pJ"`` -> ``(-2, "energy")``; a plain number ->
    ``(value, None)``; otherwise None."""
    signed = re.fullmatch(r"\s*([+-])(.*)", text, re.S)
    match = _WHOLE_QUANTITY.fullmatch(signed.group(2) if signed else text)
    if match:
        kind, factor = UNITS[match.group(2)]
        sign = -1 if signed and signed.group(1) == "-" else 1
        return _whole(sign * float(match.group(1)) * factor), kind
    try:
        return _whole(float(text)), None
    except ValueError:
        return None


def _whole(value: float) -> float | int:
    return int(value) if float(value).is_integer() and abs(value) < 2**63 else value


def parse(text: str) -> ast.expr:
    """The checked syntax tree of an expression (units replaced by their value); ExpressionError
    if it does not parse or uses anything outside the whitelist."""
    if not isinstance(text, str):
        raise ExpressionError(
            f"{text!r} is not an expression; write it as text, e.g. 'D1 * D2 * 8'"
        )
    return _parse(text)


@functools.lru_cache(
    maxsize=4096
)  # a sweep evaluates the same few expressions for every variant (trees are not changed)
def _parse(text: str) -> ast.expr:
    source = _QUANTITY.sub(
        lambda m: f"({_whole(float(m.group(1)) * UNITS[m.group(2)][1])!r})", text
    )
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        raise ExpressionError(
            _unknown_unit(text)
            or f"'{text}' does not parse; write arithmetic such as 'D1 * D2 * 8' or '64KiB'"
        ) from None
    for node in ast.walk(tree):
        if not isinstance(
            node,
            (
                ast.Constant,
                ast.Name,
                ast.Attribute,
                ast.Subscript,
                ast.BinOp,
                ast.UnaryOp,
                ast.Compare,
                ast.Call,
                ast.Load,
                ast.operator,
                ast.unaryop,
                ast.cmpop,
            ),
        ):
            raise ExpressionError(
                f"'{text}' uses {type(node).__name__}, which expressions do not allow"
            )
        name = (
            node.attr
            if isinstance(node, ast.Attribute)
            else node.id
            if isinstance(node, ast.Name)
            else ""
        )
        if name.startswith("__"):
            raise ExpressionError(f"'{text}' uses the name '{name}'; names may not start with '__'")
        if (
            isinstance(node, ast.Constant)
            and not isinstance(node.value, (int, float))
            or isinstance(node, ast.Constant)
            and isinstance(node.value, bool)
        ):
            raise ExpressionError(f"'{text}': only numbers are allowed as constants")
        if isinstance(node, ast.Call) and (
            not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords
        ):
            allowed = ", ".join(FUNCTIONS)
            raise ExpressionError(f"'{text}' calls something that is not one of {allowed}")
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and type(node.op) not in {
            **_BINARY,
            **_UNARY,
        }:
            raise ExpressionError(
                f"'{text}' uses an operator that expressions do not allow (+ - * / // % **)"
            )
    return tree


def _unknown_unit(text: str) -> str | None:
    """The message for a number followed by a word that is not a unit (``5 mm``, ``3kb``), if any."""
    for match in re.finditer(r"(?<![\w.])\d+(?:\.\d*)?\s*([A-Za-z][A-Za-z0-9]*)", text):
        unit = match.group(1)
        if unit not in UNITS and not re.fullmatch(r"[eE][+-]?\d*", unit):
            close = difflib.get_close_matches(unit, list(UNITS), n=1, cutoff=0.5)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            return f"'{text}': '{unit}' is not a unit{hint}; units: {', '.join(UNITS)}"
    return None


def names(tree: ast.expr) -> list[str]:
    """The names and document paths an expression reads, in order (``memories.sb.size``)."""
    found: list[str] = []

    def visit(node):
        path = _path(node)
        if path is not None:
            found.append(path)
            return
        if isinstance(node, ast.Call):
            for arg in node.args:
                visit(arg)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return list(dict.fromkeys(found))


def _path(node: ast.expr) -> str | None:
    """``a.b[0].c`` as a path string, or None if the node is not a plain name/path."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _path(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
    ):
        inner = _path(node.value)
        return None if inner is None else f"{inner}[{node.slice.value}]"
    return None


def evaluate(
    text_or_tree: str | ast.expr, lookup: Callable[[str], object], *, text: str | None = None
):
    """The value of an expression; ``lookup(name_or_path)`` gives a name's value (it raises
    ExpressionError for an unknown name). Division by zero and math errors are ExpressionErrors."""
    tree = parse(text_or_tree) if isinstance(text_or_tree, str) else text_or_tree
    shown = (
        text
        if text is not None
        else (text_or_tree if isinstance(text_or_tree, str) else ast.unparse(tree))
    )
    try:
        return _whole_if_exact(_evaluate(tree, lookup))
    except ZeroDivisionError:
        raise ExpressionError(f"'{shown}' divides by zero") from None
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, ExpressionError):
            raise
        raise ExpressionError(f"'{shown}' cannot be computed ({exc})") from None
    except TypeError as exc:
        raise ExpressionError(f"'{shown}' mixes a number with something else ({exc})") from None


def _whole_if_exact(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _evaluate(node: ast.expr, lookup):
    path = _path(node)
    if path is not None:
        return lookup(path)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, lookup), _evaluate(node.right, lookup)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ExpressionError(f"exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, lookup))
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(_evaluate(arg, lookup) for arg in node.args))
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, lookup)
        for op, comparator in zip(node.ops, node.comparators):
            right = _evaluate(comparator, lookup)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise ExpressionError(f"'{ast.unparse(node)}' is not allowed in an expression")
