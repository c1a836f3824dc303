"""Exports of Phi-3, Qwen3-MoE, DeepSeek-V3-style MLA and Jamba (random weights, 2 blocks), shapes only, TorchScript
exporter opset 14. Usage: python make_moe_exports.py OUTDIR [names...]"""

import os
import sys

import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_recipe import (  # noqa: E402
    Decode,
    Prefill,
    decode_inputs,
    export,
    qwen3_moe_config,
    save_config,
)


def both(out, name, cfg, model, S, P, kv_heads, k_dim, v_dim=None, phases=("prefill", "decode")):
    """The prefill over S tokens and the decode step after P of ``model`` (the phases asked for)."""
    model = model.eval()
    save_config(out, name, cfg)
    if "prefill" in phases:
        export(
            out,
            f"{name}_prefill",
            Prefill(model),
            (torch.randint(0, cfg.vocab_size, (1, S)), torch.ones(1, S, dtype=torch.long)),
            ["input_ids", "attention_mask"],
            ["logits"],
        )
    if "decode" in phases:
        args, names = decode_inputs(cfg, P, kv_heads, k_dim, v_dim)
        export(out, f"{name}_decode", Decode(model), args, names, ["logits"])


def main(out, want):
    """The exports named in ``want`` (all of the first two when empty) into ``out``."""
    torch.manual_seed(0)
    if not want or "phi3" in want:  # Phi-3-mini widths: fused QKV and gate-up
        cfg = tf.Phi3Config(
            hidden_size=3072,
            intermediate_size=8192,
            num_attention_heads=32,
            num_key_value_heads=32,
            num_hidden_layers=2,
            vocab_size=32064,
            sliding_window=2047,
        )
        both(out, "phi3_mini", cfg, tf.Phi3ForCausalLM(cfg), 32, 31, 32, 96)

    if not want or "qwen3moe" in want:  # Qwen3-30B-A3B widths: 128 experts of 768, top 8
        cfg = qwen3_moe_config()
        both(out, "qwen3_moe", cfg, tf.Qwen3MoeForCausalLM(cfg), 16, 15, 4, 128)

    # DeepSeek-V3's attention widths (latent 512, rope 64, heads 128), dense blocks, small vocab
    if "mla" in want:
        cfg = tf.DeepseekV3Config(
            hidden_size=7168,
            num_attention_heads=128,
            num_key_value_heads=128,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            qk_nope_head_dim=128,
            v_head_dim=128,
            intermediate_size=2048,
            first_k_dense_replace=2,
            num_hidden_layers=2,
            vocab_size=1000,
        )
        # transformers caches the latent: [B, 1, P, kv_lora_rank] and the rotary key [B, 1, P, qk_rope_head_dim]
        both(
            out,
            "deepseek_mla",
            cfg,
            tf.DeepseekV3ForCausalLM(cfg),
            16,
            15,
            1,
            512,
            64,
            phases=("decode",),
        )

    # small widths (the real 16 experts of 4096 x 14336 do not fit this machine's memory in fp32)
    if "jamba" in want:
        cfg = tf.JambaConfig(
            hidden_size=512,
            intermediate_size=1024,
            num_attention_heads=8,
            num_key_value_heads=2,
            num_hidden_layers=2,
            vocab_size=1000,
            num_experts=4,
            num_experts_per_tok=2,
            expert_layer_period=2,
            expert_layer_offset=1,
            attn_layer_period=2,
            attn_layer_offset=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_dt_rank=32,
            use_mamba_kernels=False,
            experts_implementation="batched_mm",
        )
        both(out, "jamba_small", cfg, tf.JambaForCausalLM(cfg), 16, 15, 2, 64, phases=("prefill",))

    # DeepSeek-V3's latent sizes (512 + 64, q rank 1536) with 8 heads of width 1024, a small cache
    if "mla_small" in want:
        cfg = tf.DeepseekV3Config(
            hidden_size=1024,
            num_attention_heads=8,
            num_key_value_heads=8,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            qk_nope_head_dim=128,
            v_head_dim=128,
            intermediate_size=2048,
            first_k_dense_replace=2,
            num_hidden_layers=2,
            vocab_size=1000,
        )
        both(
            out,
            "deepseek_mla_small",
            cfg,
            tf.DeepseekV3ForCausalLM(cfg),
            8,
            7,
            1,
            512,
            64,
            phases=("decode",),
        )


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
