"""Exports of Mamba, T5, ViT (random weights, 2 blocks, real widths), shapes only, TorchScript exporter opset 14.
Usage: python make_arch_exports.py OUTDIR [names...]"""

import os
import sys

import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_recipe import export, save_config  # noqa: E402


class Logits(torch.nn.Module):
    def __init__(self, model, key="logits"):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args):
        return getattr(self.model(*args), self.key)


def main(out, want):
    """The exports named in ``want`` (all when empty) into ``out``."""
    torch.manual_seed(0)
    # ViT-Base/16 at 224x224, 2 blocks, 1000 classes
    if not want or "vit" in want:
        cfg = tf.ViTConfig(num_hidden_layers=2, num_labels=1000)
        save_config(out, "vit_base", cfg)
        model = tf.ViTForImageClassification(cfg).eval()
        export(
            out,
            "vit_base",
            Logits(model),
            (torch.randn(1, 3, 224, 224),),
            ["pixel_values"],
            ["logits"],
        )

    # Mamba-130m widths (768, state 16, conv 4, expand 2), 2 blocks, prefill S=16
    if not want or "mamba" in want:
        cfg = tf.MambaConfig(
            hidden_size=768,
            state_size=16,
            num_hidden_layers=2,
            vocab_size=50280,
            expand=2,
            conv_kernel=4,
            use_cache=False,
        )
        save_config(out, "mamba_130m", cfg)
        model = tf.MambaForCausalLM(cfg).eval()

        class MambaPrefill(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids):
                return self.m(input_ids=ids, use_cache=False).logits

        export(
            out,
            "mamba_130m_prefill",
            MambaPrefill(model),
            (torch.randint(0, 50280, (1, 16)),),
            ["input_ids"],
            ["logits"],
        )

    # T5-small widths (512, 8 heads of 64, FF 2048), 2 blocks each side: the encoder over S=32 source tokens and
    # one decoder step after 7 decoded tokens (self-attention cache as inputs, cross-attention over the encoder output)
    if not want or "t5" in want:
        cfg = tf.T5Config(
            d_model=512,
            d_kv=64,
            d_ff=2048,
            num_heads=8,
            num_layers=2,
            num_decoder_layers=2,
            vocab_size=32128,
        )
        save_config(out, "t5_small", cfg)
        model = tf.T5ForConditionalGeneration(cfg).eval()

        class Encoder(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids, mask):
                return self.m.encoder(input_ids=ids, attention_mask=mask).last_hidden_state

        S, P = 32, 7
        export(
            out,
            "t5_small_encoder",
            Encoder(model),
            (torch.randint(0, 32128, (1, S)), torch.ones(1, S, dtype=torch.long)),
            ["input_ids", "attention_mask"],
            ["encoder_hidden_states"],
        )

        from transformers.cache_utils import EncoderDecoderCache

        class DecoderStep(torch.nn.Module):
            """One decoder token: self-attention cache of P tokens and the cross-attention cache of the S encoder
            outputs (K/V projected once, at the first step, as generate does) as inputs."""

            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids, enc, enc_mask, *caches):
                layers = [tuple(caches[4 * i : 4 * i + 4]) for i in range(len(caches) // 4)]
                out = self.m(
                    decoder_input_ids=ids,
                    encoder_outputs=(enc,),
                    attention_mask=enc_mask,
                    cache=EncoderDecoderCache(layers),
                    use_cache=True,
                )
                return out.logits

        caches, names = [], []
        for i in range(2):
            caches += [
                torch.randn(1, 8, P, 64),
                torch.randn(1, 8, P, 64),
                torch.randn(1, 8, S, 64),
                torch.randn(1, 8, S, 64),
            ]
            names += [f"past_k{i}", f"past_v{i}", f"cross_k{i}", f"cross_v{i}"]
        export(
            out,
            "t5_small_decode",
            DecoderStep(model),
            (
                torch.randint(0, 32128, (1, 1)),
                torch.randn(1, S, 512),
                torch.ones(1, S, dtype=torch.long),
                *caches,
            ),
            ["decoder_input_ids", "encoder_hidden_states", "attention_mask", *names],
            ["logits"],
        )


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
