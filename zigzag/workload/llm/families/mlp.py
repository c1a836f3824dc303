"""Multi-layer perceptrons: the gated (SwiGLU) MLP and the mixture of experts."""

from __future__ import annotations

from functools import lru_cache

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


def activation(net: Net, name: str, dims: dict, source: int) -> int:
    """The model's activation over ``dims``: SiLU, or GELU in its tanh or erf form."""
    act, p = net.cfg.activation, net.step.precision
    if act == "silu":
        return net.add(ops.silu(net.next, name, dims, source, precision=p))
    form = "erf" if act == "gelu" else "tanh"
    return net.add(ops.gelu(net.next, name, dims, source, form=form, precision=p))


def dense_mlp(net: Net, name: str, h: int, width: int) -> int:
    """A gated MLP (gate and up, fused into one projection when the model does, the activation of the
    gate times up, down) or a plain one (up, activation, down) of ``width`` over the step's tokens."""
    cfg, d = net.cfg, net.cfg.hidden
    out_rows = net.rows(width)

    def project(suffix: str, source: int, reduction: int, cols: int) -> int:
        return net.linear(f"{name}/{suffix}", source, reduction, cols, bias=cfg.mlp_bias)

    if not cfg.gated_mlp:
        up = project("up_proj", h, d, width)
        return project("down_proj", activation(net, f"{name}/act_fn", out_rows, up), width, d)
    if cfg.fused_gate_up:
        both = project("gate_up_proj", h, d, 2 * width)
        gate = up = both
    else:
        gate = project("gate_proj", h, d, width)
        up = None
    act = activation(net, f"{name}/act_fn", out_rows, gate)
    if up is None:
        up = project("up_proj", h, d, width)
    keep = tuple(out_rows)
    mixed = net.elementwise(f"{name}/Mul", "mul", out_rows, act, w_dims=keep, w_source=up)
    return project("down_proj", mixed, width, d)


def distinct_experts(experts: int, k: int, tokens: int, routing) -> float:
    """Expected distinct experts ``tokens`` tokens choosing ``k`` of ``experts`` touch: ``uniform``
    routing E(1 - (1 - k/E)^T); ``balanced`` min(E, T k); or shares of the load per expert p_e:
    sum over e of 1 - (1 - min(1, k p_e))^T."""
    if routing == "balanced":
        return float(min(experts, tokens * k))
    if routing == "uniform":
        return experts * (1 - (1 - k / experts) ** tokens)
    total = sum(routing)
    return sum(1 - (1 - min(1.0, k * share / total)) ** tokens for share in routing)


def expert_slices(cfg: ModelConfig, step: Step) -> list[tuple[int, int]]:
    """(tokens, width) per distinct expert of one step: the expected distinct experts
    (``distinct_experts``, the step's routing), each read once, sharing the step's tokens x top-k
    assignments as evenly as possible. A fractional expert count ends with a slice of an expert's width
    (that fraction of its weights) whose rows are chosen so the MACs stay as near as whole rows allow to
    those of the assignments (exact at a whole count)."""
    width = cfg.expert_intermediate or cfg.intermediate
    tokens = step.batch * step.tokens
    assignments = tokens * cfg.experts_per_token
    count = round(distinct_experts(cfg.experts, cfg.experts_per_token, tokens, step.routing), 9)
    full = int(count)  # at least 1: T tokens of k experts touch k or more
    part = round((count - full) * width) if count > full else 0
    if part >= width:
        full, part = full + 1, 0
    if not part:
        slots = max(1, full)
        return [
            (assignments // slots + (1 if e < assignments % slots else 0), width)
            for e in range(slots)
        ]
    whole, rows = _split(assignments, full, width, part)
    return [(whole // full + (1 if e < whole % full else 0), width) for e in range(full)] + [
        (rows, part)
    ]


@lru_cache(maxsize=256)
def _split(assignments: int, full: int, width: int, part: int) -> tuple[int, int]:
    """(rows of the whole experts, rows of the slice of width ``part``) whose MACs come nearest to
    ``assignments`` rows of ``width`` (of equal ones, the nearest to an even share per expert); every
    expert has a row at least."""
    even = assignments * full * width / (full * width + part)
    best = None
    for whole in range(full, assignments + 1):
        rows = max(1, round((assignments - whole) * width / part))
        key = (abs(whole * width + rows * part - assignments * width), abs(whole - even))
        if best is None or key < best[0]:
            best = (key, whole, rows)
    return best[1], best[2]


def expert_loads(cfg: ModelConfig, step: Step) -> list[int]:
    """Tokens per distinct expert of one step (``expert_slices``' rows)."""
    return [rows for rows, _ in expert_slices(cfg, step)]


def experts(net: Net, name: str, h: int) -> int:
    """Mixture of experts: the router (logits, softmax or sigmoid scores, top-k, its weights
    renormalised), then every distinct expert's gated MLP over the tokens routed to it (gathered,
    weighted by their routing weight), the per-token sum of its top-k experts' outputs, and the shared
    expert (if the model has one) over every token, added."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    d, k = cfg.hidden, cfg.experts_per_token
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
    probs = (
        net.add(
            ops.softmax(
                net.next, f"{name}/gate/Softmax", {"D": n, "K": cfg.experts}, logits, precision=p
            )
        )
        if cfg.router == "softmax"
        else net.elementwise(f"{name}/gate/Sigmoid", "sigmoid", {"D": n, "K": cfg.experts}, logits)
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
    for e, (rows, inter) in enumerate(expert_slices(cfg, step)):
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
    routed = net.add(
        ops.reduction(
            net.next,
            f"{name}/experts/ReduceSum",
            "reduce_sum",
            {"B": step.batch, "D": step.tokens, "K": d, "C": k},
            sources={"I": outputs[-1]},
            precision=p,
        )
    )
    if not cfg.shared_intermediate:
        return routed
    shared = dense_mlp(net, f"{name}/shared_experts", h, cfg.shared_intermediate)
    return net.elementwise(
        f"{name}/Add", "add", net.rows(d), routed, w_dims=("B", "D", "K"), w_source=shared
    )
