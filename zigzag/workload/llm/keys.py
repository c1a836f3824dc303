"""The Hugging Face ``config.json`` keys that shape a model's layers, per ``model_type``.

Each model type maps our field -> (its key, default or ``REQUIRED``); the defaults are those of the
transformers configuration classes. ``UNMODELLED`` names keys of a known family whose effect the layers do
not model (a warning names them when they are set); ``SIGNATURES`` names keys that only some families have,
to say so when a file's keys belong to another family than its ``model_type``.
"""

from __future__ import annotations

from typing import Any

from zigzag.errors import InputError

REQUIRED = object()

#: model_type -> family (the recipe that builds its blocks)
MODEL_TYPES = {
    "gpt2": "gpt2",
    "bert": "bert",
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "llama",
    "mixtral": "llama",
    "qwen3": "decoder",
    "qwen3_moe": "decoder",
    "gemma2": "decoder",
    "gemma3_text": "decoder",
    "phi3": "decoder",
    "olmo2": "decoder",
    "falcon": "decoder",
    "gpt_neox": "decoder",
    "deepseek_v3": "decoder",
    "llama4_text": "decoder",
}
#: multimodal model types whose language model is the nested ``text_config``
NESTED_TEXT = {"gemma3": "gemma3_text", "llama4": "llama4_text"}

