"""Mamba: the layers of one step of a selective state-space model, from its configuration.

A block: RMSNorm, the input projection (to the SSM input x and the gate z, 2 x inner), the depthwise causal
convolution of x over the tokens (``conv_kernel`` taps), SiLU, the selective projection (dt rank, B and C of
``state`` each), the time-step projection, the discretisation (dA = exp(dt A), dB x = dt B x), the scan
(h = dA h + dB x per token and channel, then y = C . h, a product over the state), the skip (y + D x), the
gate (y * SiLU(z)) and the output projection, as transformers' reference path computes them (its
``Softplus`` of dt has no operation class: the ONNX import names it). A decode step reads and writes the
recurrent state (``state`` x ``inner`` per layer) and the convolution state (the last ``conv_kernel``
inputs) instead of a KV cache: both are operands of role ``state`` (held and read like a cache, updated in place).
"""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.families.attention import attention
from zigzag.workload.llm.families.mlp import experts, swiglu
from zigzag.workload.llm.families.net import Net, Step
from zigzag.workload.llm.families.recipes import lm_head

CONV_EQUATION = "O[b][g][k][oy][ox]+=W[g][k][c][fy][fx]*I[b][g][c][iy][ix]"


def depthwise_conv1d(
    layer_id: int,
    name: str,
    *,
    batch: int,
    channels: int,
    tokens: int,
    kernel: int,
    source: int,
    precision: ops.Precision,
) -> dict:
    """A causal depthwise convolution over the tokens (one filter of ``kernel`` taps per channel) in the form
    the ONNX import gives a 1-D ``Conv`` of one group per channel: loops ``B K G OX OY C FX FY``."""
    act = precision.activations
    return {
        "kind": "layer",
        "id": layer_id,
        "name": name,
        "operator_type": "Conv",
        "equation": CONV_EQUATION,
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "G", "OX", "OY", "C", "FX", "FY"],
        "loop_sizes": [batch, 1, channels, tokens, 1, 1, kernel, 1],
        "operand_precision": {"W": precision.weights, "I": act, "O_final": act, "O": 2 * act},
        "operand_source": {"I": source, "W": layer_id},
        "pr_loop_dims": ["IX", "IY"],
        "pr_loop_sizes": [tokens, 1],
        "padding": [[kernel - 1, 0], [0, 0]],
        "operand_roles": {"O": "activation", "I": "activation", "W": "weight"},
    }


def build_mamba(cfg: ArchConfig, step: Step) -> list[dict]:
    """The layer dicts of one step of a Mamba model (embedding, blocks, final norm, LM head)."""
    net = Net(cfg, step)
    x = net.embedding("embeddings", cfg.hidden)
    for index in range(cfg.layers):
        name = f"layers.{index}"
        h = net.norm(f"{name}/norm", x)
        out = mixer(net, f"{name}/mixer", h)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(cfg.hidden), out, w_dims=("B", "D", "K"), w_source=x
        )
    lm_head(net, net.norm("norm_f", x))
    return net.layers


def build_jamba(cfg: ArchConfig, step: Step) -> list[dict]:
    """The layer dicts of one step of a Jamba model: layer i attends when i % attn_period == attn_offset (grouped-
    query attention without positions) and is a Mamba mixer otherwise; its feed-forward is a mixture of experts
    when i % expert_period == expert_offset and a SwiGLU MLP otherwise."""
    net = Net(cfg, step)
    d, kv_width = cfg.hidden, cfg.kv_heads * cfg.head_dim
    x = net.embedding("embed_tokens", d)
    for index in range(cfg.layers):
        name = f"layers.{index}"
        h = net.norm(f"{name}/input_layernorm", x)
        if index % cfg.attn_period == cfg.attn_offset:
            q = net.linear(f"{name}/self_attn/q_proj", h, d, cfg.heads * cfg.head_dim, bias=False)
            k = net.linear(f"{name}/self_attn/k_proj", h, d, kv_width, bias=False)
            v = net.linear(f"{name}/self_attn/v_proj", h, d, kv_width, bias=False)
            out = attention(net, f"{name}/self_attn", q, k, v)
            out = net.linear(
                f"{name}/self_attn/o_proj", out, cfg.heads * cfg.head_dim, d, bias=False
            )
        else:
            out = mixer(net, f"{name}/mamba", h)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        h = net.norm(f"{name}/pre_ff_layernorm", x)
        routed = index % cfg.expert_period == cfg.expert_offset
        ff = (experts if routed else swiglu)(net, f"{name}/feed_forward", h)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=ff
        )
    lm_head(net, net.norm("final_layernorm", x))
    return net.layers


def jamba_parameters(cfg: ArchConfig) -> int:
    """Parameters of a Jamba model: Mamba or attention mixers, dense or expert feed-forwards."""
    d, f = cfg.hidden, cfg.intermediate
    attention = 2 * d * cfg.heads * cfg.head_dim + 2 * d * cfg.kv_heads * cfg.head_dim
    mamba = _mixer_parameters(cfg) + cfg.dt_rank + 2 * cfg.state  # and its dt, B, C norms
    total = cfg.vocab * d * (1 if cfg.tie_embeddings else 2) + d
    for index in range(cfg.layers):
        attends = index % cfg.attn_period == cfg.attn_offset
        routed = index % cfg.expert_period == cfg.expert_offset
        total += 2 * d + (attention if attends else mamba)
        total += cfg.experts * (3 * d * f) + d * cfg.experts if routed else 3 * d * f
    return total


