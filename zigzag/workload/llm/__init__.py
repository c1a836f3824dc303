"""Language-model workloads built from a model configuration (no export needed).

``build_layer_specs(config, phase=..., ...)`` gives the layers of one prefill or decode step of a model (a
:class:`ModelConfig`, or a mapping of its Hugging Face ``config.json`` keys) and its
:class:`~zigzag.workload.inference.Inference` metadata. Reading configurations and ``llm:`` workload files
(catalogue names, ``config.json`` paths) is ``zigzag.io.llm_workloads``'s.
"""

from __future__ import annotations

import re
from typing import Any

from zigzag.errors import InputError
from zigzag.workload.inference import PHASES, Inference
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.config import ModelConfig, config_from_hf
from zigzag.workload.llm.families import (
    Step,
    attended_keys,
    build_layers,
    distinct_experts,
    expert_loads,
    expert_slices,
)
from zigzag.workload.llm.figures import StepFigures, parameters, step_figures
from zigzag.workload.llm.arch_layers import arch_tokens, build_arch_layers
from zigzag.workload.operators import Precision

__all__ = [
    "ModelConfig",
    "Inference",
    "Precision",
    "Step",
    "config_from_hf",
    "build_layer_specs",
    "precision_of",
    "check_positions",
    "expert_loads",
    "expert_slices",
    "distinct_experts",
    "attended_keys",
    "StepFigures",
    "step_figures",
    "parameters",
    "ROUTINGS",
    "MLA_FORMS",
    "OPERATOR_SETS",
]

#: ``all``: every operator as a layer; ``zigzag``: only the matrix products are layers, the rest carry
#: dependencies (as an ONNX export read with the default ``operators="zigzag"``)
OPERATOR_SETS = ("all", "zigzag")
#: how a mixture of experts' tokens spread over its experts (or a list of load shares, one per expert)
ROUTINGS = ("uniform", "balanced")
#: forms of multi-head latent attention
MLA_FORMS = ("absorbed", "naive")


def precision_of(value: Any, file: str | None = None, where: str = "precision") -> Precision:
    """Bits per operand role from a whole number (all roles) or ``{weights, activations, kv_cache}``."""
    if isinstance(value, Precision):
        return value
    if value is None:
        return Precision()
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return Precision(value, value, value)
    if isinstance(value, dict) and set(value) <= {"weights", "activations", "kv_cache"}:
        for key, bits in value.items():
            if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
                raise InputError(
                    file,
                    f"{where}.{key}",
                    f"must be a whole number of bits of at least 1, got {bits!r}",
                )
        return Precision(**value)
    typed = re.fullmatch(r"[a-z]*?(\d+)", value.strip().lower()) if isinstance(value, str) else None
    if typed:
        raise InputError(
            file, where, f"is given as '{value}'; give its bits as a number, e.g. {typed.group(1)}"
        )
    raise InputError(
        file,
        where,
        f"must be bits for all operands (e.g. 8) or a mapping of weights, "
        f"activations and kv_cache bits, got {value!r}",
    )


