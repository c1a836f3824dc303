"""Which cores run which operators (Stream 2.x ``operator_types``, late-2024 pooling/SIMD core
files); used by the automatic mapping and a 2.x mapping's ``default`` entry
(docs/reference/multicore-mapping.md#automatic-mapping)."""

from __future__ import annotations

import math
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.hardware import Core, MultiCoreAccelerator

POOLING_OPS = frozenset({"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
ELEMENTWISE_OPS = frozenset(
    {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Silu", "Sigmoid", "Tanh", "Exp", "Pow", "Cast"}
)


def runs_anything(core: Core) -> bool:
    """Whether a core computes at all (a compute core with a non-empty array)."""
    return core.kind == "compute" and not core.is_offchip and _has_array(core)


def _has_array(core: Core) -> bool:
    sizes = getattr(core.accelerator.operational_array, "sizes", None)
    if sizes is None:
        return True
    values = sizes.values() if isinstance(sizes, dict) else sizes
    return math.prod(values) > 0


def auxiliary(core: Core) -> str | None:
    """``pooling`` / ``simd`` for a late-2024 core made from a file of that name."""
    stem = Path(core.file).stem
    return stem if core.operator_types is None and stem in ("pooling", "simd") else None


def general_cores(accelerator: MultiCoreAccelerator) -> tuple[int, ...]:
    """The compute cores that run any operator (all that can run anything if none does)."""
    able = [c for c in accelerator.compute_cores if runs_anything(c)]
    general = [c.id for c in able if c.operator_types is None and auxiliary(c) is None]
    if general:
        return tuple(general)
    if not able:
        raise InputError(accelerator.file, "cores", "no core can compute; add a compute core")
    return tuple(c.id for c in able)


def capable_cores(accelerator: MultiCoreAccelerator, op_type: str) -> tuple[int, ...]:
    """The cores that may run a layer of ONNX type ``op_type``: those listing it in
    ``operator_types``, a late-2024 pooling / SIMD core for a pooling / element-wise layer, and
    the cores that run any operator."""
    found = []
    for core in accelerator.compute_cores:
        if not runs_anything(core):
            continue
        kind = auxiliary(core)
        if core.operator_types is not None:
            if op_type in core.operator_types:
                found.append(core.id)
        elif (
            kind is None
            or (kind == "pooling" and op_type in POOLING_OPS)
            or (kind == "simd" and op_type in ELEMENTWISE_OPS)
        ):
            found.append(core.id)
    return tuple(found)
