"""Attention variants: scaled dot-product attention over the step's keys (multi-head, grouped-query, with
rotary positions, a KV cache and causal blocks), and how many keys a token attends."""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.config import ModelConfig
from zigzag.workload.llm.families.net import Net, Step


def attention(
    net: Net, name: str, q: int, k: int, v: int, *, rotary: tuple[int, int] | None = None
) -> int:
    """Scaled dot-product attention of the step's tokens (sdpa as exported: q and k each scaled, the
    additive mask, softmax, P.V), with the KV-cache appends of a decode step and causal blocks in a
    causal prefill. ``q``, ``k``, ``v``: the layers giving them; ``rotary``: (cos, sin) layers.
    Returns the last P.V layer."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    heads, kv, hd, b, t = cfg.heads, cfg.kv_heads, cfg.head_dim, step.batch, step.tokens
    groups = heads // kv
    if (
        rotary is not None
    ):  # the cos / sin tables are [1, 1, tokens, head_dim], broadcast as ONNX does
        q_dims, k_dims = (
            {"B": b, "H": heads, "D": t, "K": hd},
            {"B": b, "H": kv, "D": t, "K": hd},
        )
        q = net.add(
            ops.rotary(
                net.next,
                f"{name}/rotary_q",
                q_dims,
                q,
                cos_source=rotary[0],
                sin_source=rotary[1],
                table_dims=ops.broadcast_dims((1, 1, t, hd), q_dims),
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
                table_dims=ops.broadcast_dims((1, 1, t, hd), k_dims),
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
    keys = attended_keys(cfg, step)
    kv_role = "kv_cache" if cached else "activation"
    # sdpa scales q and k each by the fourth root of the head width; k over the kv heads (grouped-query form)
    q = net.elementwise(f"{name}/scale_q", "mul", {"B": b, "H": heads, "D": t, "K": hd}, q)
    k = net.elementwise(
        f"{name}/scale_k", "mul", {"B": b, "H": kv, "D": hd, "K": keys}, k, i_role=kv_role
    )
    blocks = _blocks(cfg, step, keys)
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
                cols=hd,
                batch=b,
                w_role=kv_role,
                sources={"I": probs, "W": v},
                precision=p,
                **gqa,
            )
        )
        for i, (r, n) in enumerate(blocks)
    ][-1]


def attended_keys(cfg: ModelConfig, step: Step) -> int:
    """Keys each new token attends at most: the cached and new tokens, within a sliding window if any."""
    keys = step.past + step.tokens
    if cfg.sliding_window and step.past:
        keys = min(keys, cfg.sliding_window)
    return keys


def _blocks(cfg: ModelConfig, step: Step, keys: int) -> list[tuple[int, int]]:
    """(query rows, keys) per causal block (one block when not a causal prefill)."""
    if not (cfg.causal and step.tokens > 1 and step.causal_blocks > 0):
        return [(step.tokens, keys)]
    return ops.causal_split(step.tokens, step.causal_blocks, step.past, cfg.sliding_window or None)
