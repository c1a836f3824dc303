"""Where an export computes unlike a deployed kernel, read by the ONNX import (``operators="all"``): expert
weights gathered per (token, expert) pair (each distinct expert is read once) and a whole KV cache multiplied by a
weight every step (named in one line with the absorbed form's figure)."""

from __future__ import annotations

import logging
import math

logger = logging.getLogger("zigzag.io.onnx_operators")


def gathered_experts(experts: int, k: int, pairs: int) -> int:
    """Distinct experts an export that gathers each (token, expert) pair's weights from a table of ``experts``
    (transformers' batched experts) reads, each once: of ``pairs`` = T x ``k`` pairs, E (1 - (1 - k / E)^T)
    under uniform routing, rounded (at least 1, at most ``pairs``). The rule of both floors' ONNX imports."""
    tokens = max(1, pairs // max(1, k))
    distinct = experts * (1 - (1 - min(k, experts) / experts) ** tokens)
    return max(1, min(pairs, round(distinct)))


def distinct_experts(experts: int, layers: list[dict], dims: dict) -> dict:
    """The gather's dims with its first (the pairs) cut to the distinct experts read (:func:`gathered_experts`,
    k from the block's router, its last TopK)."""
    first = next(iter(dims))
    router = next((s for s in reversed(layers) if s["operator_type"] == "TopK"), None)
    if not experts or router is None:
        return dims
    k = dict(zip(router["loop_dims"], router["loop_sizes"]))["K"]
    return dims | {first: gathered_experts(experts, k, dims[first])}


def note_cache_projections(file: str, layers: list[dict]) -> None:
    """One line when an export multiplies the whole cache by a weight every step (transformers' multi-head
    latent attention up-projects its cached latent to keys and values at each decode step): costed as
    exported, with what a kernel that folds the projection into the query and the output (the absorbed form)
    would spend on it, the weight applied to the new tokens only."""
    exported = deployed = count = 0
    for layer in layers:
        roles = layer.get("operand_roles") or {}
        if layer.get("vector_op") is not None or roles.get("W") != "weight":
            continue
        source = (
            layers[layer["operand_source"]["I"]]
            if layer["operand_source"]["I"] != layer["id"]
            else None
        )
        if source is None or source.get("vector_op") != "copy":
            continue
        if (source.get("operand_roles") or {}).get("O") != "kv_cache":
            continue
        sizes = dict(zip(layer["loop_dims"], layer["loop_sizes"]))
        new = dict(zip(source["loop_dims"], source["loop_sizes"])).get("D", 1)
        macs = math.prod(layer["loop_sizes"])
        exported += macs
        deployed += macs // sizes["D"] * min(new, sizes["D"])
        count += 1
    if count:
        logger.warning(
            "%s: %d layer%s project the whole KV cache through a weight every step (multi-head latent "
            "attention's up-projection), costed as exported: %s MACs; a kernel folding it into the query and "
            "the output (the absorbed form) applies it to the new tokens only: %s MACs",
            file,
            count,
            "s" * (count > 1),
            f"{exported:,}",
            f"{deployed:,}",
        )
