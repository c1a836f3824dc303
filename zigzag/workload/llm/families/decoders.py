"""The decoder recipe of the newer families (Qwen3, Gemma-2/3, Phi-3/4, OLMo-2, Falcon, GPT-NeoX,
Qwen3-MoE, DeepSeek-V3, Llama-4): one block structure whose variants the configuration chooses — norms
before, around or after each sub-layer; attention and MLP one after the other or side by side; fused or
separate projections; per-head or full-width q/k norms; partial rotary; sliding, chunked or full attention
per block; logit soft-capping; multi-head latent attention; a dense MLP or a mixture of experts per block."""

from __future__ import annotations


from zigzag.workload.llm.families.attention import attention
from zigzag.workload.llm.families.latent import latent_attention
from zigzag.workload.llm.families.mlp import dense_mlp, experts
from zigzag.workload.llm.families.net import Net
from zigzag.workload.llm.families.recipes import lm_head


def decoder(net: Net) -> None:
    """The layers of a decoder of the ``decoder`` family."""
    cfg, d, step = net.cfg, net.cfg.hidden, net.step
    x = net.embedding("embed_tokens", d)
    if cfg.embed_scale:  # x * sqrt(hidden)
        x = net.elementwise("embed_scale", "mul", net.rows(d), x)
    rope = cfg.qk_rope_dim if cfg.mla else _rotary_dim(cfg)
    tables = None
    if cfg.rotary and any(cfg.rope_at(i) for i in range(cfg.layers)):
        table = {"B": 1 if step.batch > 1 else step.batch, "D": step.tokens, "K": rope}
        tables = (
            net.elementwise("rotary_emb/Cos", "cos", table, None, i_role="weight"),
            net.elementwise("rotary_emb/Sin", "sin", table, None, i_role="weight"),
        )
    sandwich, post = cfg.norm_placement == "sandwich", cfg.norm_placement == "post"
    for index in range(cfg.layers):
        name = f"layers.{index}"
        rotary = tables if cfg.rope_at(index) else None
        if cfg.parallel:  # x + attention(norm(x)) + mlp(norm'(x))
            h = net.norm(f"{name}/input_layernorm", x)
            h2 = h if cfg.parallel == 1 else net.norm(f"{name}/post_attention_layernorm", x)
            a = _attention(net, name, h, index, rotary)
            m = _mlp(net, name, h2, index)
            both = net.elementwise(
                f"{name}/Add", "add", net.rows(d), a, w_dims=("B", "D", "K"), w_source=m
            )
            x = net.elementwise(
                f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=both
            )
            continue
        h = x if post else net.norm(f"{name}/input_layernorm", x)
        a = _attention(net, name, h, index, rotary)
        if sandwich or post:
            a = net.norm(f"{name}/post_attention_layernorm", a)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=a
        )
        if post:
            h = x
        else:
            before = "pre_feedforward_layernorm" if sandwich else "post_attention_layernorm"
            h = net.norm(f"{name}/{before}", x)
        m = _mlp(net, name, h, index)
        if sandwich or post:
            m = net.norm(f"{name}/post_feedforward_layernorm", m)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=m
        )
    lm_head(net, net.norm("norm", x))
    if cfg.final_softcap and cfg.head == "lm":
        rows = 1 if step.logits == "last" else step.tokens
        dims = {"B": step.batch, "D": rows, "K": cfg.vocab}
        logits = net.layers[-1]["id"]
        for op in ("div", "tanh", "mul"):
            logits = net.elementwise(f"final_softcap_{op}", op, dims, logits)


def _rotary_dim(cfg) -> int:
    """The rotated width of a head: its share ``rotary_fraction``, an even number."""
    return max(2, int(cfg.head_dim * cfg.rotary_fraction) // 2 * 2)


def _attention(net: Net, name: str, h: int, index: int, rotary) -> int:
    cfg, d = net.cfg, net.cfg.hidden
    attn = f"{name}/self_attn"
    if cfg.mla:
        return latent_attention(net, attn, h, index, rotary)
    heads, kv, hd = cfg.heads, cfg.kv_heads, cfg.head_dim
    if cfg.fused_qkv:
        q = k = v = net.linear(f"{attn}/qkv_proj", h, d, (heads + 2 * kv) * hd, bias=cfg.qkv_bias)
    else:
        q = net.linear(f"{attn}/q_proj", h, d, heads * hd, bias=cfg.qkv_bias)
        k = net.linear(f"{attn}/k_proj", h, d, kv * hd, bias=cfg.qkv_bias)
        v = net.linear(f"{attn}/v_proj", h, d, kv * hd, bias=cfg.qkv_bias)
    if cfg.qk_norm:
        b, t = net.step.batch, net.step.tokens
        for which, count in (("q", heads), ("k", kv)):
            dims = (
                net.rows(count * hd)
                if cfg.qk_norm == "full"
                else {"B": b, "H": count, "D": t, "K": hd}
            )
            normed = net.norm(
                f"{attn}/{which}_norm", q if which == "q" else k, dims, gain=cfg.qk_norm != "l2"
            )
            if which == "q":
                q = normed
            else:
                k = normed
    out = attention(
        net, attn, q, k, v, rotary=rotary, span=cfg.span(index), rotary_dim=_rotary_dim(cfg)
    )
    return net.linear(f"{attn}/o_proj", out, heads * hd, d, bias=cfg.out_bias)


def _mlp(net: Net, name: str, h: int, index: int) -> int:
    cfg = net.cfg
    if cfg.is_moe(index):
        return experts(net, f"{name}/mlp", h)
    return dense_mlp(net, f"{name}/mlp", h, cfg.intermediate)
