"""Automatic mapping: the mapping a multi-core run uses when it is given none (docs/reference/multicore-mapping.md#automatic-mapping).

The rule, per layer of the workload:

* **cores**: the compute cores that can run it: a core whose file lists ``operator_types``
  (Stream 2.x) runs those ONNX operators, a core listing none runs any operator, except that in a
  late-2024 file the cores made from a ``pooling`` (``simd``) core file run only pooling
  (element-wise) layers; memory-only cores (2.x ``zigzag.memory``), cores with an empty array and
  the off-chip core run nothing. ``zigzag.multicore.allocation.automatic`` then drops the cores
  whose array the cost model cannot map the layer on. The allocation search chooses among the
  rest.
* **split** (inter-core tiling): none; each layer is one group, placed on one core.
* **stacks**: none in layer-by-layer mode; in fused mode each layer is its own stack (the run's
  ``layer_stacks`` override that), cut along the layer type's usual dimension (``FUSION_DIM``).

:func:`automatic_mapping` gives one entry per op type of the workload and a ``default``;
:func:`write_mapping` writes it as a mapping file to edit and rerun.
"""

from __future__ import annotations

import math
from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.hardware import Core, MultiCoreAccelerator
from zigzag.multicore.mapping import MappingEntry, StreamMapping

POOLING_OPS = frozenset({"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
ELEMENTWISE_OPS = frozenset(
    {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Silu", "Sigmoid", "Tanh", "Exp", "Pow", "Cast"}
)


def _runs_anything(core: Core) -> bool:
    return core.kind == "compute" and not core.is_offchip and _has_array(core)


def _has_array(core: Core) -> bool:
    sizes = getattr(core.accelerator.operational_array, "sizes", None)
    if sizes is None:
        return True
    values = sizes.values() if isinstance(sizes, dict) else sizes
    return math.prod(values) > 0


def _auxiliary(core: Core) -> str | None:
    """``pooling`` / ``simd`` for a late-2024 core made from a file of that name."""
    stem = Path(core.file).stem
    return stem if core.operator_types is None and stem in ("pooling", "simd") else None


def general_cores(accelerator: MultiCoreAccelerator) -> tuple[int, ...]:
    """The compute cores that run any operator (all that can run anything if none does)."""
    able = [c for c in accelerator.compute_cores if _runs_anything(c)]
    general = [c.id for c in able if c.operator_types is None and _auxiliary(c) is None]
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
        if not _runs_anything(core):
            continue
        kind = _auxiliary(core)
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


def automatic_mapping(accelerator: MultiCoreAccelerator, workload) -> StreamMapping:
    """The automatic mapping of a parsed workload (``StreamWorkload``) on ``accelerator``: an entry
    per op type of its layers, naming the cores that can run them, and a ``default``."""
    entries = {"default": MappingEntry("default", core_allocation=general_cores(accelerator))}
    for layer in workload.layers:
        if layer.op_type in entries:
            continue
        cores = capable_cores(accelerator, layer.op_type)
        if not cores:
            raise InputError(
                accelerator.file,
                "operator_types",
                f"no core runs {layer.op_type} (layer '{layer.name}'); add {layer.op_type} to "
                "a core's operator_types or give a mapping file",
            )
        entries[layer.op_type] = MappingEntry(
            layer.op_type, core_allocation=cores, core_allocation_is_fixed=len(cores) == 1
        )
    return StreamMapping(entries, None)


def write_mapping(mapping: StreamMapping, path: str | Path) -> Path:
    """Write ``mapping`` as a (late-2024, list) mapping file; returns its path."""
    import yaml

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        "# The automatic mapping (docs/reference/multicore-mapping.md#automatic-mapping): "
        "edit it and rerun with --mapping\n"
    )
    body = yaml.safe_dump(
        [e.to_dict() for e in mapping.entries.values()], sort_keys=False, default_flow_style=None
    )
    path.write_text(header + body)
    return path


def default_mode(mapping: str | Path | None, accelerator=None) -> str:
    """The run mode when none is given: ``fused`` for a Stream 2.x mapping with ``fused_groups``,
    else ``lbl`` (the automatic mapping has no stacks)."""
    if mapping is None:
        return "lbl"
    from zigzag.multicore.mapping import load_stream_mapping

    return "fused" if load_stream_mapping(mapping, accelerator).fused_groups else "lbl"