def build_layer_specs(
    model: ModelConfig | dict,
    *,
    phase: str = "prefill",
    tokens: int | None = None,
    context: int = 0,
    batch: int = 1,
    precision: Any = None,
    layers: int | None = None,
    causal_blocks: int | None = None,
    logits: str = "all",
    operators: str = "all",
    routing: Any = "uniform",
    mla: str | None = None,
    file: str | None = None,
) -> tuple[list[dict], Inference]:
    """The layer dicts (``read_onnx``'s form, ids in processing order) of one step of ``model`` (a
    :class:`ModelConfig`, or the mapping of a ``config.json``: keys that do not shape layers are ignored)
    and its metadata. ``phase``: ``prefill`` of ``tokens`` new tokens after ``context`` cached ones (default 0)
    or ``decode`` of one token after ``context``; ``layers``: transformer blocks (default: the model's);
    ``causal_blocks``: query-row blocks of a causal prefill (0: masked work counted in full; default 8, or 0
    with ``operators="zigzag"`` as the ZigZag-compatible import);
    ``logits``: ``all`` positions or the ``last``; ``operators``: one of ``OPERATOR_SETS``; ``routing``: how
    a mixture of experts' tokens spread (``ROUTINGS``, or a list of load shares, one per expert); ``mla``:
    the form of multi-head latent attention (``MLA_FORMS``; default absorbed for a decode step, naive for a
    prefill)."""
    at = (lambda key: f"llm.{key}") if file else (lambda key: key)  # noqa: E731 - the field as written
    cfg = (
        model
        if isinstance(model, (ModelConfig, ArchConfig))
        else config_from_hf(model, file, where=at("model"))
    )
    if isinstance(cfg, ArchConfig):
        tokens = arch_tokens(cfg, phase, tokens, file, at)
    if phase not in PHASES:
        raise InputError(
            file, at("phase"), f"unallowed value {phase!r}; use one of: {', '.join(PHASES)}"
        )
    if phase == "decode":
        if not cfg.causal:
            raise InputError(
                file,
                at("phase"),
                f"{cfg.name} ({cfg.model_type}) is an encoder: it has no decode "
                "step; use phase: prefill",
            )
        if tokens not in (None, 1):
            raise InputError(
                file,
                at("tokens"),
                f"a decode step computes 1 token, got {tokens}; leave tokens out "
                "(or use phase: prefill)",
            )
        tokens = 1
    elif tokens is None:
        raise InputError(file, at("tokens"), "a prefill needs its sequence length; add tokens: <S>")
    if causal_blocks is None:
        causal_blocks = 8 if operators == "all" else 0
    for key, value, least in (
        ("tokens", tokens, 1),
        ("context", context, 0),
        ("batch", batch, 1),
        ("causal_blocks", causal_blocks, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InputError(
                file, at(key), f"must be a whole number of at least {least}, got {value!r}"
            )
    if layers is not None and (
        isinstance(layers, bool) or not isinstance(layers, int) or layers < 1
    ):
        raise InputError(
            file, at("layers"), f"must be a whole number of at least 1, got {layers!r}"
        )
    for key, value, allowed in (
        ("logits", logits, ("all", "last")),
        ("operators", operators, OPERATOR_SETS),
    ):
        if value not in allowed:
            raise InputError(
                file, at(key), f"unallowed value {value!r}; use one of: {', '.join(allowed)}"
            )
    check_positions(cfg, context, tokens, file, at)
    routing = _routing(routing, cfg, file, at("routing"))
    if mla is not None and mla not in MLA_FORMS:
        raise InputError(
            file, at("mla"), f"unallowed value {mla!r}; use one of: {', '.join(MLA_FORMS)}"
        )
    if layers is not None:
        if layers > cfg.layers:
            raise InputError(
                file,
                at("layers"),
                f"{layers} blocks, but {cfg.name} has {cfg.layers}; give at most {cfg.layers}",
            )
        cfg = cfg.with_layers(layers)
    step = Step(
        batch=batch,
        tokens=tokens,
        past=context,
        precision=precision_of(precision, file, at("precision")),
        causal_blocks=causal_blocks,
        logits=logits,
        routing=routing,
        mla=mla or "",
    )
    specs = build_arch_layers(cfg, step) if isinstance(cfg, ArchConfig) else build_layers(cfg, step)
    if operators == "zigzag":
        specs = _matrix_products_only(specs)
    return specs, Inference(
        model=cfg.name, phase=phase, batch=batch, tokens=tokens, context=context, layers=cfg.layers
    )


def check_positions(cfg: ModelConfig, context: int, tokens: int, file=None, at=str) -> None:
    """A one-line error when ``context + tokens`` positions exceed what ``cfg`` attends: GPT-2's and
    BERT's learned positions, or ``max_position_embeddings`` (stretched by ``rope_scaling``)."""
    limit = cfg.position_limit or cfg.max_positions
    if context + tokens <= limit:
        return
    if cfg.family in ("gpt2", "bert"):
        what = "learned positions"
    elif limit > cfg.max_positions:
        what = "positions (max_position_embeddings stretched by rope_scaling)"
    else:
        what = "positions (max_position_embeddings; a rope_scaling entry stretches it)"
    field = "context" if context else "tokens"
    raise InputError(
        file,
        at(field),
        f"{context + tokens} positions exceed the {limit} {what} of {cfg.name}; "
        f"use a {field} of at most {limit - (tokens if context else 0)}",
    )


def _routing(value: Any, cfg: ModelConfig, file: str | None, where: str):
    """The routing as ``Step`` takes it: a name of ``ROUTINGS`` or a tuple of load shares."""
    if value in ROUTINGS:
        return value
    if isinstance(value, (list, tuple)) and cfg.experts and len(value) == cfg.experts:
        if (
            all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in value)
            and sum(value) > 0
        ):
            return tuple(float(v) for v in value)
    experts = f"{cfg.experts} " if cfg.experts else ""
    raise InputError(
        file,
        where,
        f"must be one of {', '.join(ROUTINGS)} or a list of {experts}load shares (numbers of at "
        f"least 0, one per expert), got {value!r}",
    )


def _matrix_products_only(specs: list[dict]) -> list[dict]:
    """Vector layers become dependency-only nodes (the default ONNX import keeps only matrix products)."""
    return [
        spec
        if spec.get("vector_op") is None
        else {
            "kind": "dummy",
            "id": spec["id"],
            "name": spec["name"],
            "type": spec["vector_op"],
            "operand_source": {k: v for k, v in spec["operand_source"].items() if v != spec["id"]},
        }
        for spec in specs
    ]
