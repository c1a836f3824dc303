"""Exports of Mamba, T5, ViT (random weights, 2 blocks, real widths), shapes only, TorchScript exporter opset 14.
Usage: python make_arch_exports.py OUTDIR [names...]"""

import os
import sys
import torch
import onnx
import transformers as tf

torch.manual_seed(0)
OUT = sys.argv[1]
WANT = set(sys.argv[2:])


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


def export(name, module, args, input_names, output_names=None):
    path = os.path.join(OUT, name + ".onnx")
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


def save_config(name, cfg):
    with open(os.path.join(OUT, name + ".config.json"), "w") as f:
        f.write(cfg.to_json_string())


class Logits(torch.nn.Module):
    def __init__(self, model, key="logits"):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args):
        return getattr(self.model(*args), self.key)


# ViT-Base/16 at 224x224, 2 blocks, 1000 classes
if not WANT or "vit" in WANT:
    cfg = tf.ViTConfig(num_hidden_layers=2, num_labels=1000)
    save_config("vit_base", cfg)
    model = tf.ViTForImageClassification(cfg).eval()
    export("vit_base", Logits(model), (torch.randn(1, 3, 224, 224),), ["pixel_values"], ["logits"])

# Mamba-130m widths (768, state 16, conv 4, expand 2), 2 blocks, prefill S=16
if not WANT or "mamba" in WANT:
    cfg = tf.MambaConfig(
        hidden_size=768,
        state_size=16,
        num_hidden_layers=2,
        vocab_size=50280,
        expand=2,
        conv_kernel=4,
        use_cache=False,
    )
    save_config("mamba_130m", cfg)
    model = tf.MambaForCausalLM(cfg).eval()

    class MambaPrefill(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits

    export(
        "mamba_130m_prefill",
        MambaPrefill(model),
        (torch.randint(0, 50280, (1, 16)),),
        ["input_ids"],
        ["logits"],
    )

# T5-small widths (512, 8 heads of 64, FF 2048), 2 blocks each side: the encoder over S=32 source tokens and
# one decoder step after 7 decoded tokens (self-attention cache as inputs, cross-attention over the encoder output)
if not WANT or "t5" in WANT:
    cfg = tf.T5Config(
        d_model=512,
        d_kv=64,
        d_ff=2048,
        num_heads=8,
        num_layers=2,
        num_decoder_layers=2,
        vocab_size=32128,
    )
    save_config("t5_small", cfg)
    model = tf.T5ForConditionalGeneration(cfg).eval()

    class Encoder(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids, mask):
            return self.m.encoder(input_ids=ids, attention_mask=mask).last_hidden_state

    S, P = 32, 7
    export(
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
