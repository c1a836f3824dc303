"""The inference metadata of an LLM workload (phase, batch, tokens, context), checked.

It comes from the workload (the configuration generator or the ONNX importer set
``Workload.inference``) and can be overridden from the command line, the API or a config. Read
here into a plain dict ``{model, phase, batch, tokens, context, layers}``:

* ``phase``: ``prefill`` (one step over ``tokens`` = S prompt tokens, no past) or ``decode``
  (one step producing one token per sequence, ``context`` = C tokens already in the KV cache);
* ``batch``: sequences processed together (B).
"""

from __future__ import annotations

from typing import Any

from zigzag.errors import InputError

PHASES = ("prefill", "decode")
#: the fields a user may override, with their checks
OVERRIDABLE = ("phase", "batch", "tokens", "context")


def _as_dict(inference: Any) -> dict:
    if inference is None:
        return {}
    if isinstance(inference, dict):
        return dict(inference)
    if hasattr(inference, "to_dict"):
        return dict(inference.to_dict())
    return {
        k: getattr(inference, k)
        for k in ("model", "phase", "batch", "tokens", "context", "layers")
        if hasattr(inference, k)
    }


def read_inference(
    inference: Any = None, overrides: dict | None = None, *, source: str = "inference"
) -> dict | None:
    """The checked metadata: the workload's ``inference`` (an object with ``to_dict()``, a dict
    or None) with ``overrides`` (phase, batch, tokens, context; None values ignored) on top.
    None when neither gives a phase (not an LLM workload). A decode step defaults to one token
    per sequence; a prefill step to no context."""
    data = _as_dict(inference)
    for key, value in (overrides or {}).items():
        if key not in OVERRIDABLE:
            raise InputError(source, key, f"unknown field; give one of {', '.join(OVERRIDABLE)}")
        if value is not None:
            data[key] = value
    if data.get("phase") is None:
        if any(data.get(k) is not None for k in OVERRIDABLE):
            raise InputError(
                source, "phase", "missing; say whether the workload is a prefill or a decode step"
            )
        return None
    if data["phase"] not in PHASES:
        raise InputError(source, "phase", f"{data['phase']!r} is not one of {', '.join(PHASES)}")
    data.setdefault("batch", 1)
    if data.get("tokens") is None:
        data["tokens"] = 1 if data["phase"] == "decode" else None
    if data.get("context") is None:
        data["context"] = 0 if data["phase"] == "prefill" else None
    for key, least in (("batch", 1), ("tokens", 1), ("context", 0)):
        value = data.get(key)
        if value is None:
            what = (
                "the prompt length S"
                if key == "tokens"
                else "the tokens already in the KV cache (C)"
            )
            raise InputError(source, key, f"missing for a {data['phase']} step; give {what}")
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InputError(source, key, f"{value!r} is not a whole number of at least {least}")
    return {
        "model": data.get("model"),
        "phase": data["phase"],
        "batch": data["batch"],
        "tokens": data["tokens"],
        "context": data["context"],
        "layers": data.get("layers"),
    }
