"""The block structure of the newer decoder families, from the keys of their ``config.json``: which blocks
have sliding, chunked or full attention, which have a mixture of experts or rotary positions, and the
variants of norms, projections and attention each family uses. Every key read is checked (one line naming
the file, the key and the fix); keys the layers do not model are named in a warning."""

from __future__ import annotations

import logging
from typing import Any

from zigzag.errors import InputError
from zigzag.workload.llm.keys import EXTRA_KEYS, KEYS, SIGNATURES, UNMODELLED

logger = logging.getLogger(__name__)

#: fields read from a model type's keys that are folded into others (not fields of ModelConfig)
RAW_FIELDS = ("shared_experts", "dense_first", "moe_step", "chunk", "sliding_pattern")
#: what each model type's blocks are, beyond its keys
_FIXED: dict[str, dict[str, Any]] = {
    "qwen3": {"qk_norm": "head"},
    "qwen3_moe": {"qk_norm": "head"},
    "gemma2": {"norm_placement": "sandwich", "embed_scale": True},
    "gemma3_text": {"norm_placement": "sandwich", "embed_scale": True, "qk_norm": "head"},
    "phi3": {"fused_qkv": True, "fused_gate_up": True},
    "olmo2": {"norm_placement": "post", "qk_norm": "full"},
    "falcon": {"norm_kind": "layernorm", "fused_qkv": True, "gated": False},
    "gpt_neox": {"norm_kind": "layernorm", "fused_qkv": True, "gated": False, "mlp_bias": True},
    "deepseek_v3": {"router": "sigmoid"},
    "llama4_text": {"router": "sigmoid"},
}


def _fail(file, key: str, message: str):
    raise InputError(file, key, message)


