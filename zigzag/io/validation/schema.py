"""A small schema language for the YAML inputs: a :class:`Field` describes one value and
:func:`check_value` validates it and fills in its defaults; the first problem found is an
:class:`Invalid` (a place in the document and what to fix), which :func:`run_check` reports as
an ``InputError`` about the file."""

from __future__ import annotations

import copy
import difflib
import math
import re
from dataclasses import dataclass
from typing import Any

from zigzag.errors import InputError

#: how an unrolling string is written (the accelerator's dataflows, the mapping's spatial mapping)
UNROLLING_FORM = (
    "'<DIM>, <size>' with an upper-case layer dimension and one space after the comma, e.g. 'K, 32'"
)


class Invalid(Exception):
    """The first problem found in a document; turned into an `InputError` by the public functions."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


def run_check(file: Any, check: Any, data: Any) -> Any:
    """Call `check(data)`, reporting its first problem as an `InputError` about `file`."""
    try:
        return check(data)
    except Invalid as problem:
        raise InputError(file, problem.where, problem.message) from None


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Field:
    """Schema of one YAML value.

    kind: "int", "float", "bool", "str", "list", "dict" (fixed keys) or "named" (any text keys);
    what: what to give, used in messages; form: the expected form of `pattern`, used in messages;
    star: "*" is accepted too; upper: upper-case the string; item / items: schema of every list
    entry / of each position; keys: schema per allowed key; value: schema of every named value.
    """

    kind: str
    what: str = ""
    required: bool = False
    nullable: bool = False
    default: Any = _NO_DEFAULT
    pattern: str | None = None
    form: str = ""
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    star: bool = False
    upper: bool = False
    length: int | None = None
    min_len: int = 0
    item: Field | None = None
    items: tuple[Field, ...] = ()
    keys: dict[str, Field] | None = None
    value: Field | None = None


# Booleans are a subclass of int in Python (and Cerberus accepts them as integers); here they are
# rejected wherever a number is expected, as `size: true` is certainly a mistake.
_PY_TYPES: dict[str, Any] = {
    "int": int,
    "float": (int, float),
    "bool": bool,
    "str": str,
    "list": list,
    "dict": dict,
    "named": dict,
}
_EXPECTED = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "str": "text",
    "list": "a list",
    "dict": "a mapping",
    "named": "a mapping",
}
_HOW = {
    "int": "write it without a decimal point or quotes, e.g. 64",
    "float": "write a plain number, e.g. 0.5",
    "bool": "write true or false",
    "str": "write text, and quote words YAML reads as something else, e.g. 'ON' or '1'",
    "list": "write [a, b] or one '- item' line per entry",
    "dict": "write indented 'key: value' lines under it",
    "named": "write indented 'name: ...' entries under it",
}


def check_value(value: Any, spec: Field, where: str) -> Any:
    """Return the normalised `value`, or raise `Invalid` for the first problem in it."""
    if value is None:
        if spec.nullable:
            return None
        raise Invalid(where, f"must not be empty (null); give {spec.what or _expected(spec)}")
    if spec.star and value == "*":
        return value
    if not _has_kind(value, spec.kind):
        how = "write a whole number, e.g. 64, or '*'" if spec.star else _HOW[spec.kind]
        raise Invalid(where, f"must be {_expected(spec)}, got {describe(value)}; {how}")
    return _CHECKERS[spec.kind](value, spec, where)


def _has_kind(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "bool"
    return isinstance(value, _PY_TYPES[kind])


def _expected(spec: Field) -> str:
    return _EXPECTED[spec.kind] + (" or '*'" if spec.star else "")


def describe(value: Any) -> str:
    """Short description of a YAML value for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"'{text}' (text)"
    if isinstance(value, (int, float)):
        return f"{value} ({'a whole' if isinstance(value, int) else 'a decimal'} number)"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    return f"{value} (a {type(value).__name__})"


