"""ViT: the layers of one forward pass of a vision transformer, from its configuration.

The patch embedding (a convolution of ``patch_size`` stride ``patch_size`` to ``hidden`` channels), the
class token joined to the patches (data movement), learned positions added, pre-norm encoder blocks
(LayerNorm, multi-head attention with biases, no mask; LayerNorm, GELU MLP), the final LayerNorm and the
classifier on the class token, in the order and shapes the ONNX import gives for transformers' export.
The step's tokens are the patches and the class token (197 for a 224 x 224 image in 16 x 16 patches).
"""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.families.net import Net, Step


def patch_embedding(
    layer_id: int, name: str, cfg: ArchConfig, batch: int, precision: ops.Precision
) -> dict:
    """The patch embedding as the ONNX import gives its ``Conv``: loops ``B K G OX OY C FX FY``."""
    side, p, act = cfg.image_size // cfg.patch_size, cfg.patch_size, precision.activations
    return {
        "kind": "layer",
        "id": layer_id,
        "name": name,
        "operator_type": "Conv",
        "equation": "O[b][g][k][oy][ox]+=W[g][k][c][fy][fx]*I[b][g][c][iy][ix]",
        "dimension_relations": [f"ix={p}*ox+1*fx", f"iy={p}*oy+1*fy"],
        "loop_dims": ["B", "K", "G", "OX", "OY", "C", "FX", "FY"],
        "loop_sizes": [batch, cfg.hidden, 1, side, side, cfg.channels, p, p],
        "operand_precision": {"W": precision.weights, "I": act, "O_final": act, "O": 2 * act},
        "operand_source": {"I": layer_id, "W": layer_id},
        "pr_loop_dims": ["IX", "IY"],
        "pr_loop_sizes": [cfg.image_size, cfg.image_size],
        "padding": [[0, 0], [0, 0]],
        "operand_roles": {"O": "activation", "I": "activation", "W": "weight"},
    }


def build_vit(cfg: ArchConfig, step: Step) -> list[dict]:
    """The layer dicts of one ViT forward pass over ``step.batch`` images."""
    net = Net(cfg, step)
    d, b, t, p = cfg.hidden, step.batch, step.tokens, step.precision
    x = net.add(patch_embedding(net.next, "embeddings/patch_embeddings/Conv", cfg, b, p))
    x = net.elementwise(
        "embeddings/Add", "add", net.rows(d), x, w_dims=net.position_dims(), w_role="weight"
    )
    for index in range(cfg.layers):
        name = f"layers.{index}"
        h = net.norm(f"{name}/layernorm_before", x)
        q = net.linear(f"{name}/attention/q_proj", h, d, d, bias=cfg.qkv_bias)
        k = net.linear(f"{name}/attention/k_proj", h, d, d, bias=cfg.qkv_bias)
        v = net.linear(f"{name}/attention/v_proj", h, d, d, bias=cfg.qkv_bias)
        attn = unmasked_attention(net, f"{name}/attention", q, k, v, t)
        out = net.linear(f"{name}/attention/o_proj", attn, d, d, bias=True)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), out, w_dims=("B", "D", "K"), w_source=x
        )
        h = net.norm(f"{name}/layernorm_after", x)
        up = net.linear(f"{name}/mlp/fc1", h, d, cfg.intermediate, bias=True)
        act = net.add(
            ops.gelu(
                net.next, f"{name}/mlp/act", net.rows(cfg.intermediate), up, form="erf", precision=p
            )
        )
        down = net.linear(f"{name}/mlp/fc2", act, cfg.intermediate, d, bias=True)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), down, w_dims=("B", "D", "K"), w_source=x
        )
    x = net.norm("layernorm", x)
    if cfg.head == "classifier":
        first = net.add(
            ops.gather(
                net.next,
                "Gather",
                {"D": b, "K": d},
                table_role="activation",
                sources={"I": x},
                precision=p,
            )
        )
        net.add(
            ops.matmul(
                net.next,
                "classifier/Gemm",
                rows=b,
                reduction=d,
                cols=cfg.labels,
                sources={"I": first},
                precision=p,
                operator_type="Gemm",
            )
        )
    return net.layers


def unmasked_attention(net: Net, name: str, q: int, k: int, v: int, keys: int) -> int:
    """Multi-head attention of every token over ``keys`` tokens without a mask (sdpa's key scale folded into the
    query's, as the import does): scores, softmax, P.V; returns the P.V layer."""
    cfg, b, t, p = net.cfg, net.step.batch, net.step.tokens, net.step.precision
    heads, hd = cfg.heads, cfg.head_dim
    q = net.elementwise(f"{name}/scale_q", "mul", {"B": b, "H": heads, "D": t, "K": hd}, q)
    scores = net.add(
        ops.matmul(
            net.next,
            f"{name}/MatMul",
            rows=t,
            reduction=hd,
            cols=keys,
            batch=b,
            heads=heads,
            w_role="activation",
            sources={"I": q, "W": k},
            precision=p,
        )
    )
    probs = net.add(
        ops.softmax(
            net.next,
            f"{name}/Softmax",
            {"B": b, "H": heads, "D": t, "K": keys},
            scores,
            precision=p,
        )
    )
    return net.add(
        ops.matmul(
            net.next,
            f"{name}/MatMul_1",
            rows=t,
            reduction=keys,
            cols=hd,
            batch=b,
            heads=heads,
            w_role="activation",
            sources={"I": probs, "W": v},
            precision=p,
        )
    )


def vit_parameters(cfg: ArchConfig) -> int:
    """Parameters of a ViT (patch embedding, class token, positions, blocks, final norm, classifier)."""
    d, f = cfg.hidden, cfg.intermediate
    embed = d * cfg.channels * cfg.patch_size**2 + d + d + (cfg.patches + 1) * d
    block = 2 * 2 * d + 4 * d * d + (3 * d if cfg.qkv_bias else 0) + d + 2 * d * f + f + d
    head = cfg.labels * d + cfg.labels if cfg.head == "classifier" else 0
    return embed + cfg.layers * block + 2 * d + head
