"""What an architect asks of a model and of one step, counted on the generated layers: parameters (from
the configuration: every expert and the whole embedding table), matrix MACs, weight bytes read (every
``weight`` operand of the step's layers, each distinct expert once) and KV-cache bytes (the cache the
step's matrix products read from the cache: the whole cache after a decode step, each cached tensor
once, however many products read it)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from zigzag.workload.llm.config import ModelConfig

_OPERAND = {op: re.compile(rf"(?<![A-Za-z_]){op}((?:\[[a-z]*\])+)") for op in ("I", "W")}


@dataclass(frozen=True)
class StepFigures:
    """Matrix MACs, weight bytes read and KV-cache bytes of one step's layers."""

    macs: int
    weight_bytes: float
    kv_cache_bytes: float


def operand_elements(spec: dict, operand: str) -> int:
    """Elements of input ``operand`` of a layer dict: the product of the loops its index names."""
    found = _OPERAND[operand].search(spec["equation"].split("=", 1)[1])
    if not found:
        return 0
    sizes = dict(zip(spec["loop_dims"], spec["loop_sizes"]))
    dims = re.findall(r"\[([a-z]*)\]", found.group(1))
    return math.prod(sizes[d.upper()] for d in dims if d)


def step_figures(specs: list[dict]) -> StepFigures:
    """Figures of the layer dicts of one step (``build_layer_specs``' first result)."""
    macs, weights, cached = 0, 0.0, {}
    for spec in specs:
        if spec.get("kind") != "layer":
            continue
        if spec.get("vector_op") is None:
            macs += math.prod(spec["loop_sizes"])
        for operand, role in (spec.get("operand_roles") or {}).items():
            if operand == "O":
                continue
            size = operand_elements(spec, operand) * spec["operand_precision"][operand] / 8
            if role == "weight":
                weights += size
            elif role == "kv_cache" and spec.get("vector_op") is None:
                source = spec["operand_source"][operand]
                cached[source] = max(cached.get(source, 0.0), size)
    return StepFigures(macs, weights, sum(cached.values()))


def parameters(cfg: ModelConfig) -> int:
    """The model's parameters (every expert, the embedding table once when tied to the output)."""
    d, heads, kv, hd = cfg.hidden, cfg.heads, cfg.kv_heads, cfg.head_dim
    norm = 2 * d if cfg.norm == "layernorm" else d
    if cfg.mla:
        nope, rope, latent = cfg.qk_nope_dim, cfg.qk_rope_dim, cfg.kv_lora_rank
        q = heads * (nope + rope)
        attn = (cfg.q_lora_rank * (d + q) + cfg.q_lora_rank) if cfg.q_lora_rank else d * q
        attn += d * (latent + rope) + latent + latent * heads * (nope + cfg.v_head_dim)
        attn += heads * cfg.v_head_dim * d
    else:
        attn = d * (heads + 2 * kv) * hd + heads * hd * d
        if cfg.qkv_bias:
            attn += (heads + 2 * kv) * hd
        if cfg.out_bias:
            attn += d
        attn += {"": 0, "head": 2 * hd, "full": (heads + kv) * hd, "l2": 0}[cfg.qk_norm]

    def mlp(width: int) -> int:
        mats = (3 if cfg.gated_mlp else 2) * d * width
        return mats + ((width * (2 if cfg.gated_mlp else 1) + d) if cfg.mlp_bias else 0)

    # a parallel block has its 1 or 2 input norms; otherwise 2 a block, 4 with pre- and post-norms
    norms = (cfg.parallel or {"pre": 2, "sandwich": 4, "post": 2}[cfg.norm_placement]) * norm
    total = 0
    for layer in range(cfg.layers):
        total += attn + norms
        if cfg.is_moe(layer):
            total += d * cfg.experts + cfg.experts * mlp(
                cfg.expert_intermediate or cfg.intermediate
            )
            if cfg.shared_intermediate:
                total += mlp(cfg.shared_intermediate)
        else:
            total += mlp(cfg.intermediate)
    embed = cfg.vocab * d
    head = 0 if cfg.tie_embeddings or cfg.head != "lm" else cfg.vocab * d
    return total + embed + head + norm
