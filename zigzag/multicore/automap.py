"""Automatic mapping: the mapping a multi-core run uses when it is given none (docs/reference/multicore-mapping.md#automatic-mapping).

The rule, per layer of the workload:

* **cores**: the compute cores that can run it: a core whose file lists ``operator_types``
  (Stream 2.x) runs those ONNX operators, a core listing none runs any operator, except that in a
  late-2024 file the cores made from a ``pooling`` (``simd``) core file run only pooling
  (element-wise) layers; memory-only cores (2.x ``zigzag.memory``), cores with an empty array and
  the off-chip core run nothing. ``zigzag.multicore.allocation.automatic`` then drops the cores
  whose array the cost model cannot map the layer on. The allocation search chooses among the
  rest.
* **split** (inter-core tiling): none written; the tiling's default dim (``tiling.default_split_dim``)
  is the one the constraint optimisation may split a layer along.
* **stacks**: none in layer-by-layer mode; in fused mode each layer is its own stack (the run's
  ``layer_stacks`` override that), cut along the layer type's usual dimension (``FUSION_DIM``).

:func:`automatic_mapping` gives one entry per op type of the workload and a ``default``;
:func:`write_mapping` writes it as a mapping file to edit and rerun.
"""

from __future__ import annotations

from pathlib import Path

from zigzag.errors import InputError
from zigzag.multicore.core_kinds import capable_cores, general_cores
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.mapping import MappingEntry, StreamMapping, load_stream_mapping


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
    return "fused" if load_stream_mapping(mapping, accelerator).fused_groups else "lbl"
