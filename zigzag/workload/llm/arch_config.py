"""Configurations of the families beyond attention decoders: Mamba (selective state space), Jamba
(attention and Mamba layers interleaved, a mixture of experts every other layer), T5 (encoder-decoder) and ViT
(vision encoder), from the keys of their Hugging Face ``config.json``.

``config_from_hf`` (``config.py``) hands a mapping whose ``model_type`` is one of ``ARCH_TYPES`` to
``arch_config``; the layers are built by ``ssm``, ``encoder_decoder`` and ``vision``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from zigzag.errors import InputError
from zigzag.workload.llm.keys import REQUIRED as _REQUIRED
from zigzag.workload.llm.keys import read_keys

ARCH_TYPES = ("mamba", "jamba", "t5", "vit")


@dataclass(frozen=True)
class ArchConfig:
    """The shape-determining choices of a Mamba, T5 or ViT model (fields unused by a family stay 0).

    Mamba: ``inner`` (expand x hidden), ``state`` (N), ``conv_kernel``, ``dt_rank``; T5: ``heads`` of
    ``head_dim``, ``intermediate`` (d_ff), ``decoder_layers``, ``gated`` (v1.1's gated-GELU), ``buckets``;
    ViT: ``image_size``, ``patch_size``, ``channels``, ``labels`` (classifier outputs, 0: none); Jamba: Mamba's
    fields, attention ``heads`` / ``kv_heads``, ``experts`` (top ``experts_per_token``) of ``intermediate``, and
    which layers attend (``attn_period`` / ``attn_offset``) and route (``expert_period`` / ``expert_offset``)."""

    name: str
    model_type: str
    hidden: int
    layers: int
    vocab: int = 0
    norm_eps: float = 1e-5
    tie_embeddings: bool = False
    head: str = "lm"
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    intermediate: int = 0
    activation: str = ""
    qkv_bias: bool = False
    inner: int = 0
    state: int = 0
    conv_kernel: int = 0
    dt_rank: int = 0
    proj_bias: bool = False
    conv_bias: bool = True
    decoder_layers: int = 0
    gated: bool = False
    buckets: int = 0
    encoder_tokens: int = 0
    image_size: int = 0
    patch_size: int = 0
    channels: int = 0
    labels: int = 0
    experts: int = 0
    experts_per_token: int = 0
    attn_period: int = 0
    attn_offset: int = 0
    expert_period: int = 0
    expert_offset: int = 0

    # what the shared attention builder and the step checks read
    sliding_window = 0
    max_positions = 1 << 62
    position_limit = 0
    mlp_bias = False
    attn_softcap = 0.0
    # what the shared experts builder reads (Jamba's experts: gated SwiGLU MLPs, softmax router)
    router = "softmax"
    expert_intermediate = 0
    shared_intermediate = 0
    gated_mlp = True
    fused_gate_up = False

    @property
    def family(self) -> str:
        return self.model_type

    @property
    def causal(self) -> bool:
        return self.model_type != "vit"

    @property
    def norm(self) -> str:
        return "layernorm" if self.model_type == "vit" else "rmsnorm"

    @property
    def patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2 if self.patch_size else 0

    def with_layers(self, layers: int) -> "ArchConfig":
        extra = {"decoder_layers": layers} if self.decoder_layers else {}
        return replace(self, layers=layers, **extra)


# our field -> (HF key, default or _REQUIRED); defaults are those of the transformers config classes
_KEYS: dict[str, dict[str, tuple[str, Any]]] = {
    "mamba": {
        "hidden": ("hidden_size", _REQUIRED),
        "layers": ("num_hidden_layers", _REQUIRED),
        "vocab": ("vocab_size", _REQUIRED),
        "state": ("state_size", 16),
        "expand": ("expand", 2),
        "inner": ("intermediate_size", None),
        "conv_kernel": ("conv_kernel", 4),
        "dt_rank": ("time_step_rank", "auto"),
        "proj_bias": ("use_bias", False),
        "conv_bias": ("use_conv_bias", True),
        "norm_eps": ("layer_norm_epsilon", 1e-5),
        "activation": ("hidden_act", "silu"),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "jamba": {
        "hidden": ("hidden_size", _REQUIRED),
        "layers": ("num_hidden_layers", _REQUIRED),
        "vocab": ("vocab_size", _REQUIRED),
        "heads": ("num_attention_heads", _REQUIRED),
        "kv_heads": ("num_key_value_heads", None),
        "intermediate": ("intermediate_size", _REQUIRED),
        "experts": ("num_experts", 16),
        "experts_per_token": ("num_experts_per_tok", 2),
        "attn_period": ("attn_layer_period", 8),
        "attn_offset": ("attn_layer_offset", 4),
        "expert_period": ("expert_layer_period", 2),
        "expert_offset": ("expert_layer_offset", 1),
        "state": ("mamba_d_state", 16),
        "conv_kernel": ("mamba_d_conv", 4),
        "expand": ("mamba_expand", 2),
        "dt_rank": ("mamba_dt_rank", "auto"),
        "proj_bias": ("mamba_proj_bias", False),
        "conv_bias": ("mamba_conv_bias", True),
        "norm_eps": ("rms_norm_eps", 1e-6),
        "activation": ("hidden_act", "silu"),
        "tie_embeddings": ("tie_word_embeddings", False),
    },
    "t5": {
        "hidden": ("d_model", _REQUIRED),
        "layers": ("num_layers", _REQUIRED),
        "decoder_layers": ("num_decoder_layers", None),
        "heads": ("num_heads", _REQUIRED),
        "head_dim": ("d_kv", _REQUIRED),
        "intermediate": ("d_ff", _REQUIRED),
        "vocab": ("vocab_size", _REQUIRED),
        "buckets": ("relative_attention_num_buckets", 32),
        "encoder_tokens": ("encoder_tokens", 512),  # ours: the source length a decode step attends
        "activation": ("feed_forward_proj", "relu"),
        "norm_eps": ("layer_norm_epsilon", 1e-6),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "vit": {
        "hidden": ("hidden_size", _REQUIRED),
        "layers": ("num_hidden_layers", _REQUIRED),
        "heads": ("num_attention_heads", _REQUIRED),
        "intermediate": ("intermediate_size", _REQUIRED),
        "image_size": ("image_size", 224),
        "patch_size": ("patch_size", 16),
        "channels": ("num_channels", 3),
        "qkv_bias": ("qkv_bias", True),
        "activation": ("hidden_act", "gelu"),
        "norm_eps": ("layer_norm_eps", 1e-12),
        "labels": ("num_labels", None),
    },
}
_ACTIVATIONS = {
    "mamba": ("silu",),
    "jamba": ("silu",),
    "t5": ("relu", "gated-gelu", "gelu_new"),
    "vit": ("gelu",),
}
_WHOLE = (
    "hidden",
    "layers",
    "vocab",
    "state",
    "expand",
    "inner",
    "conv_kernel",
    "heads",
    "kv_heads",
    "head_dim",
    "experts",
    "experts_per_token",
    "attn_period",
    "expert_period",
    "intermediate",
    "decoder_layers",
    "buckets",
    "encoder_tokens",
    "image_size",
    "patch_size",
    "channels",
)
_OUR_KEYS = ("model_type", "name", "head", "architectures", "id2label", "label2id")


def known_keys(model_type: str) -> set[str]:
    """The keys a hand-written configuration of ``model_type`` may give."""
    return {hf for hf, _ in _KEYS[model_type].values()} | set(_OUR_KEYS)


def arch_config(data: dict, file: str | None, name: str | None, strict: bool) -> ArchConfig:
    """An :class:`ArchConfig` from a ``config.json`` mapping whose ``model_type`` is in ``ARCH_TYPES``."""
    model_type = data["model_type"]
    keys = _KEYS[model_type]
    values = read_keys(data, keys, known_keys(model_type), model_type, file, strict)
    for field in _WHOLE:
        value = values.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise InputError(
                file,
                keys[field][0],
                f"must be a whole number of at least 1, got {value!r}",
            )
    for field in ("proj_bias", "conv_bias", "qkv_bias", "tie_embeddings"):
        if field in values and not isinstance(values[field], bool):
            raise InputError(file, keys[field][0], f"must be true or false, got {values[field]!r}")
    activation = values.pop("activation")
    if activation not in _ACTIVATIONS[model_type]:
        raise InputError(
            file,
            keys["activation"][0],
            f"'{activation}' is not supported for {model_type}; use one of: "
            f"{', '.join(_ACTIVATIONS[model_type])}",
        )
    values["activation"] = activation
    values["norm_eps"] = float(values["norm_eps"])
    head = data.get("head", "lm")
    if model_type in ("mamba", "jamba"):
        expand = values.pop("expand")
        values["inner"] = values.get("inner") or expand * values["hidden"]
        rank = values["dt_rank"]
        values["dt_rank"] = -(-values["hidden"] // 16) if rank == "auto" else rank
        if isinstance(values["dt_rank"], bool) or not isinstance(values["dt_rank"], int):
            raise InputError(
                file, keys["dt_rank"][0], f"must be a whole number or 'auto', got {rank!r}"
            )
    if model_type == "jamba":
        values["kv_heads"] = values["kv_heads"] or values["heads"]
        values["head_dim"] = values["hidden"] // values["heads"]
        _check_jamba(values, file)
    elif model_type == "t5":
        values["kv_heads"] = values["heads"]
        values["decoder_layers"] = values["decoder_layers"] or values["layers"]
        values["gated"] = activation.startswith("gated")
    elif model_type == "vit":
        labels = values["labels"]
        if labels is None:
            labels = len(data.get("id2label") or {}) or 2
        values["labels"] = labels
        values["head_dim"] = values["hidden"] // values["heads"]
        values["kv_heads"] = values["heads"]
        head = data.get("head", "classifier" if labels else "none")
        if values["hidden"] % values["heads"]:
            raise InputError(
                file,
                "num_attention_heads",
                f"the width {values['hidden']} is not a multiple of {values['heads']} heads",
            )
        if values["image_size"] % values["patch_size"]:
            raise InputError(
                file,
                "patch_size",
                f"the image size {values['image_size']} is not a multiple of the patch size "
                f"{values['patch_size']}",
            )
    return ArchConfig(
        name=str(name or data.get("name") or model_type), model_type=model_type, head=head, **values
    )


def _check_jamba(values: dict, file: str | None) -> None:
    if values["heads"] % values["kv_heads"]:
        raise InputError(
            file,
            "num_key_value_heads",
            f"{values['heads']} attention heads are not a multiple of {values['kv_heads']} key/value "
            f"heads; give a divisor of {values['heads']}",
        )
    if not 1 <= values["experts_per_token"] <= values["experts"]:
        raise InputError(
            file,
            "num_experts_per_tok",
            f"{values['experts_per_token']} experts per token must be from 1 to the "
            f"{values['experts']} experts",
        )
    for key, period, offset in (
        ("attn_layer_offset", "attn_period", "attn_offset"),
        ("expert_layer_offset", "expert_period", "expert_offset"),
    ):
        if not isinstance(values[offset], int) or not 0 <= values[offset] < values[period]:
            raise InputError(
                file,
                key,
                f"must be a whole number from 0 to {values[period] - 1}, got {values[offset]!r}",
            )
