"""From a :class:`VariantSpec` to its variants: one resolved document per combination.

Per combination: the base document, the chosen fragment options' edits, the varied values, then
the derived values in order. Each variant has a readable name (``flow_tpu_32x32-D116-ub1MiB``, or
the spec's ``name_format``) and an id, a hash of its resolved document (after the optional
``normalise`` function, e.g. the accelerator validator), so that variants with the same
document are one variant (the first name is kept, the others are listed as its aliases).
A variant whose document cannot be built or does not validate keeps its name and carries the
one-line reason in ``problem`` instead of failing the expansion.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Callable

from zigzag.errors import InputError
from zigzag.variants import documents, expressions
from zigzag.variants.documents import PathError
from zigzag.variants.spec import VariantSpec, apply_edits


@dataclass(frozen=True)
class Variant:
    """One point of a sweep: its name, id, parameter values (column -> value and -> label), its
    document (do not modify it), and why it cannot be used, if so."""

    name: str
    id: str
    parameters: dict
    labels: dict
    document: dict | None
    problem: str | None = None
    aliases: tuple[str, ...] = field(default=())


def expand(
    spec: VariantSpec, *, normalise: Callable[[dict, str], dict] | None = None
) -> list[Variant]:
    """Every variant of ``spec`` in combination order, identical documents merged into one.

    ``normalise(document, variant_name)`` checks a document and returns the form that identifies
    it (an InputError makes the variant invalid, with that line as its problem)."""
    fragment_axes = [
        [(group, option, edits) for option, edits in options] for group, options in spec.fragments
    ]
    value_axes = [
        [tuple(zip(axis, values)) for values in zip(*(p.values for p in axis))]
        for axis in spec.axes
    ]
    variants: dict[str, Variant] = {}
    order: list[str] = []
    for choice in itertools.product(*fragment_axes, *value_axes):
        fragments, points = choice[: len(fragment_axes)], choice[len(fragment_axes) :]
        variant = _variant(spec, fragments, [pair for point in points for pair in point], normalise)
        if variant.id in variants:
            kept = variants[variant.id]
            variants[variant.id] = _with_alias(kept, variant.name)
            continue
        variants[variant.id] = variant
        order.append(variant.id)
    return _unique_names([variants[key] for key in order])


def axis_sizes(spec: VariantSpec) -> tuple[int, ...]:
    """How many positions each axis of ``spec`` has: fragment groups first, then the varied axes
    (the variants are every combination of one position per axis)."""
    return tuple(len(options) for _, options in spec.fragments) + tuple(
        len(axis[0].values) for axis in spec.axes
    )


def variant_at(
    spec: VariantSpec,
    position: tuple[int, ...],
    *,
    normalise: Callable[[dict, str], dict] | None = None,
) -> Variant:
    """The variant at one position of the grid (one index per axis, as :func:`axis_sizes`),
    made without expanding the others: what a search over a large sweep evaluates."""
    fragments = [options[i] for (_, options), i in zip(spec.fragments, position)]
    fragments = [
        (group, option, edits) for (group, _), (option, edits) in zip(spec.fragments, fragments)
    ]
    values = [
        (parameter, parameter.values[i])
        for axis, i in zip(spec.axes, position[len(spec.fragments) :])
        for parameter in axis
    ]
    return _variant(spec, fragments, values, normalise)


def _with_alias(variant: Variant, alias: str) -> Variant:
    return Variant(
        variant.name,
        variant.id,
        variant.parameters,
        variant.labels,
        variant.document,
        variant.problem,
        (*variant.aliases, alias),
    )


_ATOMS = (str, int, float, bool, type(None))


def _copy(node, memo: dict | None = None):
    """``copy.deepcopy`` of a document, several times faster on its plain dicts, lists and scalars
    (a node met twice is copied once, as deepcopy does; other types go to deepcopy)."""
    memo = {} if memo is None else memo
    kind = type(node)
    if kind in _ATOMS:
        return node
    if kind is dict or kind is list:
        done = memo.get(id(node))
        if done is not None:
            return done
        if kind is dict:
            copied = memo[id(node)] = {}
            for key, value in node.items():
                copied[key] = _copy(value, memo)
        else:
            copied = memo[id(node)] = []
            copied.extend(_copy(value, memo) for value in node)
        memo.setdefault(id(memo), []).append(node)  # keep the original alive while its id is a key
        return copied
    return copy.deepcopy(node, memo)


def _variant(spec: VariantSpec, fragments, values, normalise) -> Variant:
    document = _copy(spec.base)
    parameters: dict[str, Any] = {}
    labels: dict[str, str] = {}
    problem = None
    for group, option, _edits in fragments:
        parameters[group] = labels[group] = option
    try:
        for _group, _option, edits in fragments:
            apply_edits(document, edits)
        for parameter, raw in values:
            value = resolve_value(raw)
            parameters[parameter.name] = value
            labels[parameter.name] = value_label(raw)
            _write(document, parameter.path, value)
        for parameter in spec.derived:
            lookup = _lookup(document, parameters, spec.aliases)
            try:
                value = expressions.evaluate(parameter.expression, lookup)
            except expressions.ExpressionError as exc:
                raise InputError(spec.source, f"derive.{parameter.name}", str(exc)) from None
            parameters[parameter.name] = value
            labels[parameter.name] = value_label(value)
            _write(document, parameter.path, value)
    except PathError as exc:
        problem = f"{spec.source}: {exc}"
    name = variant_name(spec, labels)
    identity = document
    if problem is None and normalise is not None:
        try:
            identity = normalise(_copy(document), name)
        except InputError as exc:
            problem = str(exc)
    # keys in document order: the order of entries may matter (an accelerator's memories, innermost first)
    text = json.dumps(identity, default=str, separators=(",", ":"))
    if problem is not None:
        text += problem + name  # never merged with another variant
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return Variant(name, digest, parameters, labels, None if problem else document, problem)


def _write(document: dict, path: str, value) -> None:
    """Set ``path``; a key the document leaves out (a field with a default) is added; a path
    whose parent is missing (a memory another fragment option removed) is skipped."""
    if documents.exists(document, path):
        documents.set_value(document, path, value)
        return
    parent, _, _ = path.rpartition(".")
    if parent and isinstance(
        documents.get(document, parent) if documents.exists(document, parent) else None, dict
    ):
        documents.add(document, path, value)


def _lookup(document: dict, parameters: dict, aliases: dict):
    def lookup(name: str):
        if name in parameters:
            return parameters[name]
        path = aliases.get(name, name)
        try:
            value = documents.get(document, path)
        except PathError as exc:
            raise expressions.ExpressionError(f"unknown name or path {exc}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise expressions.ExpressionError(f"'{name}' is {value!r}, not a number")
        return value

    return lookup


def resolve_value(raw: Any) -> Any:
    """A varied value as written into the document: quantities (``64KiB``) become numbers; lists
    are resolved entry by entry; anything else is kept."""
    if isinstance(raw, str):
        parsed = expressions.quantity(raw)
        return (
            parsed[0]
            if parsed is not None
            and parsed[1] in (None, "size")
            and raw.strip() != ""
            and not raw.strip().isidentifier()
            else raw
        )
    if isinstance(raw, list):
        return [resolve_value(v) for v in raw]
    return raw


def value_label(raw: Any) -> str:
    """How a value appears in a variant's name: as written (``64KiB``), lists joined by ``x``, a
    core file by its core name (``cores/tpu_like.yaml`` -> ``tpu_like``), a core document by its name."""
    if isinstance(raw, list):
        return "x".join(value_label(v) for v in raw)
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return value_label(raw["name"])
    if isinstance(raw, str) and raw.strip().endswith((".yaml", ".yml")):
        return PurePath(raw.strip()).stem
    if isinstance(raw, bool):
        return "on" if raw else "off"
    if isinstance(raw, float):
        return f"{raw:g}"
    return str(raw).replace(" ", "")


def _short(name: str) -> str:
    """A parameter's label in names: a declared short name as is, a path by its last key."""
    steps = documents.parse_path(name) if not name.isidentifier() else (name,)
    keys = [s for s in steps if isinstance(s, str)]
    indices = "".join(str(s) for s in steps[len(steps) - 1 :] if isinstance(s, int))
    return (keys[-1] + indices) if keys else name


