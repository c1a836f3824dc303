"""T5: the layers of an encoder-decoder's steps, from its configuration.

``prefill`` of S tokens: the encoder over the S source tokens (RMSNorm, self-attention without scaling plus
the relative position bias, a ReLU or gated-GELU feed-forward), then every decoder layer's cross-attention
K and V projected once from the encoder output into the cross cache (as generation does before its first
step). ``decode``: one decoder token after ``context`` decoded ones: self-attention over its cache (with
the append), cross-attention over the ``encoder_tokens`` cached source positions, the feed-forward, the
final norm and the LM head (scaled by hidden^-0.5 when tied, as transformers does).
"""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.families.net import Net, Step


def build_t5(cfg: ArchConfig, step: Step) -> list[dict]:
    net = Net(cfg, step)
    if step.past == 0 and step.tokens > 1 or not cfg.decoder_layers:
        _encoder(net)
    else:
        _decoder_step(net)
    return net.layers


def _attention(
    net: Net, name: str, q: int, k: int | None, v: int | None, keys: int, *, cached: bool
) -> int:
    """T5 attention: Q.K^T unscaled, + the position bias (and mask), softmax, P.V; K and V without a
    source are read from a cache that this step does not write."""
    cfg, b, t, p = net.cfg, net.step.batch, net.step.tokens, net.step.precision
    heads, hd = cfg.heads, cfg.head_dim
    role = "kv_cache" if cached else "activation"
    scores = net.add(
        ops.matmul(
            net.next,
            f"{name}/MatMul",
            rows=t,
            reduction=hd,
            cols=keys,
            batch=b,
            heads=heads,
            w_role=role,
            sources={"I": q} | ({"W": k} if k is not None else {}),
            precision=p,
        )
    )
    grid = {"B": b, "H": heads, "D": t, "K": keys}
    scores = net.elementwise(f"{name}/Add", "add", grid, scores, w_dims=("H", "D", "K"))
    probs = net.add(ops.softmax(net.next, f"{name}/Softmax", grid, scores, precision=p))
    return net.add(
        ops.matmul(
            net.next,
            f"{name}/MatMul_1",
            rows=t,
            reduction=keys,
            cols=hd,
            batch=b,
            heads=heads,
            w_role=role,
            sources={"I": probs} | ({"W": v} if v is not None else {}),
            precision=p,
        )
    )


def _feed_forward(net: Net, name: str, x: int) -> int:
    cfg, p = net.cfg, net.step.precision
    d, f = cfg.hidden, cfg.intermediate
    h = net.norm(f"{name}/layer_norm", x)
    if cfg.gated:
        gate = net.linear(f"{name}/wi_0", h, d, f, bias=False)
        act = net.add(
            ops.gelu(net.next, f"{name}/act", net.rows(f), gate, form="tanh", precision=p)
        )
        up = net.linear(f"{name}/wi_1", h, d, f, bias=False)
        act = net.elementwise(
            f"{name}/Mul", "mul", net.rows(f), act, w_dims=("B", "D", "K"), w_source=up
        )
    else:
        up = net.linear(f"{name}/wi", h, d, f, bias=False)
        act = net.elementwise(f"{name}/Relu", "max", net.rows(f), up)
    down = net.linear(f"{name}/wo", act, f, d, bias=False)
    return net.elementwise(
        f"{name}/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=down
    )


def _encoder(net: Net) -> None:
    cfg, step = net.cfg, net.step
    d, inner, t = cfg.hidden, cfg.heads * cfg.head_dim, step.tokens
    x = net.embedding("encoder/embed_tokens", d)
    for index in range(cfg.layers):
        name = f"encoder/block.{index}"
        h = net.norm(f"{name}/layer.0/layer_norm", x)
        q, k, v = (
            net.linear(f"{name}/layer.0/SelfAttention/{w}", h, d, inner, bias=False) for w in "qkv"
        )
        attn = _attention(net, f"{name}/layer.0/SelfAttention", q, k, v, t, cached=False)
        out = net.linear(f"{name}/layer.0/SelfAttention/o", attn, inner, d, bias=False)
        x = net.elementwise(
            f"{name}/layer.0/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        x = _feed_forward(net, f"{name}/layer.1", x)
    x = net.norm("encoder/final_layer_norm", x)
    for index in range(cfg.decoder_layers):  # the cross-attention cache, projected once
        name = f"decoder/block.{index}/layer.1/EncDecAttention"
        for w in "kv":
            out = net.linear(f"{name}/{w}", x, d, inner, bias=False)
            net.add(
                ops.cache_append(
                    net.next,
                    f"{name}/cache_{w}",
                    {"B": step.batch, "H": cfg.heads, "D": t, "K": cfg.head_dim},
                    sources={"I": out},
                    precision=step.precision,
                )
            )


def _decoder_step(net: Net) -> None:
    cfg, step, p = net.cfg, net.step, net.step.precision
    d, inner, b, t = cfg.hidden, cfg.heads * cfg.head_dim, step.batch, step.tokens
    new = {"B": b, "H": cfg.heads, "D": t, "K": cfg.head_dim}
    x = net.embedding("decoder/embed_tokens", d)
    for index in range(cfg.decoder_layers):
        name = f"decoder/block.{index}"
        h = net.norm(f"{name}/layer.0/layer_norm", x)
        q, k, v = (
            net.linear(f"{name}/layer.0/SelfAttention/{w}", h, d, inner, bias=False) for w in "qkv"
        )
        k, v = (
            net.add(
                ops.cache_append(
                    net.next, f"{name}/layer.0/cache_{w}", new, sources={"I": src}, precision=p
                )
            )
            for w, src in (("k", k), ("v", v))
        )
        attn = _attention(net, f"{name}/layer.0/SelfAttention", q, k, v, step.past + t, cached=True)
        out = net.linear(f"{name}/layer.0/SelfAttention/o", attn, inner, d, bias=False)
        x = net.elementwise(
            f"{name}/layer.0/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        h = net.norm(f"{name}/layer.1/layer_norm", x)
        q = net.linear(f"{name}/layer.1/EncDecAttention/q", h, d, inner, bias=False)
        attn = _attention(  # the cross cache is read, not produced by this step
            net, f"{name}/layer.1/EncDecAttention", q, None, None, cfg.encoder_tokens, cached=True
        )
        out = net.linear(f"{name}/layer.1/EncDecAttention/o", attn, inner, d, bias=False)
        x = net.elementwise(
            f"{name}/layer.1/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        x = _feed_forward(net, f"{name}/layer.2", x)
    x = net.norm("decoder/final_layer_norm", x)
    if cfg.tie_embeddings:
        x = net.elementwise("Mul", "mul", net.rows(d), x)
    net.add(
        ops.matmul(
            net.next,
            "lm_head/MatMul",
            rows=t,
            reduction=d,
            cols=cfg.vocab,
            batch=b,
            sources={"I": x},
            precision=p,
        )
    )


def t5_parameters(cfg: ArchConfig) -> int:
    """Parameters of a T5 model (shared embedding; LM head separate unless tied)."""
    d, inner, f = cfg.hidden, cfg.heads * cfg.head_dim, cfg.intermediate
    attention = 4 * d * inner + d
    ff = (3 if cfg.gated else 2) * d * f + d
    bias_tables = 2 * cfg.buckets * cfg.heads
    encoder = cfg.layers * (attention + ff) + d
    decoder = cfg.decoder_layers * (2 * attention + ff) + d
    head = 0 if cfg.tie_embeddings else cfg.vocab * d
    return cfg.vocab * d + encoder + decoder + bias_tables + head
