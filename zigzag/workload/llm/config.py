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
from zigzag.workload.llm.keys import KEYS as _KEYS
from zigzag.workload.llm.keys import MODEL_TYPES
from zigzag.workload.llm.keys import EXTRA_KEYS, NESTED_TEXT
from zigzag.workload.llm.keys import read_keys
from zigzag.workload.llm.structure import structure, warn_unmodelled
from zigzag.workload.llm.arch_config import ARCH_TYPES, arch_config

HEADS = ("lm", "pooler", "none")
CATALOGUE_FILE = Path(__file__).with_name("catalogue.yaml")


@dataclass(frozen=True)
class ModelConfig:
    """The shape-determining choices of a transformer (names as in the docs' workload reference)."""

    name: str
    model_type: str  # one of keys.MODEL_TYPES
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
    #: positions the model can attend (``max_position_embeddings``, stretched by ``rope_scaling``)
    position_limit: int = 0
    # ----- the block structure of the newer families (structure.py reads it from their keys)
    expert_intermediate: int = 0  # a routed expert's width (0: intermediate)
    shared_intermediate: int = 0  # the shared expert's width (0: none)
    moe_layers: tuple[bool, ...] = ()  # per block: its MLP is the mixture (empty: every block's is)
    router: str = "softmax"  # softmax | sigmoid (scores of the experts)
    norm_kind: str = ""  # layernorm | rmsnorm ("": the family's)
    norm_placement: str = "pre"  # pre | sandwich (pre- and post-norms) | post (post-norms only)
    parallel: int = 0  # attention and MLP side by side from 1 or 2 norms (0: one after the other)
    qk_norm: str = ""  # "" | head (per head) | full (over all heads' width)
    fused_qkv: bool = False  # one Q/K/V projection
    fused_gate_up: bool = False  # one gate/up projection
    gated: bool = True  # gated MLP (gate, up, down) or plain (up, down)
    rotary_fraction: float = 1.0  # share of a head's width rotated
    rope_layers: tuple[bool, ...] = ()  # per block: rotary positions (empty: every block)
    spans: tuple[tuple[str, int], ...] = ()  # per block: (full|sliding|chunked, tokens)
    attn_softcap: float = 0.0  # scores capped by c * tanh(s / c) (0: none)
    final_softcap: float = 0.0  # logits capped likewise
    embed_scale: bool = False  # embeddings multiplied by sqrt(hidden)
    q_lora_rank: int = 0  # multi-head latent attention (kv_lora_rank > 0): query compression
    kv_lora_rank: int = 0  # the latent cached per token
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0

    @property
    def family(self) -> str:
        return MODEL_TYPES[self.model_type]

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def is_moe(self, layer: int) -> bool:
        """Whether block ``layer``'s MLP is the mixture of experts."""
        return bool(self.experts) and (not self.moe_layers or self.moe_layers[layer])

    def span(self, layer: int) -> tuple[str, int]:
        """Block ``layer``'s attention span: ``("full", 0)``, ``("sliding", window)``, ``("chunked", size)``."""
        if self.spans:
            return self.spans[layer]
        return ("sliding", self.sliding_window) if self.sliding_window else ("full", 0)

    def rope_at(self, layer: int) -> bool:
        return self.rotary and (not self.rope_layers or self.rope_layers[layer])

    @property
    def causal(self) -> bool:
        return self.model_type != "bert"

    @property
    def norm(self) -> str:
        return self.norm_kind or ("layernorm" if self.family in ("gpt2", "bert") else "rmsnorm")

    @property
    def rotary(self) -> bool:
        return self.family == "llama" or (self.family == "decoder" and self.rope_theta > 0)

    @property
    def gated_mlp(self) -> bool:
        return self.family == "llama" or (self.family == "decoder" and self.gated)

    def with_layers(self, layers: int) -> "ModelConfig":
        """The same model with ``layers`` blocks (per-block patterns cut, or repeated from the start)."""

        def cut(values: tuple) -> tuple:
            return tuple(values[i % len(values)] for i in range(layers)) if values else ()

        return replace(
            self,
            layers=layers,
            moe_layers=cut(self.moe_layers),
            rope_layers=cut(self.rope_layers),
            spans=cut(self.spans),
        )


