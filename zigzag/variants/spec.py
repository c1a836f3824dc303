"""What a sweep varies, read and checked: :class:`VariantSpec` from a config section or CLI flags.

Every key of ``vary``, ``zip`` and ``derive`` is a parameter: a short name declared under
``params`` (``D1: operational_array.sizes[0]``) or a path into the base document. Checks made
here, each a one-line :class:`zigzag.errors.InputError` naming the place: a path that does not
exist in the base document (with the closest existing key), a value list that is not a list,
zipped lists of different lengths, an expression that does not parse, a fragment edit of an
unknown kind. Errors found only once values are known (division by zero) come from the expansion.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.variants import documents, expressions
from zigzag.variants.documents import PathError

#: the kinds of edit a fragment option may make, in the order they are applied
EDIT_KINDS = ("remove", "add", "set")
SPEC_KEYS = ("base", "params", "vary", "zip", "derive", "fragments", "name_format")


@dataclass(frozen=True)
class Parameter:
    """A varied or derived value: its name (column and label), the document path it writes
    (None for a name that only feeds expressions) and its values (varied) or expression (derived)."""

    name: str
    path: str | None
    values: tuple = ()
    expression: str | None = None


@dataclass(frozen=True)
class Edit:
    kind: str  # remove | add | set
    path: str
    value: Any = None
    before: str | None = None


@dataclass(frozen=True)
class VariantSpec:
    """A base document and how its variants differ from it.

    ``axes``: each axis is a tuple of parameters that change in step (one for ``vary``, a group
    for ``zip``); the variants are every combination of one position per axis. ``fragments``:
    group name -> option name -> edits (each group is an axis too). ``derived``: computed in order.
    """

    base: dict
    base_name: str
    source: str
    axes: tuple[tuple[Parameter, ...], ...] = ()
    fragments: tuple[tuple[str, tuple[tuple[str, tuple[Edit, ...]], ...]], ...] = ()
    derived: tuple[Parameter, ...] = ()
    name_format: str | None = None
    aliases: dict = field(default_factory=dict)

    @property
    def varied_names(self) -> list[str]:
        """Column names of the parameters, in order: fragments, varied, derived."""
        return (
            [group for group, _ in self.fragments]
            + [p.name for axis in self.axes for p in axis]
            + [p.name for p in self.derived]
        )


def read_spec(
    section: dict, source: str, *, base_document: dict | None = None, normalise=None
) -> VariantSpec:
    """Check a sweep's variant keys (``base``, ``params``, ``vary``, ``zip``, ``derive``,
    ``fragments``, ``name_format``) and return them as a VariantSpec. ``source`` names the config
    (file and entry) in messages; ``base_document`` replaces reading ``base`` from a file.
    ``normalise(document, name)`` (e.g. the accelerator validator) fills in the fields a file may
    leave out, so that those can be varied too (``memories.sb.auto_cost_extraction``)."""
    if not isinstance(section, dict):
        raise InputError(source, None, "a sweep must be a mapping with base, vary, ...")
    if base_document is None:
        if "base" not in section:
            raise InputError(
                source, "base", "missing; give the accelerator file the variants start from"
            )
        base_document = _load_base(section["base"], source)
    base = copy.deepcopy(base_document)
    aliases = _aliases(section.get("params") or {}, source)

    def parameter(where: str, key: Any, documents_to_check: list[dict]) -> tuple[str, str | None]:
        if not isinstance(key, str):
            raise InputError(source, where, f"{key!r} is not a parameter name or a path")
        path = aliases.get(key, key)
        if not any(documents.exists(doc, path) for doc in documents_to_check):
            try:
                documents.get(documents_to_check[-1], path)
            except PathError as exc:
                raise InputError(
                    source,
                    f"{where}.{key}",
                    f"not in the base file {section.get('base', '')}: {exc}",
                ) from None
        name = key
        return name, path

    fragments = _fragments(section.get("fragments") or {}, source, base)
    candidates = [base] + _fragment_documents(base, fragments)
    if normalise is not None:
        candidates += _normalised(candidates, normalise)
    axes = []
    vary = _mapping(section.get("vary") or {}, source, "vary")
    for key, values in vary.items():
        name, path = parameter("vary", key, candidates)
        axes.append((Parameter(name, path, _values(values, source, f"vary.{key}")),))
    for i, group in enumerate(section.get("zip") or []):
        group = _mapping(group, source, f"zip[{i}]")
        members = []
        for key, values in group.items():
            name, path = parameter(f"zip[{i}]", key, candidates)
            members.append(Parameter(name, path, _values(values, source, f"zip[{i}].{key}")))
        lengths = {len(p.values) for p in members}
        if len(lengths) > 1:
            sizes = ", ".join(f"{p.name} has {len(p.values)}" for p in members)
            raise InputError(
                source, f"zip[{i}]", f"zipped lists must have the same length ({sizes})"
            )
        if members:
            axes.append(tuple(members))
    names = {p.name for axis in axes for p in axis}
    duplicate = next(
        (n for n in names if sum(p.name == n for axis in axes for p in axis) > 1), None
    )
    if duplicate:
        raise InputError(
            source, duplicate, "varied twice (in vary and zip, or in two zip groups); vary it once"
        )
    derived = []
    for key, text in _mapping(section.get("derive") or {}, source, "derive").items():
        name, path = parameter("derive", key, candidates)
        try:
            expressions.parse(text if not isinstance(text, (int, float)) else str(text))
        except expressions.ExpressionError as exc:
            raise InputError(source, f"derive.{key}", str(exc)) from None
        derived.append(Parameter(name, path, expression=str(text)))
    name_format = section.get("name_format")
    if name_format is not None and not isinstance(name_format, str):
        raise InputError(source, "name_format", "give a text such as 'tpu{D1}x{D2}-ub{ub}'")
    base_name = str(base.get("name", "variant")) if isinstance(base, dict) else "variant"
    return VariantSpec(
        base, base_name, source, tuple(axes), fragments, tuple(derived), name_format, aliases
    )


def _load_base(base: Any, source: str) -> dict:
    from zigzag.io.yaml_files import load_yaml

    if not isinstance(base, (str, Path)):
        raise InputError(
            source, "base", f"{base!r} is not a file path; give the accelerator YAML to vary"
        )
    if not Path(base).is_file():  # said where the config names it
        raise InputError(
            source,
            "base",
            f"{base} does not exist; check the path (relative paths start at the working directory)",
        )
    document = load_yaml(base)
    if not isinstance(document, dict):
        raise InputError(
            str(base), None, "the base document must be a mapping (an accelerator file)"
        )
    return _tables_from_here(document, Path(base).parent)


def _tables_from_here(document: dict, folder: Path) -> dict:
    """The base document with its memories' cost tables named from the working folder (a file names
    them relative to itself; a variant document has no file of its own)."""
    memories = document.get("memories")
    if not isinstance(memories, dict):
        return document
    for memory in memories.values():
        table = memory.get("cost_table") if isinstance(memory, dict) else None
        if isinstance(table, str) and not Path(table).is_absolute():
            memory["cost_table"] = os.path.normpath(folder / table)
    return document


def _mapping(value: Any, source: str, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(
            source, where, f"{value!r} is not a mapping; write '<parameter or path>: ...' entries"
        )
    return value


def _aliases(params: Any, source: str) -> dict[str, str]:
    params = _mapping(params, source, "params")
    for name, path in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(
                source, f"params.{name}", "a parameter name must be a word such as D1 or ub_size"
            )
        try:
            documents.parse_path(path)
        except PathError as exc:
            raise InputError(source, f"params.{name}", str(exc)) from None
    return dict(params)


def _values(values: Any, source: str, where: str) -> tuple:
    if not isinstance(values, list):
        raise InputError(
            source,
            where,
            f"{values!r} is not a list; write the values as a list, e.g. [32KiB, 64KiB]",
        )
    if not values:
        raise InputError(source, where, "the list is empty; give at least one value")
    return tuple(values)


def _fragments(section: Any, source: str, base: dict):
    groups = []
    for group, options in _mapping(section, source, "fragments").items():
        options = _mapping(options, source, f"fragments.{group}")
        if not options:
            raise InputError(
                source, f"fragments.{group}", "no option given; name at least two alternatives"
            )
        parsed = []
        for option, edits in options.items():
            parsed.append((str(option), _edits(edits or {}, source, f"fragments.{group}.{option}")))
        groups.append((str(group), tuple(parsed)))
    for group, options in groups:
        for option, edits in options:
            try:
                apply_edits(copy.deepcopy(base), edits)
            except PathError as exc:
                raise InputError(source, f"fragments.{group}.{option}", str(exc)) from None
    return tuple(groups)


def _edits(section: Any, source: str, where: str) -> tuple[Edit, ...]:
    section = _mapping(section, source, where)
    unknown = [k for k in section if k not in EDIT_KINDS]
    if unknown:
        raise InputError(
            source, f"{where}.{unknown[0]}", f"unknown edit; use {', '.join(EDIT_KINDS)}"
        )
    for kind in ("remove", "add"):
        if not isinstance(section.get(kind) or [], list):
            raise InputError(
                source,
                f"{where}.{kind}",
                f"{section[kind]!r} is not a list; write one entry per line",
            )
    edits = []
    for path in section.get("remove") or []:
        edits.append(Edit("remove", str(path)))
    for i, entry in enumerate(section.get("add") or []):
        if not isinstance(entry, dict) or "path" not in entry or "value" not in entry:
            raise InputError(
                source,
                f"{where}.add[{i}]",
                "write each addition as {path: ..., value: ..., before: ...}",
            )
        edits.append(Edit("add", str(entry["path"]), entry["value"], entry.get("before")))
    for path, value in _mapping(section.get("set") or {}, source, f"{where}.set").items():
        edits.append(Edit("set", str(path), value))
    return tuple(edits)


def apply_edits(document: dict, edits) -> dict:
    """Apply a fragment option's edits to ``document`` in place (removals, additions, changes)."""
    for edit in edits:
        if edit.kind == "remove":
            documents.remove(document, edit.path)
        elif edit.kind == "add":
            documents.add(document, edit.path, edit.value, before=edit.before)
        else:
            documents.set_value(document, edit.path, edit.value)
    return document


def _normalised(candidates: list[dict], normalise) -> list[dict]:
    """The documents that normalise without error, normalised (their defaults filled in)."""
    result = []
    for document in candidates:
        try:
            result.append(normalise(copy.deepcopy(document), "base"))
        except InputError:
            continue
    return result


def _fragment_documents(base: dict, fragments) -> list[dict]:
    """The base with each single fragment option applied (where varied paths may also live)."""
    return [
        apply_edits(copy.deepcopy(base), edits) for _, options in fragments for _, edits in options
    ]