_LLAMA = {
    "hidden": ("hidden_size", REQUIRED),
    "layers": ("num_hidden_layers", REQUIRED),
    "heads": ("num_attention_heads", REQUIRED),
    "kv_heads": ("num_key_value_heads", None),
    "head_dim": ("head_dim", None),
    "intermediate": ("intermediate_size", REQUIRED),
    "vocab": ("vocab_size", REQUIRED),
    "max_positions": ("max_position_embeddings", 2048),
    "activation": ("hidden_act", "silu"),
    "norm_eps": ("rms_norm_eps", 1e-6),
    "tie_embeddings": ("tie_word_embeddings", False),
    "rope_theta": ("rope_theta", 10000.0),
    "position_limit": ("rope_scaling", None),
}
_BIAS = {"qkv_bias": ("attention_bias", False), "out_bias": ("attention_bias", False)}
_GEMMA = (
    _LLAMA
    | _BIAS
    | {
        "activation": ("hidden_activation", "gelu_pytorch_tanh"),
        "head_dim": ("head_dim", 256),
        "max_positions": ("max_position_embeddings", 8192),
        "tie_embeddings": ("tie_word_embeddings", True),
        "sliding_window": ("sliding_window", 4096),
    }
)
KEYS: dict[str, dict[str, tuple[str, Any]]] = {
    "gpt2": {
        "hidden": ("n_embd", REQUIRED),
        "layers": ("n_layer", REQUIRED),
        "heads": ("n_head", REQUIRED),
        "intermediate": ("n_inner", None),
        "vocab": ("vocab_size", REQUIRED),
        "max_positions": ("n_positions", 1024),
        "activation": ("activation_function", "gelu_new"),
        "norm_eps": ("layer_norm_epsilon", 1e-5),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "bert": {
        "hidden": ("hidden_size", REQUIRED),
        "layers": ("num_hidden_layers", REQUIRED),
        "heads": ("num_attention_heads", REQUIRED),
        "intermediate": ("intermediate_size", REQUIRED),
        "vocab": ("vocab_size", REQUIRED),
        "max_positions": ("max_position_embeddings", 512),
        "type_vocab": ("type_vocab_size", 2),
        "activation": ("hidden_act", "gelu"),
        "norm_eps": ("layer_norm_eps", 1e-12),
        "tie_embeddings": ("tie_word_embeddings", True),
    },
    "llama": _LLAMA | _BIAS | {"mlp_bias": ("mlp_bias", False)},
    "mistral": _LLAMA | {"sliding_window": ("sliding_window", None)},
    "qwen2": _LLAMA | {"sliding_window": ("sliding_window", None)},
    "mixtral": _LLAMA
    | {
        "sliding_window": ("sliding_window", None),
        "experts": ("num_local_experts", 8),
        "experts_per_token": ("num_experts_per_tok", 2),
    },
    "qwen3": _LLAMA | _BIAS | {"sliding_window": ("sliding_window", None)},
    "qwen3_moe": _LLAMA
    | _BIAS
    | {
        "sliding_window": ("sliding_window", None),
        "experts": ("num_experts", 128),
        "experts_per_token": ("num_experts_per_tok", 8),
        "expert_intermediate": ("moe_intermediate_size", 768),
        "moe_step": ("decoder_sparse_step", 1),
    },
    "gemma2": _GEMMA
    | {
        "vocab": ("vocab_size", 256000),
        "attn_softcap": ("attn_logit_softcapping", 50.0),
        "final_softcap": ("final_logit_softcapping", 30.0),
    },
    "gemma3_text": _GEMMA
    | {
        "vocab": ("vocab_size", 262208),
        "max_positions": ("max_position_embeddings", 131072),
        "rope_theta": ("rope_theta", 1000000.0),
        "attn_softcap": ("attn_logit_softcapping", None),
        "final_softcap": ("final_logit_softcapping", None),
        "sliding_pattern": ("sliding_window_pattern", 6),
    },
    "phi3": _LLAMA
    | {
        "sliding_window": ("sliding_window", None),
        "rotary_fraction": ("partial_rotary_factor", 1.0),
    },
    "olmo2": _LLAMA | _BIAS,
    "falcon": {
        "hidden": ("hidden_size", REQUIRED),
        "layers": ("num_hidden_layers", REQUIRED),
        "heads": ("num_attention_heads", REQUIRED),
        "kv_heads": ("num_kv_heads", None),
        "intermediate": ("ffn_hidden_size", None),
        "vocab": ("vocab_size", REQUIRED),
        "max_positions": ("max_position_embeddings", 2048),
        "activation": ("activation", "gelu"),
        "norm_eps": ("layer_norm_epsilon", 1e-5),
        "tie_embeddings": ("tie_word_embeddings", True),
        "rope_theta": ("rope_theta", 10000.0),
        "qkv_bias": ("bias", False),
        "out_bias": ("bias", False),
        "mlp_bias": ("bias", False),
    },
    "gpt_neox": {
        "hidden": ("hidden_size", REQUIRED),
        "layers": ("num_hidden_layers", REQUIRED),
        "heads": ("num_attention_heads", REQUIRED),
        "intermediate": ("intermediate_size", REQUIRED),
        "vocab": ("vocab_size", REQUIRED),
        "max_positions": ("max_position_embeddings", 2048),
        "activation": ("hidden_act", "gelu"),
        "norm_eps": ("layer_norm_eps", 1e-5),
        "tie_embeddings": ("tie_word_embeddings", False),
        "rope_theta": ("rotary_emb_base", 10000.0),
        "rotary_fraction": ("rotary_pct", 0.25),
        "qkv_bias": ("attention_bias", True),
        "out_bias": ("attention_bias", True),
    },
    "deepseek_v3": _LLAMA
    | _BIAS
    | {
        "experts": ("n_routed_experts", 256),
        "experts_per_token": ("num_experts_per_tok", 8),
        "expert_intermediate": ("moe_intermediate_size", 2048),
        "shared_experts": ("n_shared_experts", 1),
        "dense_first": ("first_k_dense_replace", 3),
        "moe_step": ("moe_layer_freq", 1),
        "q_lora_rank": ("q_lora_rank", 1536),
        "kv_lora_rank": ("kv_lora_rank", 512),
        "qk_nope_dim": ("qk_nope_head_dim", 128),
        "qk_rope_dim": ("qk_rope_head_dim", 64),
        "v_head_dim": ("v_head_dim", 128),
    },
    "llama4_text": _LLAMA
    | _BIAS
    | {
        "head_dim": ("head_dim", 128),
        "intermediate": ("intermediate_size_mlp", 16384),
        "experts": ("num_local_experts", 16),
        "experts_per_token": ("num_experts_per_tok", 1),
        "expert_intermediate": ("intermediate_size", 8192),
        "moe_step": ("interleave_moe_layer_step", 1),
        "chunk": ("attention_chunk_size", 8192),
    },
}
#: per model type: the keys read besides ``KEYS`` (booleans and per-layer lists), with their defaults
EXTRA_KEYS = {
    "qwen3": {"use_sliding_window": False, "max_window_layers": None, "layer_types": None},
    "qwen3_moe": {
        "use_sliding_window": False,
        "max_window_layers": None,
        "mlp_only_layers": [],
        "norm_topk_prob": False,
    },
    "qwen2": {"use_sliding_window": False},
    "gemma2": {"layer_types": None},
    "gemma3_text": {"layer_types": None},
    "falcon": {
        "multi_query": True,
        "new_decoder_architecture": False,
        "parallel_attn": True,
        "alibi": False,
    },
    "gpt_neox": {"use_parallel_residual": True},
    "deepseek_v3": {"scoring_func": "sigmoid", "norm_topk_prob": True},
    "llama4_text": {"use_qk_norm": True, "no_rope_layers": None, "moe_layers": None},
}
#: keys of a known family that shape its computation but that the layers do not model: named in a
#: warning when they are set (to a value other than the one given here, which is the unmodelled default)
UNMODELLED = {
    "deepseek_v3": {
        "num_nextn_predict_layers": (0, "its multi-token-prediction module is not built"),
        "n_group": (1, "the group-limited routing is modelled as a plain top-k"),
    },
    "falcon": {"alibi": (False, "ALiBi biases are not modelled (no rotary layers are built)")},
    "llama4_text": {
        "attn_temperature_tuning": (False, "the temperature scaling of NoPE layers is not built"),
    },
    "*": {
        "quantization_config": (None, "the weights' precision comes from precision:, not this"),
        "vision_config": (None, "the vision encoder is not built (the text model only)"),
    },
}
#: keys that only some model types read -> those types (a file of another type having them says so)
SIGNATURES = {
    "kv_lora_rank": ("deepseek_v3",),
    "q_lora_rank": ("deepseek_v3",),
    "n_routed_experts": ("deepseek_v3",),
    "n_shared_experts": ("deepseek_v3",),
    "first_k_dense_replace": ("deepseek_v3",),
    "num_experts": ("qwen3_moe",),
    "decoder_sparse_step": ("qwen3_moe",),
    "moe_intermediate_size": ("qwen3_moe", "deepseek_v3"),
    "shared_expert_intermediate_size": ("qwen2_moe",),
    "interleave_moe_layer_step": ("llama4_text",),
    "attention_chunk_size": ("llama4_text",),
    "intermediate_size_mlp": ("llama4_text",),
    "num_local_experts": ("mixtral", "llama4_text"),
    "attn_logit_softcapping": ("gemma2", "gemma3_text"),
    "sliding_window_pattern": ("gemma3_text",),
    "rotary_pct": ("gpt_neox",),
    "use_parallel_residual": ("gpt_neox",),
    "new_decoder_architecture": ("falcon",),
    "multi_query": ("falcon",),
    "partial_rotary_factor": ("phi3",),
}


def read_keys(
    data: dict, keys: dict, known: set, model_type: str, file: str | None, strict: bool
) -> dict[str, Any]:
    """Our fields from a configuration's keys (``keys``: field -> (key, default or REQUIRED)); with
    ``strict``, a key outside ``known`` is an error naming it and the known ones."""
    if strict:
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
        value = data.get(hf_key, None if default is REQUIRED else default)
        if value is None and default is REQUIRED:
            raise InputError(
                file,
                hf_key,
                f"required key is missing for model_type {model_type}; "
                f'add "{hf_key}" with the model\'s value',
            )
        values[field] = value
    return values
