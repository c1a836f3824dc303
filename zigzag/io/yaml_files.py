"""Reading YAML input files, with every failure turned into a one-line `InputError`.

Duplicated keys are not an error: like `yaml.safe_load`, the last occurrence wins (the shipped
`tpu_like.yaml` relies on this for `sram_2MB.ports`).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from zigzag.errors import InputError, missing_file

#: libyaml's parser where PyYAML was built with it (the same documents, ~10x faster)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: str | Path) -> object:
    """Return the parsed content of the YAML file at `path` (None for an empty file)."""
    text = _read_text(Path(path))
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as err:
        raise _syntax_error(path, err) from None


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


def _syntax_error(path: str | Path, err: yaml.YAMLError) -> InputError:
    """Describe a YAML syntax error with its 1-based line and column."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    detail = f"{context}, {problem}" if context else problem
    return InputError(path, where, f"malformed YAML ({detail}); fix the syntax at this position")
