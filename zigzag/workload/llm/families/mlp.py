"""Multi-layer perceptrons: the gated (SwiGLU) MLP and the mixture of experts."""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.config import ModelConfig
from zigzag.workload.llm.families.net import Net, Step


def swiglu(net: Net, name: str, h: int) -> int:
    cfg, d = net.cfg, net.cfg.hidden
    gate = net.linear(f"{name}/gate_proj", h, d, cfg.intermediate, bias=cfg.mlp_bias)
    act = net.add(
        ops.silu(
            net.next,
            f"{name}/act_fn",
            net.rows(cfg.intermediate),
            gate,
            precision=net.step.precision,
        )
    )
    up = net.linear(f"{name}/up_proj", h, d, cfg.intermediate, bias=cfg.mlp_bias)
    both = net.elementwise(
        f"{name}/Mul", "mul", net.rows(cfg.intermediate), act, w_dims=("B", "D", "K"), w_source=up
    )
    return net.linear(f"{name}/down_proj", both, cfg.intermediate, d, bias=cfg.mlp_bias)


def expert_loads(cfg: ModelConfig, step: Step) -> list[int]:
    """Tokens per active expert in one step: the batch's tokens x top-k assignments spread as evenly as
    possible over the experts (balanced routing); experts with no token are left out."""
    assignments = step.batch * step.tokens * cfg.experts_per_token
    active = min(cfg.experts, assignments)
    return [assignments // active + (1 if e < assignments % active else 0) for e in range(active)]


def experts(net: Net, name: str, h: int) -> int:
    """Mixture of experts: the router (logits, softmax, top-k, its weights renormalised), then every active
    expert's SwiGLU MLP over the tokens routed to it (gathered, weighted by their routing weight), and
    the per-token sum of its top-k experts' outputs."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    d, inter, k = cfg.hidden, cfg.intermediate, cfg.experts_per_token
    n = step.batch * step.tokens
    logits = net.add(
        ops.matmul(
            net.next,
            f"{name}/gate/MatMul",
            rows=n,
            reduction=d,
            cols=cfg.experts,
            sources={"I": h},
            precision=p,
        )
    )
    probs = net.add(
        ops.softmax(
            net.next, f"{name}/gate/Softmax", {"D": n, "K": cfg.experts}, logits, precision=p
        )
    )
    top = net.add(
        ops.top_k(
            net.next,
            f"{name}/gate/TopK",
            {"D": n, "K": cfg.experts},
            k,
            sources={"I": probs},
            precision=p,
        )
    )
    total = net.add(
        ops.reduction(
            net.next,
            f"{name}/gate/ReduceSum",
            "reduce_sum",
            {"D": n, "C": k},
            sources={"I": top},
            precision=p,
        )
    )
    weights = net.elementwise(
        f"{name}/gate/Div", "div", {"D": n, "K": k}, top, w_dims=("D",), w_source=total
    )
    outputs = []
    for e, rows in enumerate(expert_loads(cfg, step)):
        ex = f"{name}/experts.{e}"
        tokens = net.add(
            ops.gather(
                net.next,
                f"{ex}/Gather",
                {"D": rows, "K": d},
                table_role="activation",
                sources={"I": h},
                precision=p,
            )
        )
        gate = net.add(
            ops.matmul(
                net.next,
                f"{ex}/gate_proj/MatMul",
                rows=rows,
                reduction=d,
                cols=inter,
                sources={"I": tokens},
                precision=p,
            )
        )
        act = net.add(
            ops.silu(net.next, f"{ex}/act_fn", {"D": rows, "K": inter}, gate, precision=p)
        )
        up = net.add(
            ops.matmul(
                net.next,
                f"{ex}/up_proj/MatMul",
                rows=rows,
                reduction=d,
                cols=inter,
                sources={"I": tokens},
                precision=p,
            )
        )
        both = net.elementwise(
            f"{ex}/Mul", "mul", {"D": rows, "K": inter}, act, w_dims=("D", "K"), w_source=up
        )
        down = net.add(
            ops.matmul(
                net.next,
                f"{ex}/down_proj/MatMul",
                rows=rows,
                reduction=inter,
                cols=d,
                sources={"I": both},
                precision=p,
            )
        )
        outputs.append(
            net.elementwise(
                f"{ex}/Mul_1", "mul", {"D": rows, "K": d}, down, w_dims=("D",), w_source=weights
            )
        )
    return net.add(
        ops.reduction(
            net.next,
            f"{name}/experts/ReduceSum",
            "reduce_sum",
            {"B": step.batch, "D": step.tokens, "K": d, "C": k},
            sources={"I": outputs[-1]},
            precision=p,
        )
    )
