"""The layers of the families beyond attention decoders (``arch_config.ARCH_TYPES``), by family, and the
step rules they add (a ViT's tokens are its patches and class token)."""

from __future__ import annotations

from zigzag.errors import InputError
from zigzag.workload.llm.arch_config import ArchConfig
from zigzag.workload.llm.encoder_decoder import build_t5, t5_parameters
from zigzag.workload.llm.families import Step
from zigzag.workload.llm.ssm import build_jamba, build_mamba, jamba_parameters, mamba_parameters
from zigzag.workload.llm.vision import build_vit, vit_parameters

BUILDERS = {"mamba": build_mamba, "jamba": build_jamba, "t5": build_t5, "vit": build_vit}
PARAMETERS = {
    "mamba": mamba_parameters,
    "jamba": jamba_parameters,
    "t5": t5_parameters,
    "vit": vit_parameters,
}


def build_arch_layers(cfg: ArchConfig, step: Step) -> list[dict]:
    """The layer dicts of one step of ``cfg`` (ids in processing order)."""
    return BUILDERS[cfg.family](cfg, step)


def parameters(cfg: ArchConfig) -> int:
    """The model's parameter count, from its configuration."""
    return PARAMETERS[cfg.family](cfg)


def arch_tokens(cfg: ArchConfig, phase: str, tokens, file, at) -> int | None:
    """The step's tokens: a ViT's are its patches and the class token (given or not)."""
    if cfg.family != "vit" or phase != "prefill":
        return tokens
    if tokens not in (None, cfg.patches + 1):
        raise InputError(
            file,
            at("tokens"),
            f"a {cfg.image_size} x {cfg.image_size} image in {cfg.patch_size} x {cfg.patch_size} "
            f"patches is {cfg.patches + 1} tokens (with the class token), got {tokens}; leave tokens out",
        )
    return cfg.patches + 1
