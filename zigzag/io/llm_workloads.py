"""LLM workloads from files: model configurations (a Hugging Face ``config.json``, a YAML file, a catalogue
name) and the ``llm:`` workload document (a ``*.llm.yaml`` file, or any workload YAML whose top level is one
``llm:`` key; docs/reference/workload.md#llm-workloads-from-a-model-configuration). The layers themselves
are built by ``zigzag.workload.llm`` from the configuration read here."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.io.validation.schema import Field, check_value, run_check
from zigzag.io.yaml_files import load_yaml
from zigzag.workload.inference import PHASES
from zigzag.workload.llm import (
    MLA_FORMS,
    OPERATOR_SETS,
    ROUTINGS,
    build_layer_specs,
    check_positions,
    precision_of,
)
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.config import CATALOGUE_FILE, ModelConfig, config_from_hf, describe

# The workflow asks ``model_files`` at every start: the workload model is imported where it is used.


# ----- model configurations ---------------------------------------------------------------------------
def load_model_config(source: Any, *, file: str | None = None, where: str = "model"):
    """A model configuration from a catalogue name, a path to a ``config.json`` / YAML file, a mapping of
    Hugging Face keys, or a :class:`ModelConfig` (returned as is). ``file`` / ``where``: the file and the
    field the source was given in, named in errors about it."""
    if isinstance(source, (ModelConfig, ArchConfig)):
        return source
    if isinstance(source, dict):
        return config_from_hf(source, file, strict=True, where=where)
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        return _from_file(Path(source))
    if isinstance(source, str):
        catalogue = load_catalogue()
        if source.lower() in catalogue:
            return catalogue[source.lower()]
        raise InputError(
            file,
            where,
            f"'{source}' is neither a catalogue name nor a file; catalogue names: "
            f"{', '.join(catalogue)} (or give a path to a config.json or YAML file)",
        )
    raise InputError(
        file, where, f"must be a catalogue name, a file path or a mapping, got {describe(source)}"
    )


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.endswith((".json", ".yaml", ".yml"))


def _from_file(path: Path):
    if path.suffix == ".json":
        if not path.is_file():
            raise InputError(
                path, None, "does not exist; check the path of the model's config.json"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(
                path, None, f"is not valid JSON ({exc}); give a Hugging Face config.json"
            ) from None
        return config_from_hf(
            data, str(path), name=path.name.removesuffix(".json").removesuffix(".config")
        )
    return config_from_hf(load_yaml(path), str(path), name=path.name.split(".")[0], strict=True)


@lru_cache(maxsize=1)
def load_catalogue() -> dict:
    """The catalogue's configurations (:class:`ModelConfig`) by (lower-case) name."""
    entries = load_yaml(CATALOGUE_FILE)
    return {
        name.lower(): config_from_hf(entry["config"], f"{CATALOGUE_FILE.name}: {name}", name=name)
        for name, entry in entries.items()
    }


def catalogue_sources() -> dict[str, str]:
    """Catalogue name -> where its values were published."""
    return {name: entry["source"] for name, entry in load_yaml(CATALOGUE_FILE).items()}


def llm_layer_specs(model: Any, *, file: str | None = None, **step) -> tuple[list[dict], Any]:
    """``zigzag.workload.llm.build_layer_specs`` (layer dicts and inference metadata) for a model given as
    ``load_model_config`` takes it."""
    cfg = load_model_config(model, file=file, where="llm.model" if file else "model")
    return build_layer_specs(cfg, file=file, **step)


# ----- the llm: workload document ---------------------------------------------------------------------
@lru_cache(maxsize=1)
def llm_section_schema():
    """The schema of an ``llm:`` section (``zigzag.io.validation.schema.Field``; ``model`` as text)."""
    bits = Field("int", minimum=1, what="bits, a whole number")
    return Field(
        "dict",
        what="the model and the step: model, phase, tokens, context, batch, ...",
        keys={
            "model": Field(
                "str",
                required=True,
                what="a catalogue name, or the path of a config.json or YAML file",
            ),
            "phase": Field("str", required=True, choices=PHASES, what="prefill or decode"),
            "tokens": Field(
                "int",
                minimum=1,
                nullable=True,
                default=None,
                what="the prompt length S of a prefill",
            ),
            "context": Field("int", minimum=0, default=0, what="tokens already in the KV cache"),
            "batch": Field("int", minimum=1, default=1, what="sequences per step"),
            "layers": Field(
                "int", minimum=1, nullable=True, default=None, what="transformer blocks"
            ),
            "precision": Field(
                "dict",
                nullable=True,
                default=None,
                what="bits per operand role",
                keys={"weights": bits, "activations": bits, "kv_cache": bits},
            ),
            "causal_blocks": Field(
                "int",
                minimum=0,
                nullable=True,
                default=None,
                what="query-row blocks of a causal prefill",
            ),
            "logits": Field("str", choices=("all", "last"), default="all", what="all or last"),
            "operators": Field("str", choices=OPERATOR_SETS, default="all", what="all or zigzag"),
            "routing": Field(
                "str",
                choices=ROUTINGS,
                default="uniform",
                what="uniform or balanced (or a list of load shares, one per expert)",
            ),
            "mla": Field(
                "str",
                choices=MLA_FORMS,
                nullable=True,
                default=None,
                what="absorbed or naive (multi-head latent attention)",
            ),
        },
    )