def _whole(file, key: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        _fail(file, key, f"must be a whole number of at least {least}, got {value!r}")
    return value


def _flag(file, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        _fail(file, key, f"must be true or false, got {value!r}")
    return value


def _per_layer(file, key: str, value: Any, layers: int, allowed: tuple) -> list:
    if not isinstance(value, list) or len(value) != layers or any(v not in allowed for v in value):
        _fail(
            file,
            key,
            f"must be a list of {layers} values (one per block), each one of "
            f"{', '.join(map(str, allowed))}; got {value!r}",
        )
    return value


def _indices(file, key: str, value: Any, layers: int) -> set[int]:
    if not isinstance(value, list) or any(
        isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < layers for i in value
    ):
        _fail(file, key, f"must be a list of block indices from 0 to {layers - 1}, got {value!r}")
    return set(value)


def structure(model_type: str, values: dict, data: dict, file) -> dict:
    """``values`` (the fields read from the model type's keys) completed with the block structure; the
    raw fields (``RAW_FIELDS``) folded in."""
    if model_type not in _FIXED:
        return values
    values = values | _FIXED[model_type]
    extra = {key: data.get(key, default) for key, default in EXTRA_KEYS.get(model_type, {}).items()}
    layers = values["layers"]
    hf = {field: key for field, (key, _) in KEYS[model_type].items()}
    for field in ("rotary_fraction", "attn_softcap", "final_softcap"):
        value = values.get(field)
        if value is None:
            values[field] = 0.0 if field != "rotary_fraction" else 1.0
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            _fail(file, hf[field], f"must be a positive number (or null), got {value!r}")
        else:
            values[field] = float(value)
    if values.get("rotary_fraction", 1.0) > 1:
        _fail(file, hf["rotary_fraction"], "must be at most 1 (the share of a head rotated)")
    _spans(model_type, values, extra, data, file)
    _experts(model_type, values, extra, file)
    if model_type == "falcon":
        for key in ("multi_query", "new_decoder_architecture", "parallel_attn", "alibi"):
            _flag(file, key, extra[key])
        if not extra["new_decoder_architecture"]:
            values["kv_heads"] = 1 if extra["multi_query"] else values["heads"]
        values["parallel"] = (
            2 if extra["new_decoder_architecture"] else 1 if extra["parallel_attn"] else 0
        )
        if extra["alibi"]:
            values["rope_layers"] = (False,) * layers
    if model_type == "gpt_neox":
        values["parallel"] = (
            2 if _flag(file, "use_parallel_residual", extra["use_parallel_residual"]) else 0
        )
    if model_type == "llama4_text":
        if _flag(file, "use_qk_norm", extra["use_qk_norm"]):
            values["qk_norm"] = "l2"
        nope = extra["no_rope_layers"]
        rope = (
            [int((i + 1) % 4 != 0) for i in range(layers)]
            if not nope
            else _per_layer(file, "no_rope_layers", nope, layers, (0, 1))
        )
        values["rope_layers"] = tuple(bool(r) for r in rope)
        chunk = values.get("chunk")
        values["spans"] = tuple(
            ("chunked", chunk) if chunk and values["rope_layers"][i] else ("full", 0)
            for i in range(layers)
        )
    if model_type == "deepseek_v3":
        if values.get("q_lora_rank") is None:
            values["q_lora_rank"] = 0
        values["head_dim"] = values["qk_nope_dim"] + values["qk_rope_dim"]
        values["kv_heads"] = values["heads"]
        for key in ("scoring_func",):
            if extra[key] not in ("sigmoid", "softmax"):
                _fail(file, key, f"unallowed value {extra[key]!r}; use sigmoid or softmax")
        values["router"] = extra["scoring_func"]
    for field in RAW_FIELDS:
        values.pop(field, None)
    return values


def _spans(model_type: str, values: dict, extra: dict, data: dict, file) -> None:
    layers, window = values["layers"], values.get("sliding_window") or 0
    if model_type in ("gemma2", "gemma3_text", "qwen3", "qwen3_moe"):
        kinds = extra.get("layer_types")
        if kinds is not None:
            kinds = _per_layer(
                file, "layer_types", kinds, layers, ("sliding_attention", "full_attention")
            )
            local = [kind == "sliding_attention" for kind in kinds]
        elif model_type == "gemma2":
            local = [i % 2 == 0 for i in range(layers)]
        elif model_type == "gemma3_text":
            pattern = values.get("sliding_pattern") or 6
            local = [(i + 1) % pattern != 0 for i in range(layers)]
        else:  # Qwen3: the blocks from max_window_layers on slide, with use_sliding_window
            if not _flag(file, "use_sliding_window", extra["use_sliding_window"]):
                window = 0
            first = extra.get("max_window_layers")
            first = layers if first is None else _whole(file, "max_window_layers", first, 0)
            local = [i >= first for i in range(layers)]
        if window:
            values["spans"] = tuple(("sliding", window) if s else ("full", 0) for s in local)
        values["sliding_window"] = 0 if values.get("spans") else window


def _experts(model_type: str, values: dict, extra: dict, file) -> None:
    if not values.get("experts"):
        return
    layers, step = values["layers"], values.get("moe_step") or 1
    if model_type == "qwen3_moe":
        dense = _indices(file, "mlp_only_layers", extra["mlp_only_layers"], layers)
        values["moe_layers"] = tuple(i not in dense and (i + 1) % step == 0 for i in range(layers))
    elif model_type == "deepseek_v3":
        first = values.get("dense_first") or 0
        values["moe_layers"] = tuple(i >= first and i % step == 0 for i in range(layers))
        values["shared_intermediate"] = (values.get("shared_experts") or 0) * values[
            "expert_intermediate"
        ]
    elif model_type == "llama4_text":
        given = extra["moe_layers"]
        moe = (
            {i for i in range(layers) if (i + 1) % step == 0}
            if given is None
            else _indices(file, "moe_layers", given, layers)
        )
        values["moe_layers"] = tuple(i in moe for i in range(layers))
        values["shared_intermediate"] = values["expert_intermediate"]


def warn_unmodelled(model_type: str, data: dict, file) -> None:
    """Warn about keys of ``model_type`` set to what the layers do not model, and about keys that belong
    to other model types (the file may be labelled with the wrong ``model_type``)."""
    where = f"{file}: " if file else ""
    for key, (default, what) in (UNMODELLED.get(model_type, {}) | UNMODELLED["*"]).items():
        value = data.get(key, default)
        if value not in (default, None, 0, False):
            shown = "given" if isinstance(value, (dict, list)) else f"= {value!r}"
            logger.warning("%s%s %s is not modelled: %s", where, key, shown, what)
    if model_type not in KEYS:  # a multimodal wrapper: its text_config is checked on its own
        return
    read = {key for key, _ in KEYS[model_type].values()} | set(EXTRA_KEYS.get(model_type, {}))
    foreign = sorted(
        key for key in data if key in SIGNATURES and key not in read and data[key] is not None
    )
    if foreign:
        types = sorted({t for key in foreign for t in SIGNATURES[key]})
        logger.warning(
            "%s%s belong to model type %s, not to model_type %s: its layers ignore them; "
            "check model_type",
            where,
            ", ".join(foreign),
            " or ".join(types),
            model_type,
        )