def mixer(net: Net, name: str, h: int) -> int:
    """One Mamba mixer over the step's tokens (``net.rows``); returns its output projection."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    b, t, di, n = step.batch, step.tokens, cfg.inner, cfg.state
    decode = (
        step.past > 0 and t == 1
    )  # a chunk after a context runs the convolution over its tokens
    state_role = "state" if step.past > 0 else "activation"
    proj = net.linear(f"{name}/in_proj", h, cfg.hidden, 2 * di, bias=cfg.proj_bias)
    if decode:  # the convolution state: the new input appended, then one dot of conv_kernel taps
        window = net.add(  # the window shifts in place: a state update, not a cache append
            ops.elementwise(
                net.next,
                f"{name}/conv_state",
                "copy",
                {"B": b, "D": di, "K": t},
                roles={"O": "state"},
                sources={"I": proj},
                precision=p,
            )
        )
        taps = net.elementwise(
            f"{name}/conv/Mul",
            "mul",
            {"B": b, "D": di, "K": cfg.conv_kernel},
            window,
            w_dims=("D", "K"),
            w_role="weight",
            i_role="state",
        )
        conv = net.add(
            ops.reduction(
                net.next,
                f"{name}/conv/ReduceSum",
                "reduce_sum",
                {"B": b, "D": di, "C": cfg.conv_kernel},
                sources={"I": taps},
                precision=p,
            )
        )
        if cfg.conv_bias:
            conv = net.elementwise(
                f"{name}/conv/Add",
                "add",
                {"B": b, "D": di, "K": t},
                conv,
                w_dims=("D",),
                w_role="weight",
            )
    else:
        conv = net.add(
            depthwise_conv1d(
                net.next,
                f"{name}/conv1d",
                batch=b,
                channels=di,
                tokens=t,
                kernel=cfg.conv_kernel,
                source=proj,
                precision=p,
            )
        )
    x = net.add(ops.silu(net.next, f"{name}/act", {"B": b, "D": di, "K": t}, conv, precision=p))
    bcdt = net.linear(f"{name}/x_proj", x, di, cfg.dt_rank + 2 * n, bias=False)
    if cfg.family == "jamba":  # RMSNorms of dt, B and C
        for part, width in (("dt", cfg.dt_rank), ("b", n), ("c", n)):
            bcdt = net.add(
                ops.rmsnorm(
                    net.next, f"{name}/{part}_layernorm", net.rows(width), bcdt, precision=p
                )
            )
    dt = net.linear(f"{name}/dt_proj", bcdt, cfg.dt_rank, di, bias=True)
    grid = {"B": b, "H": di, "D": t, "K": n}  # per channel, token and state element
    da = net.elementwise(f"{name}/dA/Mul", "mul", grid, dt, w_dims=("H", "K"), w_role="weight")
    da = net.elementwise(f"{name}/dA/Exp", "exp", grid, da)
    db = net.elementwise(f"{name}/dB/Mul", "mul", grid, dt, w_dims=("B", "D", "K"), w_source=bcdt)
    dbx = net.elementwise(f"{name}/dBx/Mul", "mul", grid, db, w_dims=("B", "H", "D"), w_source=x)
    decay = net.elementwise(
        f"{name}/scan/Mul", "mul", grid, da, w_dims=("B", "H", "K"), w_role=state_role
    )
    states = net.add(
        ops.elementwise(
            net.next,
            f"{name}/scan/Add",
            "add",
            grid,
            w_dims=tuple(grid),
            roles={"O": state_role, "W": "activation"},
            sources={"I": decay, "W": dbx},
            precision=p,
        )
    )
    # y = C . h: per token and channel a product over the state (H loops over the tokens)
    y = net.add(
        ops.matmul(
            net.next,
            f"{name}/scan/MatMul",
            rows=di,
            reduction=n,
            cols=1,
            batch=b,
            heads=t,
            w_role="activation",
            sources={"I": states, "W": bcdt},
            precision=p,
        )
    )
    rows = {"B": b, "D": di, "K": t}
    skip = net.elementwise(f"{name}/Mul_D", "mul", rows, x, w_dims=("D",), w_role="weight")
    y = net.elementwise(f"{name}/Add_D", "add", rows, y, w_dims=tuple(rows), w_source=skip)
    gate = net.add(ops.silu(net.next, f"{name}/gate_act", rows, proj, precision=p))
    y = net.elementwise(f"{name}/Mul_gate", "mul", rows, y, w_dims=tuple(rows), w_source=gate)
    return net.linear(f"{name}/out_proj", y, di, cfg.hidden, bias=cfg.proj_bias)


def _mixer_parameters(cfg: ArchConfig) -> int:
    d, di, n, r, k = cfg.hidden, cfg.inner, cfg.state, cfg.dt_rank, cfg.conv_kernel
    return (
        d * 2 * di
        + (2 * di if cfg.proj_bias else 0)
        + di * k
        + (di if cfg.conv_bias else 0)
        + di * (r + 2 * n)
        + r * di
        + di  # dt_proj and its bias
        + di * n
        + di  # A and D
        + di * d
        + (d if cfg.proj_bias else 0)
    )


def mamba_parameters(cfg: ArchConfig) -> int:
    """Parameters of a Mamba model (embedding shared with the head when tied)."""
    d = cfg.hidden
    head = 0 if cfg.tie_embeddings else cfg.vocab * d
    return cfg.vocab * d + cfg.layers * (d + _mixer_parameters(cfg)) + d + head
