"""The LLM workload document: a YAML file (``*.llm.yaml``, or any workload YAML whose top level has an
``llm:`` key) or a dict, naming a model configuration and the step to evaluate (docs/reference/workload.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zigzag.io.validation.schema import Field, Invalid, check_value, run_check
from zigzag.workload.inference import PHASES, Inference
from zigzag.workload.llm import OPERATOR_SETS, build_layer_specs

_BITS = Field("int", minimum=1, what="bits, a whole number")
LLM_SECTION = Field("dict", what="the model and the step: model, phase, tokens, context, batch, ...", keys={
    "model": Field("str", required=True, what="a catalogue name, or the path of a config.json or YAML file"),
    "phase": Field("str", required=True, choices=PHASES, what="prefill or decode"),
    "tokens": Field("int", minimum=1, nullable=True, default=None, what="the prompt length S of a prefill"),
    "context": Field("int", minimum=0, default=0, what="tokens already in the KV cache"),
    "batch": Field("int", minimum=1, default=1, what="sequences per step"),
    "layers": Field("int", minimum=1, nullable=True, default=None, what="transformer blocks"),
    "precision": Field("dict", nullable=True, default=None, what="bits per operand role",
                       keys={"weights": _BITS, "activations": _BITS, "kv_cache": _BITS}),
    "causal_blocks": Field("int", minimum=0, nullable=True, default=None,
                           what="query-row blocks of a causal prefill"),
    "logits": Field("str", choices=("all", "last"), default="all", what="all or last"),
    "operators": Field("str", choices=OPERATOR_SETS, default="all", what="all or zigzag"),
})


def read_llm_section(data: Any, file: str | None) -> dict:
    """The validated ``llm:`` section of a document (defaults filled in); a whole-number precision sets
    all three roles."""
    if not isinstance(data, dict) or set(data) != {"llm"}:
        extra = sorted(set(data) - {"llm"}) if isinstance(data, dict) else []
        raise_at = f"'{extra[0]}'" if extra else "top level"
        return run_check(file, _fail, (raise_at, "an LLM workload has one top-level key, 'llm:'; move the others "
                                                 "under it or remove them"))
    section = data["llm"]
    if isinstance(section, dict):
        section = dict(section)
        if isinstance(section.get("precision"), int) and not isinstance(section["precision"], bool):
            bits = section["precision"]
            section["precision"] = {"weights": bits, "activations": bits, "kv_cache": bits}
        if isinstance(section.get("model"), dict):
            inline = section.pop("model")
            checked = run_check(file, lambda s: check_value(s, LLM_SECTION, "llm"), section | {"model": "inline"})
            return checked | {"model": inline}
    return run_check(file, lambda s: check_value(s, LLM_SECTION, "llm"), section)


def _fail(problem: tuple[str, str]) -> None:
    raise Invalid(*problem)


def llm_workload_specs(workload: Any, file: str | None = None, overrides: dict | None = None,
                       base: str | Path | None = None) -> tuple[list[dict], Inference]:
    """The layer dicts and metadata of an LLM workload document (a path or its parsed content);
    ``overrides``: keys of its ``llm:`` section replaced before it is built (e.g. ``{"context": 8192}``).
    A model path is relative to the document's folder (``base`` for a parsed document)."""
    from zigzag.io.yaml_files import load_yaml

    if isinstance(workload, (str, Path)):
        file = str(workload)
        base = Path(workload).parent
        data = load_yaml(workload)
    else:
        data = workload
    if overrides and isinstance(data, dict) and isinstance(data.get("llm"), dict):
        data = {"llm": data["llm"] | overrides}
    section = read_llm_section(data, file)
    model = section.pop("model")
    if isinstance(model, str) and base is not None and not Path(model).is_absolute() and ("/" in model or model.endswith((".json", ".yaml", ".yml"))):
        model = str(base / model)
    return build_layer_specs(model, file=file, **section)

