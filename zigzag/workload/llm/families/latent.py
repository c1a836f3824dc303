"""Multi-head latent attention (DeepSeek-V2/V3): queries through a low-rank compression, keys and values
from one latent per token (``kv_lora_rank``) plus a shared rotary key (``qk_rope_head_dim``), which is what
the cache holds. Two forms: ``naive`` up-projects the whole latent cache to per-head keys and values at
every step (as the reference code does); ``absorbed`` (the deployed decode kernel) folds the key
up-projection into the query and the value up-projection into the output, so scores and values are
computed over the latent cache directly, shared by every head. Either way the scores are the no-rope part
(per head, or over the latent) plus the rotary part (the shared rotary key), summed."""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.families.attention import attended_keys
from zigzag.workload.llm.families.net import Net

FORMS = ("absorbed", "naive")


def form_of(net: Net) -> str:
    """The step's form: as asked, else absorbed for a decode step and naive for a prefill."""
    return net.step.mla or ("absorbed" if net.step.tokens == 1 else "naive")


def latent_attention(net: Net, name: str, h: int, layer: int, rotary: tuple[int, int]) -> int:
    """The attention of block ``layer`` from its input ``h``; returns the output projection."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    d, heads, b, t = cfg.hidden, cfg.heads, step.batch, step.tokens
    nope, rope, latent, vd = cfg.qk_nope_dim, cfg.qk_rope_dim, cfg.kv_lora_rank, cfg.v_head_dim
    if cfg.q_lora_rank:
        q = net.linear(f"{name}/q_a_proj", h, d, cfg.q_lora_rank, bias=False)
        q = net.norm(f"{name}/q_a_layernorm", q, net.rows(cfg.q_lora_rank))
        q = net.linear(f"{name}/q_b_proj", q, cfg.q_lora_rank, heads * (nope + rope), bias=False)
    else:
        q = net.linear(f"{name}/q_proj", h, d, heads * (nope + rope), bias=False)
    kv = net.linear(f"{name}/kv_a_proj_with_mqa", h, d, latent + rope, bias=False)
    c = net.norm(f"{name}/kv_a_layernorm", kv, net.rows(latent))
    ropes = {}
    for which, count, source in (("q", heads, q), ("k", 1, kv)):
        dims = {"B": b, "H": count, "D": t, "K": rope}
        ropes[which] = net.add(
            ops.rotary(
                net.next,
                f"{name}/rotary_{which}",
                dims,
                source,
                cos_source=rotary[0],
                sin_source=rotary[1],
                table_dims=ops.broadcast_dims((1, 1, t, rope), dims),
                precision=p,
            )
        )
    k_rope = ropes["k"]
    cached = step.past > 0
    if cached:  # the cache: the latent and the shared rotary key of every token
        c, k_rope = (
            net.add(
                ops.cache_append(
                    net.next,
                    f"{name}/cache_{what}",
                    {"B": b, "H": 1, "D": t, "K": width},
                    sources={"I": source},
                    precision=p,
                )
            )
            for what, width, source in (("latent", latent, c), ("rope", rope, k_rope))
        )
    keys = attended_keys(cfg, step, cfg.span(layer))
    kv_role = "kv_cache" if cached else "activation"
    absorbed = form_of(net) == "absorbed"
    if absorbed:  # q_nope through each head's key up-projection: scores over the latent
        q = net.add(
            ops.matmul(
                net.next,
                f"{name}/q_absorb/MatMul",
                rows=t,
                reduction=nope,
                cols=latent,
                batch=b,
                heads=heads,
                per_head_weight=True,
                sources={"I": q},
                precision=p,
            )
        )
        k = v = c
        shared = {"heads": 1, "groups": heads, "w_role": kv_role}
        qk_width, v_width = latent, latent
    else:  # every cached latent up-projected to per-head keys (no-rope part) and values
        up = ops.matmul(
            net.next,
            f"{name}/kv_b_proj/MatMul",
            rows=keys,
            reduction=latent,
            cols=heads * (nope + vd),
            batch=b,
            sources={"I": c},
            precision=p,
        )
        up["operand_roles"]["I"] = kv_role
        up["operand_precision"]["I"] = p.bits(kv_role)
        k = v = net.add(up)
        shared = {"heads": heads, "w_role": "activation"}
        qk_width, v_width = nope, vd
    scores = [
        net.add(
            ops.matmul(
                net.next,
                f"{name}/MatMul{suffix}",
                rows=t,
                reduction=width,
                cols=keys,
                batch=b,
                sources={"I": query, "W": key},
                precision=p,
                **args,
            )
        )
        for suffix, width, query, key, args in (
            ("", qk_width, q, k, shared),
            ("_rope", rope, ropes["q"], k_rope, {"heads": 1, "groups": heads, "w_role": kv_role}),
        )
    ]
    dims = {"B": b, "H": heads, "D": t, "K": keys}
    both = net.elementwise(
        f"{name}/scores_add", "add", dims, scores[0], w_dims=tuple(dims), w_source=scores[1]
    )
    masked = net.elementwise(
        f"{name}/mask", "add", dims, both, w_dims=ops.broadcast_dims((b, 1, t, keys), dims)
    )
    probs = net.add(ops.softmax(net.next, f"{name}/Softmax", dims, masked, precision=p))
    out = net.add(
        ops.matmul(
            net.next,
            f"{name}/MatMul_1",
            rows=t,
            reduction=keys,
            cols=v_width,
            batch=b,
            sources={"I": probs, "W": v},
            precision=p,
            **shared,
        )
    )
    if absorbed:  # each head's value up-projection on its latent output
        out = net.add(
            ops.matmul(
                net.next,
                f"{name}/v_absorb/MatMul",
                rows=t,
                reduction=latent,
                cols=vd,
                batch=b,
                heads=heads,
                per_head_weight=True,
                sources={"I": out},
                precision=p,
            )
        )
    return net.linear(f"{name}/o_proj", out, heads * vd, d, bias=False)