_ACTIVATIONS = {
    "gpt2": ("gelu_new", "gelu_pytorch_tanh", "gelu"),
    "bert": ("gelu",),
    "llama": ("silu",),
    "decoder": ("silu", "gelu", "gelu_new", "gelu_pytorch_tanh"),
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
    "expert_intermediate",
    "shared_experts",
    "moe_step",
    "kv_lora_rank",
    "qk_nope_dim",
    "qk_rope_dim",
    "v_head_dim",
    "chunk",
    "sliding_pattern",
)
_WHOLE_OR_ZERO = ("dense_first", "q_lora_rank")
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
    if model_type in NESTED_TEXT:
        text = data.get("text_config")
        if not isinstance(text, dict):
            raise InputError(
                file,
                "text_config",
                f"model_type {model_type} keeps its language model's keys in text_config; "
                "add the text_config mapping",
            )
        outer = {k: v for k, v in data.items() if k in ("name", "head", "architectures")}
        warn_unmodelled(model_type, data, file)
        data = {k: v for k, v in text.items() if k != "model_type"} | outer
        data["model_type"] = model_type = NESTED_TEXT[model_type]
    if model_type in ARCH_TYPES:
        return arch_config(data, file, name, strict)
    if model_type not in _KEYS:
        got = "no model_type" if model_type is None else f"model_type {describe(model_type)}"
        supported = ", ".join((*_KEYS, *NESTED_TEXT, *ARCH_TYPES))
        raise InputError(file, "model_type", f"{got}; supported model types: {supported}")
    keys = _KEYS[model_type]
    known = {hf for hf, _ in keys.values()} | set(_OUR_KEYS) | set(EXTRA_KEYS.get(model_type, {}))
    values = read_keys(data, keys, known, model_type, file, strict)
    family = MODEL_TYPES[model_type]
    values = structure(model_type, _complete(values, model_type, data, file), data, file)
    if not strict:
        warn_unmodelled(model_type, data, file)
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
    _check(
        config, file, keys, head_dim_given=data.get(keys.get("head_dim", (None,))[0]) is not None
    )
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
    for field in _WHOLE_OR_ZERO:
        value = values.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(
                file, hf_key[field], f"must be a whole number of at least 0, got {describe(value)}"
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
    values["position_limit"] = _position_limit(values, file)
    values["norm_eps"] = float(values["norm_eps"])
    values["rope_theta"] = float(values.get("rope_theta") or 0.0)
    for field in ("experts", "experts_per_token", "type_vocab", "expert_intermediate"):
        if field in values or field != "expert_intermediate":
            values[field] = values.get(field) or 0
    return values


def _position_limit(values: dict, file: str | None) -> int:
    """The positions a model attends: ``max_position_embeddings``, or with ``rope_scaling``
    (``{factor, original_max_position_embeddings}``) the larger of it and factor x the original
    length (the configuration's own length when it gives no original)."""
    scaling = values.get("position_limit")
    positions = values["max_positions"]
    if scaling is None:
        return positions
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    original = scaling.get("original_max_position_embeddings", positions) if factor else None
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or factor < 1
        or isinstance(original, bool)
        or not isinstance(original, int)
        or original < 1
    ):
        raise InputError(
            file,
            "rope_scaling",
            f"must be a mapping with factor (a number of at least 1) and optionally "
            f"original_max_position_embeddings, got {describe(scaling)}",
        )
    return max(positions, int(factor * original))


def _head_of(data: dict, family: str) -> str:
    """The output head the model's class has (``architectures``), by default the family's usual one."""
    architectures = data.get("architectures") or []
    names = " ".join(a for a in architectures if isinstance(a, str))
    if family == "bert":
        return "lm" if "MaskedLM" in names else "pooler"
    if names and not any(tag in names for tag in ("CausalLM", "LMHead", "ConditionalGeneration")):
        return "none"
    return "lm"


def _check(config: ModelConfig, file: str | None, keys: dict, *, head_dim_given: bool) -> None:
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
    if not head_dim_given and config.hidden % config.heads:
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
