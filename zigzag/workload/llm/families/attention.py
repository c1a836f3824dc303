"""Attention variants: scaled dot-product attention over the step's keys (multi-head, grouped-query, with
rotary positions, a KV cache and causal blocks), and how many keys a token attends."""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.config import ModelConfig
from zigzag.workload.llm.families.net import Net, Step


def attention(
    net: Net,
    name: str,
    q: int,
    k: int,
    v: int,
    *,
    rotary: tuple[int, int] | None = None,
    span: tuple[str, int] | None = None,
    rotary_dim: int | None = None,
    v_dim: int | None = None,
) -> int:
    """Scaled dot-product attention of the step's tokens (sdpa as exported, its key scale folded into the
    query's; the additive mask, softmax, P.V), with the KV-cache appends of a decode step and causal blocks in a
    causal prefill. ``q``, ``k``, ``v``: the layers giving them; ``rotary``: (cos, sin) layers over the first
    ``rotary_dim`` of each head (default all); ``span``: the block's attention span (default the model's);
    ``v_dim``: a value head's width (default the head width); the model's ``attn_softcap`` caps the scores.
    Returns the last P.V layer."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    heads, kv, hd, b, t = cfg.heads, cfg.kv_heads, cfg.head_dim, step.batch, step.tokens
    groups = heads // kv
    rd, vd = rotary_dim or hd, v_dim or hd
    if (
        rotary is not None
    ):  # the cos / sin tables are [1, 1, tokens, head_dim], broadcast as ONNX does
        q_dims, k_dims = (
            {"B": b, "H": heads, "D": t, "K": rd},
            {"B": b, "H": kv, "D": t, "K": rd},
        )
        q = net.add(
            ops.rotary(
                net.next,
                f"{name}/rotary_q",
                q_dims,
                q,
                cos_source=rotary[0],
                sin_source=rotary[1],
                table_dims=ops.broadcast_dims((1, 1, t, rd), q_dims),
                precision=p,
            )
        )
        k = net.add(
            ops.rotary(
                net.next,
                f"{name}/rotary_k",
                k_dims,
                k,
                cos_source=rotary[0],
                sin_source=rotary[1],
                table_dims=ops.broadcast_dims((1, 1, t, rd), k_dims),
                precision=p,
            )
        )
    cached = step.past > 0
    if cached:
        k = net.add(
            ops.cache_append(
                net.next,
                f"{name}/cache_k",
                {"B": b, "H": kv, "D": t, "K": hd},
                sources={"I": k},
                precision=p,
            )
        )
        v = net.add(
            ops.cache_append(
                net.next,
                f"{name}/cache_v",
                {"B": b, "H": kv, "D": t, "K": hd},
                sources={"I": v},
                precision=p,
            )
        )
    keys = attended_keys(cfg, step, span)
    kv_role = "kv_cache" if cached else "activation"
    # sdpa scales q and k each by the fourth root of the head width; both scales are applied to the query
    # (as deployed kernels do): scaling k would read and rewrite the whole cache every step
    q = net.elementwise(f"{name}/scale_q", "mul", {"B": b, "H": heads, "D": t, "K": hd}, q)
    blocks = _blocks(cfg, step, keys, span)
    suffix = (lambda i: f"/causal{i}") if len(blocks) > 1 else (lambda i: "")
    gqa = {"heads": kv, "groups": groups} if groups > 1 else {"heads": heads}
    scores = [
        net.add(
            ops.matmul(
                net.next,
                f"{name}/MatMul{suffix(i)}",
                rows=r,
                reduction=hd,
                cols=n,
                batch=b,
                w_role=kv_role,
                sources={"I": q, "W": k},
                precision=p,
                **gqa,
            )
        )
        for i, (r, n) in enumerate(blocks)
    ][-1]
    if cfg.attn_softcap:  # c * tanh(s / c)
        for i, (r, n) in enumerate(blocks):
            dims = {"B": b, "H": heads, "D": r, "K": n}
            for op in ("div", "tanh", "mul"):
                scores = net.elementwise(f"{name}/softcap_{op}{suffix(i)}", op, dims, scores)
    masked = [
        net.elementwise(
            f"{name}/mask{suffix(i)}",
            "add",
            {"B": b, "H": heads, "D": r, "K": n},
            scores,
            w_dims=ops.broadcast_dims((b, 1, r, n), {"B": b, "H": heads, "D": r, "K": n}),
        )
        for i, (r, n) in enumerate(blocks)
    ][-1]  # the mask is [B, 1, rows, keys]
    probs = masked
    for i, (r, n) in enumerate(blocks):
        made = ops.softmax(
            net.next,
            f"{name}/Softmax",
            {"B": b, "H": heads, "D": r, "K": n},
            masked,
            precision=p,
        )
        for layer in made:
            layer["name"] += suffix(i)
        probs = net.add(made)
    return [
        net.add(
            ops.matmul(
                net.next,
                f"{name}/MatMul_1{suffix(i)}",
                rows=r,
                reduction=n,
                cols=vd,
                batch=b,
                w_role=kv_role,
                sources={"I": probs, "W": v},
                precision=p,
                **gqa,
            )
        )
        for i, (r, n) in enumerate(blocks)
    ][-1]


def attended_keys(cfg: ModelConfig, step: Step, span: tuple[str, int] | None = None) -> int:
    """Keys each new token attends at most: the cached and new tokens, within a sliding window if any;
    with chunked attention, a decode step's token attends the keys of its chunk (a prefill's rows are
    bounded by the chunk as by a window)."""
    kind, size = span or (("sliding", cfg.sliding_window) if cfg.sliding_window else ("full", 0))
    keys = step.past + step.tokens
    if kind == "chunked" and step.tokens == 1:
        return step.past % size + 1
    if kind != "full" and size and step.past:
        keys = min(keys, size)
    return keys


def _blocks(
    cfg: ModelConfig, step: Step, keys: int, span: tuple[str, int] | None = None
) -> list[tuple[int, int]]:
    """(query rows, keys) per causal block (one block when not a causal prefill)."""
    if not (cfg.causal and step.tokens > 1 and step.causal_blocks > 0):
        return [(step.tokens, keys)]
    kind, size = span or (("sliding", cfg.sliding_window) if cfg.sliding_window else ("full", 0))
    window = size if kind != "full" and size else None
    return ops.causal_split(step.tokens, step.causal_blocks, step.past, window)