def read_llm_section(data: Any, file: str | None) -> dict:
    """The validated ``llm:`` section of a document (defaults filled in); a whole-number precision sets
    all three roles; ``model`` may be an inline mapping of Hugging Face keys."""
    if not isinstance(data, dict) or set(data) != {"llm"}:
        extra = sorted(set(data) - {"llm"}) if isinstance(data, dict) else []
        raise InputError(
            file,
            f"'{extra[0]}'" if extra else "top level",
            "an LLM workload has one top-level key, 'llm:'; move the others under it or remove them",
        )
    section = data["llm"]
    inline = shares = None
    if isinstance(section, dict):
        section = dict(section)
        if isinstance(section.get("precision"), int) and not isinstance(section["precision"], bool):
            bits = section["precision"]
            section["precision"] = {"weights": bits, "activations": bits, "kv_cache": bits}
        if isinstance(section.get("model"), dict):
            inline = section["model"]
            section["model"] = "inline"
        if isinstance(section.get("routing"), list):  # load shares: checked when built
            shares = section.pop("routing")
    checked = run_check(file, lambda s: check_value(s, llm_section_schema(), "llm"), section)
    return (
        checked
        | ({"model": inline} if inline is not None else {})
        | ({"routing": shares} if shares is not None else {})
    )


def llm_workload_specs(
    workload: Any,
    file: str | None = None,
    overrides: dict | None = None,
    base: str | Path | None = None,
) -> tuple[list[dict], Any]:
    """The layer dicts and metadata of an LLM workload document (a path or its parsed content);
    ``overrides``: keys of its ``llm:`` section replaced before it is built (e.g. ``{"context": 8192}``).
    A model path is relative to the document's folder (``base`` for a parsed document)."""
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
    if (
        isinstance(model, str)
        and base is not None
        and not Path(model).is_absolute()
        and _looks_like_path(model)
    ):
        model = str(Path(base) / model)
    return llm_layer_specs(model, file=file, **section)


def check_llm_step(document: Any, file: str | None) -> None:
    """The checks of an ``llm:`` document that need no layers (its fields, the model's positions):
    a one-line error naming the field, as building it would give, without building it."""
    section = read_llm_section(document, file)
    cfg = load_model_config(section["model"], file=file, where="llm.model")
    precision_of(section.get("precision"), file, "llm.precision")
    tokens = 1 if section["phase"] == "decode" else section.get("tokens")
    if tokens is None:
        raise InputError(file, "llm.tokens", "a prefill needs its sequence length; add tokens: <S>")
    check_positions(cfg, section["context"], tokens, file, lambda key: f"llm.{key}")


def model_files(workload: str | Path) -> list[str]:
    """The model configuration file an LLM workload file names (a path relative to it), or none: the
    workflow re-parses the workload when that file changes. Other workload files give none (only
    ``*.llm.yaml`` files and small YAML files are read)."""
    path = Path(workload)
    name = path.name.lower()
    small_yaml = name.endswith((".yaml", ".yml")) and path.is_file() and path.stat().st_size < 4096
    if not (name.endswith((".llm.yaml", ".llm.yml")) or small_yaml):
        return []
    try:
        data = load_yaml(path)
    except InputError:
        return []  # reported by the parse step
    model = (
        data.get("llm", {}).get("model")
        if isinstance(data, dict) and isinstance(data.get("llm"), dict)
        else None
    )
    if not isinstance(model, str) or not _looks_like_path(model):
        return []
    model_path = Path(model) if Path(model).is_absolute() else path.parent / model
    return [str(model_path)] if model_path.is_file() else []


def layer_key(spec: dict) -> tuple:
    """What a generated layer and an imported one must share: operator, operation class, equation, loops,
    precisions, operand roles and where each input comes from (the distance back to its producer; None:
    a constant). Names and ids differ."""
    sources = {
        op: None if src == spec["id"] else spec["id"] - src
        for op, src in spec["operand_source"].items()
    }
    return (
        spec["operator_type"],
        spec.get("vector_op"),
        spec["equation"],
        tuple(zip(spec["loop_dims"], spec["loop_sizes"])),
        tuple(sorted(spec["operand_precision"].items())),
        tuple(sorted((spec.get("operand_roles") or {}).items())),
        tuple(sorted(sources.items())),
    )


def compare_with_export(export: str | Path, model: Any, **step) -> list[str]:
    """The differences, layer for layer, between an ONNX export read with ``operators="all"`` and the layers
    generated from ``model`` (as ``load_model_config`` takes it) for the same step: phase, batch, tokens,
    context and blocks are read from the export unless given in ``step``. Empty when they are equal."""
    from zigzag.io.onnx_import import read_onnx
    from zigzag.io.onnx_operators import export_inference
    from zigzag.io.onnx_reading import load_model

    found = export_inference(load_model(str(export), str(export)))
    read = {
        "phase": found["phase"],
        "batch": found["batch"],
        "context": found["context"],
        "layers": found["layers"] or None,
    }
    if found["phase"] == "prefill":
        read["tokens"] = found["tokens"]
    step = read | step
    blocks = 8 if step.get("causal_blocks") is None else step["causal_blocks"]
    imported = [
        s for s in read_onnx(export, operators="all", causal_blocks=blocks) if s["kind"] == "layer"
    ]
    generated, _ = llm_layer_specs(model, **step)
    problems = (
        []
        if len(imported) == len(generated)
        else [f"{len(imported)} layers imported, {len(generated)} generated"]
    )
    for index, (imp, gen) in enumerate(zip(imported, generated)):
        if layer_key(imp) != layer_key(gen):
            problems.append(
                f"layer {index}: imported {imp['name']} {layer_key(imp)} != generated {gen['name']} "
                f"{layer_key(gen)}"
            )
    return problems
