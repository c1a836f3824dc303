"""Exports of Phi-3, Qwen3-MoE, DeepSeek-V3-style MLA and Jamba (random weights, 2 blocks), shapes only, TorchScript
exporter opset 14. Usage: python make_moe_exports.py OUTDIR [names...]"""

import os
import sys
import torch
import transformers as tf
from transformers.cache_utils import DynamicCache

sys.path.insert(0, os.path.dirname(__file__))
from make_arch_exports import export, save_config  # noqa: E402

torch.manual_seed(0)
OUT = sys.argv[1]
WANT = set(sys.argv[2:])


class Prefill(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask, use_cache=False).logits


class Decode(torch.nn.Module):
    """One token after P cached ones: the cache as inputs past_k<i>/past_v<i>."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask, *past):
        cache = DynamicCache(config=self.m.config)
        for i in range(len(past) // 2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        return self.m(
            input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True
        ).logits


def both(name, cfg, model, S, P, kv_heads, k_dim, v_dim=None, phases=("prefill", "decode")):
    model = model.eval()
    save_config(name, cfg)
    vocab = cfg.vocab_size
    if "prefill" in phases:
        export(
            f"{name}_prefill",
            Prefill(model),
            (torch.randint(0, vocab, (1, S)), torch.ones(1, S, dtype=torch.long)),
            ["input_ids", "attention_mask"],
            ["logits"],
        )
    if "decode" in phases:
        past, names = [], []
        for i in range(cfg.num_hidden_layers):
            past += [
                torch.randn(1, kv_heads, P, k_dim),
                torch.randn(1, kv_heads, P, v_dim or k_dim),
            ]
            names += [f"past_k{i}", f"past_v{i}"]
        export(
            f"{name}_decode",
            Decode(model),
            (torch.randint(0, vocab, (1, 1)), torch.ones(1, P + 1, dtype=torch.long), *past),
            ["input_ids", "attention_mask", *names],
            ["logits"],
        )


if not WANT or "phi3" in WANT:  # Phi-3-mini widths: fused QKV and gate-up
    cfg = tf.Phi3Config(
        hidden_size=3072,
        intermediate_size=8192,
        num_attention_heads=32,
        num_key_value_heads=32,
        num_hidden_layers=2,
        vocab_size=32064,
        sliding_window=2047,
    )
    both("phi3_mini", cfg, tf.Phi3ForCausalLM(cfg), 32, 31, 32, 96)

if not WANT or "qwen3moe" in WANT:  # Qwen3-30B-A3B widths: 128 experts of 768, top 8
    cfg = tf.Qwen3MoeConfig(
        hidden_size=2048,
        num_attention_heads=32,
        num_key_value_heads=4,
        head_dim=128,
        moe_intermediate_size=768,
        intermediate_size=6144,
        num_experts=128,
        num_experts_per_tok=8,
        num_hidden_layers=2,
        vocab_size=151936,
        experts_implementation="batched_mm",
    )
    both("qwen3_moe", cfg, tf.Qwen3MoeForCausalLM(cfg), 16, 15, 4, 128)

if (
    "mla" in WANT
):  # DeepSeek-V3's attention widths (latent 512, rope 64, heads 128), dense blocks, small vocab
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
    both("deepseek_mla", cfg, tf.DeepseekV3ForCausalLM(cfg), 16, 15, 1, 512, 64, phases=("decode",))

if (
    "jamba" in WANT
):  # small widths (the real 16 experts of 4096 x 14336 do not fit this machine's memory in fp32)
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
    both("jamba_small", cfg, tf.JambaForCausalLM(cfg), 16, 15, 2, 64, phases=("prefill",))

if (
    "mla_small" in WANT
):  # DeepSeek-V3's latent sizes (512 + 64, q rank 1536) with 8 heads of width 1024, a small cache
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
