"""Unknown keys in a workflow config, found from its JSON schema alone.

Every object of the schema that lists ``properties`` is closed: a key it does not list (through
its ``allOf`` / ``anyOf`` / ``oneOf`` branches and ``$ref`` targets as well) is a mistake,
reported with its place in the config and the closest known key. An object whose keys are
chosen by the user says so with ``additionalProperties: {...}`` (or ``true``) or
``patternProperties``. New sections of the schema are checked without any change here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from zigzag.errors import InputError


def check_unknown_keys(config: dict, schema: dict, file: str = "config") -> None:
    """Raise a one-line InputError for the first key of ``config`` its schema does not know."""
    for place, key, known in unknown_keys(config, schema):
        raise InputError(file, place, unknown_key_message(key, known))


def unknown_key_message(key: str, known: list[str]) -> str:
    """``unknown key 'lpf_limt'; did you mean 'lpf_limit'?`` (or the known keys when none is close)."""
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    if close:
        return f"unknown key '{key}'; did you mean '{close[0]}'?"
    return f"unknown key '{key}'; known keys here: {', '.join(known) or 'none'}"


def unknown_keys(config, schema: dict) -> Iterator[tuple[str, str, list[str]]]:
    """``(place, key, known keys there)`` for every unknown key of ``config``, in the config's order."""
    yield from _walk(config, [schema], schema, "")


def _walk(value, schemas: list, root: dict, place: str) -> Iterator[tuple[str, str, list[str]]]:
    nodes = [node for schema in schemas for node in _branches(schema, root)]
    if isinstance(value, dict):
        properties: dict[str, list] = {}
        for node in nodes:
            for key, sub in (node.get("properties") or {}).items():
                properties.setdefault(key, []).append(sub)
        others = [
            node["additionalProperties"]
            for node in nodes
            if isinstance(node.get("additionalProperties"), dict)
        ]
        open_ended = others or any(
            node.get("additionalProperties") is True or node.get("patternProperties")
            for node in nodes
        )
        for key, item in value.items():
            here = f"{place}.{key}" if place else str(key)
            if key in properties:
                yield from _walk(item, properties[key], root, here)
            elif others:
                yield from _walk(item, others, root, here)
            elif properties and not open_ended:
                yield here, key, list(properties)
    elif isinstance(value, list):
        items = [node["items"] for node in nodes if isinstance(node.get("items"), dict)]
        if items:
            for index, item in enumerate(value):
                yield from _walk(item, items, root, f"{place}[{index}]")


def _branches(schema, root: dict, seen: frozenset = frozenset()) -> Iterator[dict]:
    """The schema node and every node it combines with (``$ref``, ``allOf``, ``anyOf``, ``oneOf``)."""
    if not isinstance(schema, dict):
        return
    yield schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
        target = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        yield from _branches(target, root, seen | {ref})
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(combinator) or []:
            yield from _branches(branch, root, seen)
