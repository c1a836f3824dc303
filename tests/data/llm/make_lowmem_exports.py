"""Qwen3-MoE exports at Qwen3-30B-A3B's real widths within a few GiB of memory (shapes only, TorchScript exporter,
opset 14). The fp32 model (7.4 GB: 2 x 128 experts of 3 x 2048 x 768 and two 151936 x 2048 tables) is never
materialised: it is built on the meta device, every parameter over 1 KiB becomes one random row broadcast to its
shape (a stride-0 view; the router keeps its own random matrix, so routing stays random), and the export keeps the
parameters as graph inputs (``export_params=False``). Afterwards each parameter input becomes an initializer:
shape-only external data over 1 KiB (as ``make_arch_exports.strip`` leaves them), its values under; a Transpose of
an initializer is folded into a transposed initializer, as the exporter's constant folding does.
Usage: python make_lowmem_exports.py OUTDIR [prefill] [decode]"""

import os
import sys

import numpy as np
import onnx
import torch
import transformers as tf
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_recipe import Decode, Prefill, decode_inputs, qwen3_moe_config  # noqa: E402


def cheap_parameters(model):
    """Replace each meta parameter: a random row broadcast (stride 0) over 1 KiB, random values under."""
    for mod in model.modules():
        for name, p in list(mod.named_parameters(recurse=False)):
            if p.numel() * 4 > 1024:
                row = torch.randn(p.shape[-1]) * 0.02
                t = row.expand(p.shape)
            else:
                t = torch.randn(p.shape) * 0.02
            setattr(mod, name, torch.nn.Parameter(t, requires_grad=False))
    return model


def build(cfg):
    with torch.device("meta"):
        model = tf.Qwen3MoeForCausalLM(cfg)
    model = cheap_parameters(model)
    # rotary inv_freq was built on meta: rebuild the rotary module on CPU
    model.model.rotary_emb = type(model.model.rotary_emb)(config=cfg)
    return model.eval()


def to_initializers(path, params):
    """Parameter inputs -> initializers (shape-only external data over 1 KiB); Transpose of one folded."""
    m = onnx.load(path)
    g = m.graph
    keep, inits = [], {}
    for i in g.input:
        if i.name not in params:
            keep.append(i)
            continue
        inits[i.name] = params[i.name]
    del g.input[:]
    g.input.extend(keep)
    # fold Transpose(initializer)
    drop = []
    for n in g.node:
        if n.op_type == "Transpose" and n.input[0] in inits:
            perm = [list(a.ints) for a in n.attribute if a.name == "perm"][0]
            inits[n.output[0]] = np.transpose(inits[n.input[0]], perm)
            drop.append(n)
    for n in drop:
        g.node.remove(n)
    used = {x for n in g.node for x in n.input} | {o.name for o in g.output}
    data = os.path.basename(path) + ".data"
    offset = 0
    for name, arr in inits.items():
        if name not in used:
            continue
        if arr.size * 4 <= 1024:
            g.initializer.append(
                numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), name)
            )
            continue
        t = onnx.TensorProto(name=name, data_type=onnx.TensorProto.FLOAT, dims=list(arr.shape))
        t.data_location = onnx.TensorProto.EXTERNAL
        length = arr.size * 4
        for k, v in (("location", data), ("offset", str(offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += length
        g.initializer.append(t)
    m = onnx.shape_inference.infer_shapes(m)
    onnx.save_model(m, path)
    print("wrote", path, os.path.getsize(path))


def export(name, module, args, input_names, out):
    path = os.path.join(out, name + ".onnx")
    named = dict(module.named_parameters())
    with torch.no_grad():
        torch.onnx.export(
            module,
            args,
            path,
            input_names=input_names,
            output_names=["logits"],
            opset_version=14,
            do_constant_folding=True,
            export_params=False,
            dynamo=False,
        )
    # numpy views of the parameters: a broadcast row stays a stride-0 view (only shapes are written for it)
    to_initializers(path, {k: p.detach().numpy() for k, p in named.items()})


def main(out, want):
    """The Qwen3-MoE exports named in ``want`` (``prefill``, ``decode``; both when empty) into ``out``."""
    torch.manual_seed(0)
    want = want or {"prefill", "decode"}
    cfg = qwen3_moe_config()
    model = build(cfg)
    with open(os.path.join(out, "qwen3_moe_lowmem.config.json"), "w") as f:
        f.write(cfg.to_json_string())
    if "prefill" in want:
        S = 16
        ids = torch.randint(0, cfg.vocab_size, (1, S))
        export(
            "qwen3_moe_lowmem_prefill",
            Prefill(model),
            (ids, torch.ones(1, S, dtype=torch.long)),
            ["input_ids", "attention_mask"],
            out,
        )
    if "decode" in want:
        args, names = decode_inputs(cfg, 15, 4, 128)
        export("qwen3_moe_decode", Decode(model), args, names, out)


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
