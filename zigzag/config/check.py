"""Read a workflow config once into :class:`WorkflowConfig`; its first problem as one line.

Unknown keys come first, named by their place and the closest known key (from the shipped JSON
schema, :mod:`zigzag.config.keys`); then the models' checks, each pydantic error said in one line
(``config: experiments[0].lpf_limit: 0 is less than the minimum of 1``).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zigzag.config.base import Section
from zigzag.config.keys import check_unknown_keys
from zigzag.config.models import EXPERIMENT_SECTIONS, MULTICORE_ALIAS, WorkflowConfig
from zigzag.errors import InputError

#: the JSON schema generated from the models (zigzag/config/schema.py writes it)
SCHEMA_FILE = Path(__file__).with_name("config.schema.json")
#: the sections named when none is given (``stream_experiments`` is the older name of one of them)
NO_EXPERIMENT = (
    "no experiment defined; add an entry under "
    "'experiments', 'sweeps', 'multicore_experiments' or 'hardware_sweeps'"
)


def load_config(config: dict | WorkflowConfig, file: str = "config") -> WorkflowConfig:
    """``config`` checked and typed (a :class:`WorkflowConfig` is returned as it is)."""
    if isinstance(config, WorkflowConfig):
        return config
    if not isinstance(config, dict):
        raise InputError(file, None, f"{config!r} is not a mapping of config keys")
    check_unknown_keys(config, json.loads(SCHEMA_FILE.read_text()), file)
    if MULTICORE_ALIAS in config and "multicore_experiments" in config:
        raise InputError(
            file,
            MULTICORE_ALIAS,
            "give the multi-core experiments under multicore_experiments only "
            f"({MULTICORE_ALIAS} is its older name)",
        )
    try:
        typed = WorkflowConfig.model_validate(config)
    except ValidationError as exc:
        where, message = explain(exc.errors(), config)
        raise InputError(file, where or "top level", message) from None
    if not set(EXPERIMENT_SECTIONS) & set(config):
        raise InputError(file, "top level", NO_EXPERIMENT)
    return typed


def load_section(model: type[Section], data: Any, file: str) -> Section:
    """``data`` read into one section of the config (e.g. a hardware sweep given on the command
    line), with the same checks and one-line errors as :func:`load_config`."""
    if not isinstance(data, dict):
        raise InputError(file, None, f"{data!r} is not a mapping of {model.__name__} keys")
    check_unknown_keys(data, _schema(model), file)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, message = explain(exc.errors(), data)
        raise InputError(file, where or None, message) from None


@functools.cache
def _schema(model: type[Section]) -> dict:
    return model.model_json_schema()


#: pydantic's error types and the JSON-schema type they ask for
_TYPES = {
    "string_type": "string",
    "int_type": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "none_required": "null",
}


def explain(errors: list[dict], config: Any) -> tuple[str, str]:
    """``(place, message)`` of the first error of a validation (``errors()`` of pydantic)."""
    first = errors[0]
    path, _ = _place(first["loc"], config)
    # the alternatives of a union (a file or a list of files; a number or an expression) err
    # together, one error each: the value fits a kind but breaks its bound, or fits none
    together = [e for e in errors if _place(e["loc"], config)[0] == path]
    if len(together) > 1:
        fitting = [e for e in together if e["type"] not in _TYPES and e["type"] != "literal_error"]
        if fitting:
            first = fitting[0]
        else:
            return _text(path), _no_kind(first["input"], together)
    if first["type"] == "problem" and first["ctx"]["field"]:
        path += (first["ctx"]["field"],)
    return _text(path if first["type"] != "missing" else path[:-1]), _message(first, path)


def _place(loc: tuple, config: Any) -> tuple[tuple, Any]:
    """The keys and indices of ``loc`` that are in the config (union branch names left out)."""
    path, value = [], config
    for part in loc:
        if isinstance(value, dict) and part in value:
            path.append(part)
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            path.append(part)
            value = value[part]
        elif isinstance(value, dict) and isinstance(part, str) and part not in value:
            path.append(part)  # a missing key
            value = None
    return tuple(path), value


def _text(path: tuple) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if text else str(key)
    return text


def _no_kind(value: Any, errors: list[dict]) -> str:
    kinds = [k for k in dict.fromkeys(_TYPES.get(e["type"]) for e in errors) if k]
    if kinds == ["string", "array"]:
        return f"{value!r} is neither a file path nor a non-empty list of file paths; give one of those"
    if "number" in kinds and "integer" in kinds:
        kinds.remove("integer")
    choices = [c for e in errors if e["type"] == "literal_error" for c in _choices(e)]
    kinds += [repr(c) for c in choices]
    if len(kinds) == 1:
        article = "an" if kinds[0][:1] in "aeiou" else "a"
        return f"{value!r} is not of type {kinds[0]}; give {article} {kinds[0]}"
    return f"{value!r} is not of type {' or '.join(kinds)}"


def _choices(error: dict) -> list[str]:
    return re.findall(r"'([^']*)'", error["ctx"]["expected"])


#: field -> the message of a value out of range, where a field's unit says more
_OUT_OF_RANGE = {
    "clock_ns": "{value!r} is not a clock period in ns; give a number > 0",
    "clock_ghz": "{value!r} is not a clock frequency in GHz; give a number > 0",
}


def _message(error: dict, path: tuple) -> str:
    """What is wrong with one value and how to fix it, in a line (JSON-schema wording)."""
    kind, value, ctx = error["type"], error["input"], error.get("ctx") or {}
    if kind == "greater_than" and path and path[-1] in _OUT_OF_RANGE:
        return _OUT_OF_RANGE[path[-1]].format(value=value)
    if kind == "literal_error":
        return f"{value!r} is not one of {', '.join(_choices(error))}"
    if kind == "missing":
        return f"'{path[-1]}' is missing; add {path[-1]}: ..."
    if kind in _TYPES:
        wanted = _TYPES[kind]
        article = "an" if wanted[:1] in "aeiou" else "a"
        return f"{value!r} is not of type {wanted}; give {article} {wanted}"
    if kind == "string_pattern_mismatch":
        return f"{value!r} does not match {ctx['pattern']}; use letters, digits and _ . + - only"
    if kind == "string_too_short":
        return f"{value!r} is empty; give a text"
    if kind == "too_short":
        return "the list is empty; give at least one entry"
    if kind == "greater_than_equal":
        return f"{value!r} is less than the minimum of {ctx['ge']}"
    if kind == "greater_than":
        return f"{value!r} is less than or equal to the minimum of {ctx['gt']}"
    if kind == "less_than":
        return f"{value!r} is greater than or equal to the maximum of {ctx['lt']}"
    return " ".join(str(error["msg"]).split())
