"""Mamba: the layers of one step of a selective state-space model, from its configuration.

A block: RMSNorm, the input projection (to the SSM input x and the gate z, 2 x inner), the depthwise causal
convolution of x over the tokens (``conv_kernel`` taps), SiLU, the selective projection (dt rank, B and C of
``state`` each), the time-step projection, the discretisation (dA = exp(dt A), dB x = dt B x), the scan
(h = dA h + dB x per token and channel, then y = C . h, a product over the state), the skip (y + D x), the
gate (y * SiLU(z)) and the output projection, as transformers' reference path computes them (its
``Softplus`` of dt has no operation class: the ONNX import names it). A decode step reads and writes the
recurrent state (``state`` x ``inner`` per layer) and the convolution state (the last ``conv_kernel``
inputs) instead of a KV cache: both are operands of role ``kv_cache``.
"""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.families import Step, _lm_head, _Net

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
    net = _Net(cfg, step)
    x = net.embedding("embeddings", cfg.hidden)
    for index in range(cfg.layers):
        name = f"layers.{index}"
        h = net.norm(f"{name}/norm", x)
        out = mixer(net, f"{name}/mixer", h)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(cfg.hidden), out, w_dims=("B", "D", "K"), w_source=x
        )
    _lm_head(net, net.norm("norm_f", x))
    return net.layers


def mixer(net: _Net, name: str, h: int) -> int:
    """One Mamba mixer over the step's tokens (``net.rows``); returns its output projection."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    b, t, di, n = step.batch, step.tokens, cfg.inner, cfg.state
    decode = step.past > 0
    state_role = "kv_cache" if decode else "activation"
    proj = net.linear(f"{name}/in_proj", h, cfg.hidden, 2 * di, bias=cfg.proj_bias)
    if decode:  # the convolution state: the new input appended, then one dot of conv_kernel taps
        window = net.add(
            ops.cache_append(
                net.next,
                f"{name}/conv_state",
                {"B": b, "D": di, "K": t},
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
            i_role="kv_cache",
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


def mamba_parameters(cfg: ArchConfig) -> int:
    """Parameters of a Mamba model (embedding shared with the head when tied)."""
    d, di, n, r, k = cfg.hidden, cfg.inner, cfg.state, cfg.dt_rank, cfg.conv_kernel
    block = (
        d  # norm
        + d * 2 * di
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
    head = 0 if cfg.tie_embeddings else cfg.vocab * d
    return cfg.vocab * d + cfg.layers * block + d + head
