"""What the export recipes of this folder share, with no side effect on import: writing a shapes-only export
(``export``, ``strip``), its configuration (``save_config``), the wrappers that give a model's logits for a
prefill (``Prefill``) or a decode step whose KV cache is graph inputs (``Decode``, ``decode_inputs``), and the
Qwen3-MoE configuration at Qwen3-30B-A3B's widths (``qwen3_moe_config``) of ``make_moe_exports.py`` and
``make_lowmem_exports.py``. Run in a virtual environment with torch, transformers and onnx (EXPORTS.md)."""

import os

import onnx
import torch
import transformers as tf
from transformers.cache_utils import DynamicCache


def strip(path):
    """Shapes only: initializers over 1 KiB to external data, then the weight file removed."""
    m = onnx.load(path)
    m = onnx.shape_inference.infer_shapes(m)
    data = os.path.basename(path) + ".data"
    onnx.save_model(
        m,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=data,
        size_threshold=1024,
    )
    os.remove(os.path.join(os.path.dirname(path), data))


def export(out, name, module, args, input_names, output_names=None):
    """``module`` traced on ``args`` (TorchScript exporter, opset 14) to ``out/name.onnx``, shapes only."""
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(
            module,
            args,
            path,
            input_names=input_names,
            output_names=output_names,
            opset_version=14,
            do_constant_folding=True,
            dynamo=False,
        )
    strip(path)
    print("wrote", path, os.path.getsize(path))


def save_config(out, name, cfg):
    with open(os.path.join(out, name + ".config.json"), "w") as f:
        f.write(cfg.to_json_string())


class Prefill(torch.nn.Module):
    """The logits of a prompt (``input_ids``, ``attention_mask``), no cache."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask, use_cache=False).logits


class Decode(torch.nn.Module):
    """One token after P cached ones: the cache as inputs past_k<i>/past_v<i>, built into a DynamicCache."""

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


def decode_inputs(cfg, past_tokens, kv_heads, k_dim, v_dim=None):
    """The arguments and input names of :class:`Decode`: one new token, the mask over P + 1 tokens and a
    random cache of P tokens per block ([1, kv_heads, P, k_dim] keys, v_dim values)."""
    past, names = [], []
    for i in range(cfg.num_hidden_layers):
        past += [
            torch.randn(1, kv_heads, past_tokens, k_dim),
            torch.randn(1, kv_heads, past_tokens, v_dim or k_dim),
        ]
        names += [f"past_k{i}", f"past_v{i}"]
    ids = torch.randint(0, cfg.vocab_size, (1, 1))
    args = (ids, torch.ones(1, past_tokens + 1, dtype=torch.long), *past)
    return args, ["input_ids", "attention_mask", *names]


def qwen3_moe_config():
    """Qwen3-30B-A3B's widths (128 experts of 768, top 8), 2 blocks, the experts batched (gathered per pair)."""
    return tf.Qwen3MoeConfig(
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