def _joined(label: str, value: str) -> str:
    """``ub`` + ``64KiB`` -> ``ub64KiB``; ``D1`` + ``16`` -> ``D1_16`` (digits kept apart)."""
    return f"{label}_{value}" if label[-1:].isdigit() and value[:1].isdigit() else f"{label}{value}"


def variant_name(spec: VariantSpec, labels: dict) -> str:
    """The readable name of a variant: ``name_format`` filled in, else the base name and each
    parameter's label and value (derived values are not part of the name)."""
    if spec.name_format is not None:
        fields = {re.sub(r"\W", "_", k): v for k, v in labels.items()}
        try:
            text = spec.name_format.format(**fields, base=spec.base_name)
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(
                spec.source,
                "name_format",
                f"names {exc}, which is not a parameter "
                f"(parameters: {', '.join(fields) or 'none'})",
            ) from None
    else:
        derived = {p.name for p in spec.derived}
        parts = [spec.base_name] + [
            _joined(_short(k), v) if k not in dict(spec.fragments) else v
            for k, v in labels.items()
            if k not in derived
        ]
        text = "-".join(parts)
    return re.sub(r"[^A-Za-z0-9_.+@-]", "_", text)


def _unique_names(variants: list[Variant]) -> list[Variant]:
    """Distinct variants that got the same name (a name_format that leaves a parameter out)
    are told apart by their id."""
    counts: dict[str, int] = {}
    for variant in variants:
        counts[variant.name] = counts.get(variant.name, 0) + 1
    return [
        v
        if counts[v.name] == 1
        else Variant(
            f"{v.name}-{v.id[:6]}", v.id, v.parameters, v.labels, v.document, v.problem, v.aliases
        )
        for v in variants
    ]
