"""Paths into YAML documents: ``memories.sb.ports[0].bandwidth_max``, ``operational_array.sizes[1]``.

A path is dot-separated keys, each optionally followed by ``[index]`` list positions. Reading,
writing, adding and removing go through :func:`get`, :func:`set_value`, :func:`add` and
:func:`remove`; a path that does not exist is a :class:`PathError` naming the first missing step,
with the closest existing key when one is close (did you mean ...?).
"""

from __future__ import annotations

import copy
import difflib
import functools
import re
from typing import Any

_STEP = re.compile(r"([^.\[\]]+)((?:\[-?\d+\])*)")


class PathError(ValueError):
    """A path that does not exist in (or cannot be written into) a document."""


def parse_path(path: str) -> tuple[str | int, ...]:
    """``"memories.sb.ports[0].bandwidth_max"`` -> ``("memories", "sb", "ports", 0, "bandwidth_max")``."""
    if not isinstance(path, str) or not path:
        raise PathError(
            f"{path!r} is not a path; write keys separated by dots, e.g. memories.sb.size"
        )
    return _parse_path(path)


@functools.lru_cache(maxsize=4096)  # a sweep writes the same few paths into every variant
def _parse_path(path: str) -> tuple[str | int, ...]:
    steps: list[str | int] = []
    for part in path.split("."):
        match = _STEP.fullmatch(part)
        if match is None:
            raise PathError(
                f"'{path}' is not a path; write keys separated by dots and list positions "
                "in brackets, e.g. memories.sb.ports[0].bandwidth_max"
            )
        steps.append(match.group(1))
        steps += [int(i) for i in re.findall(r"-?\d+", match.group(2))]
    return tuple(steps)


def format_path(steps) -> str:
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else str(step)
    return text


def key_of(node: Any, step: str | int) -> str | int:
    """``cores.0`` names the key 0 of a mapping numbered by whole numbers (a multi-core file's cores)."""
    if (
        isinstance(node, dict)
        and isinstance(step, str)
        and step.isdigit()
        and step not in node
        and node
        and all(isinstance(k, int) for k in node)
    ):
        return int(step)
    return step


def _step_into(node: Any, step: str | int, done: tuple, path: str) -> Any:
    step = key_of(node, step)
    if isinstance(step, int) and not isinstance(node, dict):
        if not isinstance(node, list):
            raise PathError(
                f"'{path}': {format_path(done) or 'the document'} is not a list; remove [{step}]"
            )
        if not -len(node) <= step < len(node):
            raise PathError(
                f"'{path}': {format_path(done)} has {len(node)} entries, so [{step}] does not exist"
            )
        return node[step]
    if not isinstance(node, dict):
        raise PathError(
            f"'{path}': {format_path(done) or 'the document'} is not a mapping, so it has no key '{step}'"
        )
    if step not in node:
        raise PathError(f"'{path}': {_missing(node, step, done)}")
    return node[step]


def _missing(node: dict, step: str, done: tuple) -> str:
    where = format_path(done) or "the document"
    close = difflib.get_close_matches(str(step), [str(k) for k in node], n=1)
    hint = (
        f"; did you mean '{format_path((*done, close[0]))}'?"
        if close
        else f" (it has: {', '.join(map(str, node))})"
    )
    return f"{where} has no '{step}'{hint}"


def get(document: Any, path: str) -> Any:
    """The value at ``path``; PathError if it does not exist."""
    node = document
    steps = parse_path(path)
    for i, step in enumerate(steps):
        node = _step_into(node, step, steps[:i], path)
    return node


def exists(document: Any, path: str) -> bool:
    try:
        get(document, path)
    except PathError:
        return False
    return True


def _parent(document: Any, path: str) -> tuple[Any, str | int]:
    steps = parse_path(path)
    node = document
    for i, step in enumerate(steps[:-1]):
        node = _step_into(node, step, steps[:i], path)
    return node, steps[-1]


def set_value(document: Any, path: str, value: Any) -> None:
    """Replace the value at an existing ``path`` (in place)."""
    parent, last = _parent(document, path)
    _step_into(parent, last, parse_path(path)[:-1], path)
    parent[key_of(parent, last)] = copy.deepcopy(value)


def add(document: Any, path: str, value: Any, *, before: str | None = None) -> None:
    """Add a new key (in a mapping; placed before the key ``before`` if given, else last) or a
    new list entry (``path`` ending in ``[i]``: inserted at position i)."""
    parent, last = _parent(document, path)
    value = copy.deepcopy(value)
    if isinstance(last, int):
        if not isinstance(parent, list):
            raise PathError(f"'{path}': the parent is not a list")
        parent.insert(last, value)
        return
    if not isinstance(parent, dict):
        raise PathError(f"'{path}': the parent is not a mapping, so no key can be added to it")
    last = key_of(parent, last)
    if last in parent:
        raise PathError(f"'{path}' exists already; change it with 'set' instead of adding it")
    if before is None:
        parent[last] = value
        return
    if before not in parent:
        raise PathError(
            f"'{path}': before '{before}': {_missing(parent, before, parse_path(path)[:-1])}"
        )
    items = list(parent.items())
    parent.clear()
    for key, old in items:
        if key == before:
            parent[last] = value
        parent[key] = old


def remove(document: Any, path: str) -> None:
    """Remove the key or list entry at an existing ``path`` (in place)."""
    parent, last = _parent(document, path)
    _step_into(parent, last, parse_path(path)[:-1], path)
    del parent[key_of(parent, last)]
