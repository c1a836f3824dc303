"""Sealed JSON files: a cache entry or an intermediate file that carries its own integrity.

A sealed file is one JSON object whose first field is the key it was computed for (when it has
one) and whose last field, ``"sha256"``, is the SHA-256 of every byte written before that field.
Checking one costs a read and a hash (no JSON parse), so a reader checks every file it takes from
a cache; a file cut short, emptied, overwritten with garbage, or still JSON but altered by hand
fails the check (:class:`DamagedFile`, with the reason), and the reader recomputes it instead of
using it. Writes are atomic (:mod:`zigzag.io.atomic`), so a run that is killed leaves no
half-written file under the final name.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring_ascii
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic

FIELD = "sha256"
_TRAILER = f',"{FIELD}":"'
#: ``json.dumps(data, separators=(",", ":"))`` without its per-call set-up (an encoder object, a
#: circular-reference memo): the same C encoder and text, ~20 % less time for a 4 kB layer result
_COMPACT = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None,
        json.JSONEncoder().default,
        encode_basestring_ascii,
        None,
        ":",
        ",",
        False,
        False,
        True,
    )
)


class DamagedFile(Exception):
    """A sealed file that must not be used: ``path`` and the ``reason`` (one line)."""

    def __init__(self, path, reason: str, *, legacy: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason
        #: a whole JSON object without a checksum: written by a version before sealed files
        self.legacy = legacy


def sealed_text(data: dict, key: str | None = None) -> str:
    """``data`` (a dict, compact JSON) with ``key`` first and the checksum field last."""
    if key is not None:
        data = {"key": key, **{name: value for name, value in data.items() if name != "key"}}
    body = compact_json(data)
    if body == "{}":
        body = '{"empty":true}'
    body = body[:-1]
    return f'{body}{_TRAILER}{hashlib.sha256(body.encode()).hexdigest()}"}}\n'


def compact_json(data) -> str:
    """``json.dumps(data, separators=(",", ":"))`` (``data`` holds no reference cycle)."""
    if _COMPACT is None:  # an interpreter without the C encoder
        return json.dumps(data, separators=(",", ":"))
    return "".join(_COMPACT(data, 0))


def unseal(text: str, path, key: str | None = None) -> dict:
    """The data of a sealed file's ``text`` (without its checksum field), checked: a DamagedFile
    when it is empty, cut short, not JSON, altered or computed for another key than ``key``."""
    body = _checked_body(text, path)
    try:
        data = json.loads(body + "}")
    except json.JSONDecodeError:
        raise DamagedFile(path, "not JSON") from None
    if key is not None and data.get("key") != key:
        raise DamagedFile(path, f"computed for key {data.get('key')!r}, not for {key!r}")
    return data


def _checked_body(text: str, path) -> str:
    """The text before a sealed file's checksum field, which it matches (else a DamagedFile)."""
    if not text.strip():
        raise DamagedFile(path, "empty")
    at = text.rfind(_TRAILER)
    if at < 0 or not text.rstrip().endswith('"}'):
        raise DamagedFile(
            path,
            "incomplete (cut short, garbage, or written without a checksum)",
            legacy=_is_legacy(text),
        )
    body, digest = text[:at], text[at + len(_TRAILER) :].rstrip()[:-2]
    if hashlib.sha256(body.encode()).hexdigest() != digest:
        raise DamagedFile(path, "its content does not match its checksum (altered or damaged)")
    return body


def _is_legacy(text: str) -> bool:
    """Whether ``text`` is a JSON object without a checksum field (an older version's file; one
    with the field, rewritten by hand, is damaged)."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and FIELD not in data


def read_sealed(path: str | Path, key: str | None = None) -> dict:
    """The checked data of the sealed file at ``path`` (FileNotFoundError when there is none)."""
    try:
        with open(path) as file:
            text = file.read()
    except UnicodeDecodeError:
        raise DamagedFile(path, "not text (garbage)") from None
    return unseal(text, path, key)


def write_sealed(path: str | Path, data: dict, key: str | None = None) -> None:
    """Write ``data`` sealed (atomically)."""
    write_text_atomic(path, sealed_text(data, key))


def is_sound(path: str | Path, key: str | None = None) -> bool:
    """Whether ``path`` exists and passes the check, without reading its JSON (a tenth of the
    time): text that matches its checksum is what :func:`sealed_text` wrote, whose key, when it
    has one, comes first."""
    try:
        body = _checked_body(Path(path).read_text(), path)
    except (OSError, UnicodeDecodeError, DamagedFile):
        return False
    if key is None:
        return True
    start = '{"key":' + json.dumps(key)
    return body == start or body.startswith(start + ",")


def damage_warning(error: DamagedFile, what: str = "recomputed and replaced") -> str:
    """The one line (for a logger's warning) that reports a damaged file and what is done."""
    return f"{error.path} is damaged ({error.reason}); not used, {what}"


def read_step_file(path: str | Path) -> dict:
    """An intermediate file of the workflow that a later step reads (a parsed input, a plan, an
    experiment's results), checked: a damaged one is a one-line InputError naming it (the next
    run of the workflow removes it and computes it again, see workflow/rules/common.smk)."""
    try:
        return read_sealed(path)
    except DamagedFile as exc:
        raise InputError(
            str(path), None, f"damaged ({exc.reason}); run the workflow again to recompute it"
        ) from None


def remove_damaged(files, *, dry_run: bool = False) -> list[str]:
    """One warning line per damaged file of ``files`` ((path, the key it must hold or None) of
    sealed files that exist), and the file removed so that the workflow computes it again (kept
    on a dry run); the lines."""
    lines, legacy = [], 0
    for path, key in files:
        try:
            read_sealed(path, key)
        except FileNotFoundError:
            continue
        except DamagedFile as exc:
            legacy += exc.legacy
            if not dry_run:
                try:
                    Path(path).unlink(missing_ok=True)
                except OSError:  # a read-only results folder: said by the check that follows
                    pass
            if not exc.legacy:
                what = "computed again" + (" by a real run" if dry_run else "")
                lines.append(f"warning: {damage_warning(exc, what)}")
    if legacy:  # files of an older version: one line for all of them
        verb = "would be removed" if dry_run else "removed"
        lines.append(
            f"note: {legacy} cached or intermediate files written by an older version (no "
            f"checksum) {verb}; they are computed again when needed"
        )
    return lines
