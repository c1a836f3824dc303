"""A language model's configuration: the widths and choices that shape its layers.

Made from the keys of a Hugging Face ``config.json`` (those of its ``model_type``), given as a mapping;
``zigzag.io.llm_workloads`` reads them from a file, a YAML file or the catalogue (``catalogue.yaml``
beside this file).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.workload.llm.arch_config import ARCH_TYPES, arch_config

#: model_type -> family (the block structure)
MODEL_TYPES = {
    "gpt2": "gpt2",
    "bert": "bert",
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "llama",
    "mixtral": "llama",
}
HEADS = ("lm", "pooler", "none")
CATALOGUE_FILE = Path(__file__).with_name("catalogue.yaml")


@dataclass(frozen=True)
class ModelConfig:
    """The shape-determining choices of a transformer (names as in the docs' workload reference)."""

    name: str
    model_type: str  # gpt2 | bert | llama | mistral | qwen2 | mixtral
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_positions: int
    activation: str  # gelu_new (tanh form) | gelu (erf form) | silu
    norm_eps: float
    tie_embeddings: bool
    head: str  # lm | pooler | none
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    type_vocab: int = 0  # BERT's token types
    experts: int = 0  # mixture of experts: experts per layer (0: a dense MLP)
    experts_per_token: int = 0
    rope_theta: float = 0.0
    sliding_window: int = 0  # attention span in tokens (0: the whole context)

    @property
    def family(self) -> str:
        return MODEL_TYPES[self.model_type]

    @property
    def causal(self) -> bool:
        return self.model_type != "bert"

    @property
    def norm(self) -> str:
        return "layernorm" if self.family in ("gpt2", "bert") else "rmsnorm"

    @property
    def rotary(self) -> bool:
        return self.family == "llama"

    @property
    def gated_mlp(self) -> bool:
        return self.family == "llama"

    def with_layers(self, layers: int) -> "ModelConfig":
        return replace(self, layers=layers)


# ----- Hugging Face keys per model type --------------------------------------------------------
# our field -> (HF key, default or _REQUIRED); defaults are those of the transformers config classes
_REQUIRED = object()
_LLAMA_KEYS = {
    "hidden": ("hidden_size", _REQUIRED),
    "layers": ("num_hidden_layers", _REQUIRED),
    "heads": ("num_attention_heads", _REQUIRED),
    "kv_heads": ("num_key_value_heads", None),
    "head_dim": ("head_dim", None),
    "intermediate": ("intermediate_size", _REQUIRED),
    "vocab": ("vocab_size", _REQUIRED),
    "max_positions": ("max_position_embeddings", 2048),
    "activation": ("hidden_act", "silu"),
    "norm_eps": ("rms_norm_eps", 1e-6),
    "tie_embeddings": ("tie_word_embeddings", False),
    "rope_theta": ("rope_theta", 10000.0),
}
_KEYS: dict[str, dict[str, tuple[str, Any]]] = {
    "gpt2": {
        "hidden": ("n_embd", _REQUIRED),
        "layers": ("n_layer", _REQUIRED),
        "heads": ("n_head", _REQUIRED),
        "intermediate": ("n_inner", None),
        "vocab": ("vocab_size", _REQUIRED),
        "max_positions": ("n_positions", 1024),
        "activation": ("activation_function", "gelu_new"),
        "norm_eps": ("layer_norm_epsilon", 1e-5),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "bert": {
        "hidden": ("hidden_size", _REQUIRED),
        "layers": ("num_hidden_layers", _REQUIRED),
        "heads": ("num_attention_heads", _REQUIRED),
        "intermediate": ("intermediate_size", _REQUIRED),
        "vocab": ("vocab_size", _REQUIRED),
        "max_positions": ("max_position_embeddings", 512),
        "type_vocab": ("type_vocab_size", 2),
        "activation": ("hidden_act", "gelu"),
        "norm_eps": ("layer_norm_eps", 1e-12),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "llama": _LLAMA_KEYS
    | {
        "qkv_bias": ("attention_bias", False),
        "out_bias": ("attention_bias", False),
        "mlp_bias": ("mlp_bias", False),
    },
    "mistral": _LLAMA_KEYS | {"sliding_window": ("sliding_window", None)},
    "qwen2": _LLAMA_KEYS | {"sliding_window": ("sliding_window", None)},
    "mixtral": _LLAMA_KEYS
    | {
        "sliding_window": ("sliding_window", None),
        "experts": ("num_local_experts", 8),
        "experts_per_token": ("num_experts_per_tok", 2),
    },
}
_ACTIVATIONS = {
    "gpt2": ("gelu_new", "gelu_pytorch_tanh", "gelu"),
    "bert": ("gelu",),
    "llama": ("silu",),
}
_INT_FIELDS = (
    "hidden",
    "layers",
    "heads",
    "kv_heads",
    "head_dim",
    "intermediate",
    "vocab",
    "max_positions",
    "type_vocab",
    "experts",
    "experts_per_token",
    "sliding_window",
)
# keys a hand-written YAML configuration may give besides its model type's keys
_OUR_KEYS = ("model_type", "name", "head", "architectures", "use_sliding_window")


def config_from_hf(
    data: Any,
    file: str | None,
    *,
    name: str | None = None,
    strict: bool = False,
    where: str | None = None,
) -> ModelConfig:
    """A :class:`ModelConfig` from the keys of a Hugging Face ``config.json`` (a dict).

    ``strict``: unknown keys are errors (hand-written YAML); a real ``config.json`` has many keys that do
    not shape the layers, which are ignored. ``where``: the place of the mapping in ``file``, for messages.
    """
    try:
        return _config_from_hf(data, file, name, strict)
    except InputError as exc:
        if not where:
            raise
        raise InputError(
            exc.file, f"{where}.{exc.where}" if exc.where else where, exc.message
        ) from None


def describe(value: Any) -> str:
    """A value as named in messages: ``'silu' (text)``, ``true (a boolean)``, ``64 (a whole number)``."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f"'{value}' (text)"
    if isinstance(value, (int, float)):
        return f"{value} ({'a whole' if isinstance(value, int) else 'a decimal'} number)"
    return (
        "null"
        if value is None
        else "a list"
        if isinstance(value, list)
        else "a mapping"
        if isinstance(value, dict)
        else repr(value)
    )


def _config_from_hf(data: Any, file: str | None, name: str | None, strict: bool) -> ModelConfig:
    if not isinstance(data, dict):
        raise InputError(
            file,
            None,
            f"must be a mapping of configuration keys, got {describe(data)}; "
            "give a Hugging Face config.json or a YAML mapping with its keys",
        )
    model_type = data.get("model_type")
    if model_type in ARCH_TYPES:
        return arch_config(data, file, name, strict)
    if model_type not in _KEYS:
        got = "no model_type" if model_type is None else f"model_type {describe(model_type)}"
        supported = ", ".join((*_KEYS, *ARCH_TYPES))
        raise InputError(file, "model_type", f"{got}; supported model types: {supported}")
    keys = _KEYS[model_type]
    if strict:
        known = {hf for hf, _ in keys.values()} | set(_OUR_KEYS)
        for key in data:
            if key not in known:
                raise InputError(
                    file,
                    str(key),
                    f"unknown key for model_type {model_type}; "
                    f"known keys: {', '.join(sorted(known))}",
                )
    values: dict[str, Any] = {}
    for field, (hf_key, default) in keys.items():
        value = data.get(hf_key, None if default is _REQUIRED else default)
        if value is None and default is _REQUIRED:
            raise InputError(
                file,
                hf_key,
                f"required key is missing for model_type {model_type}; "
                f'add "{hf_key}" with the model\'s value',
            )
        values[field] = value
    family = MODEL_TYPES[model_type]
    values = _complete(values, model_type, data, file)
    head = data.get("head") or _head_of(data, family)
    if head not in HEADS:
        raise InputError(
            file, "head", f"unallowed value {describe(head)}; use one of: {', '.join(HEADS)}"
        )
    if family in ("gpt2", "bert"):
        values |= {"qkv_bias": True, "out_bias": True, "mlp_bias": True}
    if model_type == "qwen2":
        values |= {"qkv_bias": True, "out_bias": False, "mlp_bias": False}
    config = ModelConfig(
        name=str(name or data.get("name") or model_type), model_type=model_type, head=head, **values
    )
    _check(config, file, keys)
    return config


def _complete(values: dict, model_type: str, data: dict, file: str | None) -> dict:
    """Fill the derived defaults (HF's rules) and check value types."""
    hf_key = {field: hf for field, (hf, _) in _KEYS[model_type].items()}
    for field in _INT_FIELDS:
        value = values.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise InputError(
                file, hf_key[field], f"must be a whole number of at least 1, got {describe(value)}"
            )
    if values.get("heads"):
        values.setdefault("kv_heads", None)
        values["kv_heads"] = values["kv_heads"] or values["heads"]
        values["head_dim"] = values.get("head_dim") or values["hidden"] // values["heads"]
    if values.get("intermediate") is None:
        values["intermediate"] = 4 * values["hidden"]
    if model_type == "qwen2" and not data.get("use_sliding_window", False):
        values["sliding_window"] = None
    values["sliding_window"] = values.get("sliding_window") or 0
    for field in ("qkv_bias", "out_bias", "mlp_bias", "tie_embeddings"):
        if field in values and not isinstance(values[field], bool):
            raise InputError(
                file, hf_key[field], f"must be true or false, got {describe(values[field])}"
            )
    for field in ("norm_eps", "rope_theta"):
        if field in values and (
            isinstance(values[field], bool) or not isinstance(values[field], (int, float))
        ):
            raise InputError(
                file, hf_key[field], f"must be a number, got {describe(values[field])}"
            )
    values["norm_eps"] = float(values["norm_eps"])
    values["rope_theta"] = float(values.get("rope_theta") or 0.0)
    for field in ("experts", "experts_per_token", "type_vocab"):
        values[field] = values.get(field) or 0
    return values


def _head_of(data: dict, family: str) -> str:
    """The output head the model's class has (``architectures``), by default the family's usual one."""
    architectures = data.get("architectures") or []
    names = " ".join(a for a in architectures if isinstance(a, str))
    if family == "bert":
        return "lm" if "MaskedLM" in names else "pooler"
    if names and not any(tag in names for tag in ("CausalLM", "LMHead")):
        return "none"
    return "lm"


def _check(config: ModelConfig, file: str | None, keys: dict) -> None:
    hf = {field: key for field, (key, _) in keys.items()}
    if config.activation not in _ACTIVATIONS[config.family]:
        raise InputError(
            file,
            hf["activation"],
            f"activation '{config.activation}' is not supported for "
            f"{config.model_type}; use one of: "
            f"{', '.join(_ACTIVATIONS[config.family])}",
        )
    if config.heads % config.kv_heads:
        raise InputError(
            file,
            hf["kv_heads"],
            f"{config.heads} attention heads are not a multiple of "
            f"{config.kv_heads} key/value heads; give a divisor of {config.heads}",
        )
    if "head_dim" not in hf and config.hidden % config.heads:
        raise InputError(
            file,
            hf["heads"],
            f"the width {config.hidden} is not a multiple of {config.heads} heads",
        )
    if config.experts and not 1 <= config.experts_per_token <= config.experts:
        raise InputError(
            file,
            hf["experts_per_token"],
            f"{config.experts_per_token} experts per token must be "
            f"from 1 to the {config.experts} experts",
        )
