"""Reading YAML input files, with every failure turned into a one-line `InputError`.

The reading is strict where YAML 1.1 (PyYAML) is lax or silent:

* a key given twice in one mapping with different values is an error naming the key and both
  lines (YAML keeps the last one without a word); given twice with the same value (Stream's
  ``tpu_like_quad_core_resnet18_fixed_split.yaml`` does) it is one warning. The one exception is
  ``ports`` in a ZigZag memory (:data:`REPEATABLE`): the reference's own ``tpu_like.yaml`` gives
  it twice with different values and ZigZag uses the second; so do we, with an info-level note
  (logged, not printed at every run of that file);
* numbers are read as YAML 1.2 and JSON write them (``1.95e3``, ``1e-5``: text in YAML 1.1), and a
  number too large for a float is an error saying so;
* a tab in the indentation is named as such.
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path

import yaml

from zigzag.errors import InputError, missing_file

logger = logging.getLogger(__name__)

#: libyaml's parser where PyYAML was built with it (the same documents, ~10x faster)
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: the keys a file may give twice (one warning, the second used): ZigZag's tpu_like.yaml repeats
#: ``ports`` in a memory
REPEATABLE = ("ports",)

#: YAML 1.2 / JSON floats that YAML 1.1 reads as text: an exponent without a dot or without a sign
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


class _StrictError(yaml.MarkedYAMLError):
    """A problem found while building the document (duplicate key, overflowing number)."""


class _StrictLoader(_BASE_LOADER):
    """The safe loader with duplicate keys refused and YAML 1.2 numbers."""

    file = ""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = (key_node.tag, key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                first_line, first_value = seen[key]
                same = self._value(first_value) == self._value(value_node)
                if not (same or key_node.value in REPEATABLE):
                    raise _StrictError(
                        None,
                        None,
                        f"key '{key_node.value}' is given twice with different values (lines "
                        f"{first_line} and {line}); keep the one you mean",
                        key_node.start_mark,
                    )
                # ZigZag's own tpu_like.yaml repeats a memory's ports: noted, not warned at every run
                (logger.info if key_node.value in REPEATABLE and not same else logger.warning)(
                    "%s: line %d: '%s' is given twice (lines %d and %d%s); the second is used",
                    self.file,
                    line,
                    key_node.value,
                    first_line,
                    line,
                    ", the same value" if same else "",
                )
            seen[key] = (line, value_node)
        return super().construct_mapping(node, deep=deep)

    def _value(self, node):
        """The value a node stands for (only called for the nodes of a repeated key)."""
        return self.construct_object(node, deep=True)

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        if math.isinf(value) and "inf" not in node.value.lower():
            raise _StrictError(
                None,
                None,
                f"the number {node.value} is too large (a float holds at most ~1.8e308); "
                "give a smaller value",
                node.start_mark,
            )
        return value


_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789"))
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_yaml_float)
_StrictLoader.add_constructor(
    "tag:yaml.org,2002:map", _StrictLoader.construct_yaml_map
)  # the mapping constructor goes through construct_mapping above


def load_yaml(path: str | Path) -> object:
    """Return the parsed content of the YAML file at `path` (None for an empty file)."""
    return parse_yaml(_read_text(Path(path)), path)


def parse_yaml(text: str, source: str | Path) -> object:
    """Parse YAML ``text`` strictly (see the module); errors name ``source``."""
    loader = _StrictLoader(text)
    loader.file = str(source)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as err:
        raise _syntax_error(source, err, text) from None
    finally:
        loader.dispose()


def with_strict_numbers(loaded, strict):
    """``loaded`` (a document another YAML 1.1 reader built, e.g. Snakemake's config) with the
    numbers that reader kept as text (``1.95e3``) replaced by the strict reading's floats."""
    if isinstance(loaded, dict) and isinstance(strict, dict):
        return {k: with_strict_numbers(v, strict.get(k)) for k, v in loaded.items()}
    if isinstance(loaded, list) and isinstance(strict, list) and len(loaded) == len(strict):
        return [with_strict_numbers(a, b) for a, b in zip(loaded, strict)]
    if isinstance(loaded, str) and isinstance(strict, float) and _FLOAT_12.match(loaded.strip()):
        return strict
    return loaded


def _read_text(path: Path) -> str:
    """Return the file's text, or raise an `InputError` saying why it cannot be read."""
    if not path.exists():
        raise missing_file(path)
    if path.is_dir():
        raise InputError(path, None, "is a directory, not a file; give the path of a .yaml file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(
            path, None, "is not UTF-8 text; save it as a UTF-8 encoded YAML file"
        ) from None
    except OSError as err:
        raise InputError(
            path, None, f"cannot be read ({err.strerror}); check its permissions"
        ) from None


def _tab_at(text: str, mark) -> bool:
    """Whether the line of ``mark`` has a tab before or at its column."""
    lines = text.splitlines()
    if mark is None or mark.line >= len(lines):
        return False
    return "\t" in lines[mark.line][: mark.column + 1]


def _syntax_error(path: str | Path, err: yaml.YAMLError, text: str = "") -> InputError:
    """Describe a YAML syntax error with its 1-based line and column."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
    problem = getattr(err, "problem", None) or str(err)
    if isinstance(err, _StrictError):
        return InputError(path, where, problem)
    if _tab_at(text, mark) or "tab character" in problem:
        return InputError(
            path, where, "a tab character; YAML indents with spaces only: replace the tab by spaces"
        )
    context = getattr(err, "context", None)
    detail = f"{context}, {problem}" if context else problem
    return InputError(path, where, f"malformed YAML ({detail}); fix the syntax at this position")