def count_entries(count: int) -> str:
    """``"1 entry"``, ``"3 entries"``."""
    return f"{count} entry" if count == 1 else f"{count} entries"


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _check_number(value: int | float, spec: Field, where: str) -> int | float:
    if not math.isfinite(value):
        raise Invalid(
            where, f"must be a finite number, got {value}; give {spec.what or 'a number'}"
        )
    if spec.minimum is not None and value < spec.minimum:
        need = "positive" if spec.minimum else "zero or more"
        raise Invalid(where, f"must be {need}, got {value}; give {spec.what or 'a valid value'}")
    return value


def _check_bool(value: bool, spec: Field, where: str) -> bool:
    return value


def _check_str(value: str, spec: Field, where: str) -> str:
    if spec.pattern is not None and not re.fullmatch(spec.pattern, value):
        raise Invalid(where, f"'{value}' does not have the expected form; write {spec.form}")
    if spec.choices and value not in spec.choices:
        raise Invalid(where, f"unallowed value '{value}'; use one of: {', '.join(spec.choices)}")
    return value.upper() if spec.upper else value


def _check_list(value: list, spec: Field, where: str) -> list:
    length = len(spec.items) if spec.items else spec.length
    if length is not None and len(value) != length:
        raise Invalid(
            where, f"must have exactly {count_entries(length)}, got {len(value)}; write {spec.what}"
        )
    if len(value) < spec.min_len:
        raise Invalid(where, f"must not be empty; give {spec.what}")
    if spec.items:
        return [
            check_value(v, s, f"{where}[{i}]") for i, (v, s) in enumerate(zip(value, spec.items))
        ]
    assert spec.item is not None
    return [check_value(v, spec.item, f"{where}[{i}]") for i, v in enumerate(value)]


def _check_dict(value: dict, spec: Field, where: str) -> dict:
    assert spec.keys is not None
    out = {}
    for key, item in value.items():
        if key not in spec.keys:
            raise Invalid(_join(where, key), unknown_field(key, spec.keys))
        out[key] = check_value(item, spec.keys[key], _join(where, key))
    for key, sub in spec.keys.items():
        if key in out:
            continue
        if sub.required:
            raise Invalid(
                _join(where, key), f"required field '{key}' is missing; add {key}: <{sub.what}>"
            )
        if sub.default is not _NO_DEFAULT:
            out[key] = copy.deepcopy(sub.default)
    return out


def unknown_field(key: Any, allowed: dict[str, Field]) -> str:
    """The message for a field not in ``allowed``, with the closest allowed name as a hint."""
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown field '{key}'{hint}; allowed fields: {', '.join(allowed)}; remove it or fix its spelling"


def _check_named(value: dict, spec: Field, where: str) -> dict:
    assert spec.value is not None
    if len(value) < spec.min_len:
        raise Invalid(where, f"must not be empty; give {spec.what}")
    out = {}
    for name, item in value.items():
        if not isinstance(name, str):
            raise Invalid(
                _join(where, name),
                f"the name {describe(name)} must be text; quote it, e.g. '{name}'",
            )
        out[name] = check_value(item, spec.value, _join(where, name))
    return out


_CHECKERS: dict[str, Any] = {
    "int": _check_number,
    "float": _check_number,
    "bool": _check_bool,
    "str": _check_str,
    "list": _check_list,
    "dict": _check_dict,
    "named": _check_named,
}


def expect_top(data: Any, kind: str, content: str) -> None:
    """Check the type of the whole document."""
    if data is None:
        raise Invalid("top level", f"the file is empty; it must contain {content}")
    if not _has_kind(data, kind):
        raise Invalid("top level", f"the file must contain {content}, got {describe(data)}")


def check_unique(values: list, where: str, noun: str) -> None:
    """Reject the second occurrence of any value in `values`."""
    seen: set = set()
    for i, value in enumerate(values):
        if value in seen:
            raise Invalid(
                f"{where}[{i}]", f"{noun} '{value}' is listed twice; list each {noun} once"
            )
        seen.add(value)
