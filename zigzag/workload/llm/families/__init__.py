"""The layers of one inference step of a transformer, per family, built from its configuration.

Every layer comes from the canonical constructors of ``zigzag.workload.operators``, in the order and with
the shapes the ONNX importer (``operators="all"``) gives for the torch export of the same model, so that a
generated workload and an export compare layer for layer. Families: ``gpt2`` (LayerNorm, tanh-GELU, fused
QKV, learned positions), ``bert`` (encoder, erf-GELU, post-norm, pooler) and ``llama`` (RMSNorm, SwiGLU,
rotary positions, grouped-query attention; Mistral and Qwen2 too; Mixtral adds a mixture of experts).
"""

from __future__ import annotations

from zigzag.workload.llm.config import ModelConfig
from zigzag.workload.llm.families.attention import attended_keys
from zigzag.workload.llm.families.decoders import decoder
from zigzag.workload.llm.families.mlp import distinct_experts, expert_loads, expert_slices
from zigzag.workload.llm.families.net import Net, Step
from zigzag.workload.llm.families.recipes import bert, gpt2, llama

__all__ = [
    "Step",
    "attended_keys",
    "build_layers",
    "distinct_experts",
    "expert_loads",
    "expert_slices",
]


def build_layers(cfg: ModelConfig, step: Step) -> list[dict]:
    """The layer dicts of one step of ``cfg`` (ids in processing order)."""
    net = Net(cfg, step)
    {"gpt2": gpt2, "bert": bert, "llama": llama, "decoder": decoder}[cfg.family](net)
    return net.layers
