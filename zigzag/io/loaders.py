"""Load the three ZigZag inputs (accelerator, mapping, workload) into model objects.

Everything user-facing goes through here: files are read, validated (``zigzag.io.validation``)
and turned into :class:`Accelerator`, :class:`MappingEntry` and :class:`Workload` objects.
Problems surface as one-line :class:`zigzag.errors.InputError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.consistency import (
    check_mapping_dimensions,
    warn_size_mismatches,
    warn_unmatched_entries,
)
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.llm_workloads import llm_layer_specs, llm_workload_specs
from zigzag.io.memory_costs import resolve_memory_costs
from zigzag.io.validation import (
    check_mapping_fits_accelerator,
    validate_accelerator,
    validate_mapping,
    validate_workload,
)
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping.entry import MappingEntry
from zigzag.workload.inference import Inference
from zigzag.workload.workload import DummyNode, Workload, build_layer


def read_accelerator(path: str | Path) -> dict:
    """The validated, normalised document of an accelerator YAML file (:func:`checked_accelerator`)."""
    return checked_accelerator(load_yaml(path), path)


def checked_accelerator(document, source: str | Path) -> dict:
    """The validated, normalised form of an accelerator document in either memory format (the
    older ZigZag-3.8.0 port format is converted, see `zigzag.io.legacy_hardware`), with the
    costs of its CACTI and memory-table memories filled in; ``source``: the file (or variant)
    named in messages, and where memory tables are found from."""
    data, _ = upgrade_accelerator(document, str(source))
    return resolve_memory_costs(validate_accelerator(data, str(source)), source)


def checked_mapping(document, accelerator: dict, source: str) -> list[dict]:
    """The validated entries of a mapping document, checked against a checked accelerator
    document (every unrolling fits its array)."""
    entries = validate_mapping(document, source)
    check_mapping_fits_accelerator(entries, accelerator, source)
    return entries


def load_accelerator(path: str | Path) -> Accelerator:
    """Read, validate and build an accelerator YAML file."""
    return accelerator_from_dict(read_accelerator(path))


def load_mapping(path: str | Path) -> list[MappingEntry]:
    """Read and validate a mapping YAML file."""
    return [MappingEntry.from_dict(e) for e in validate_mapping(load_yaml(path), str(path))]


def load_inputs(
    workload,
    accelerator: str | Path,
    mapping: str | Path,
    *,
    evaluate_all_operators: bool = False,
    **onnx_options,
) -> tuple[Workload, Accelerator]:
    """Load and cross-check the three inputs of an experiment (``onnx_options``: ``operators``,
    ``causal_blocks`` of ``zigzag.io.onnx_import.read_onnx``)."""
    accelerator_data = read_accelerator(accelerator)
    mapping_data = checked_mapping(load_yaml(mapping), accelerator_data, str(mapping))
    entries = [MappingEntry.from_dict(e) for e in mapping_data]
    return (
        _load_workload(workload, entries, str(mapping), evaluate_all_operators, onnx_options),
        accelerator_from_dict(accelerator_data),
    )


def load_workload(
    workload,
    mapping: str | Path | list[MappingEntry],
    *,
    evaluate_all_operators: bool = False,
    mapping_file: str | None = None,
    **onnx_options,
) -> Workload:
    """A workload from a YAML path, an ONNX path or ModelProto, or a list of layer dicts.
    ``mapping_file``: the file that ``mapping`` entries come from, named in messages;
    ``onnx_options``: ``operators``, ``causal_blocks`` of ``zigzag.io.onnx_import.read_onnx``."""
    if isinstance(mapping, list):
        return _load_workload(workload, mapping, mapping_file, evaluate_all_operators, onnx_options)
    return _load_workload(
        workload, load_mapping(mapping), str(mapping), evaluate_all_operators, onnx_options
    )


def _load_workload(
    workload,
    entries: list[MappingEntry],
    mapping_file: str | None,
    all_operators: bool,
    onnx_options: dict | None = None,
) -> Workload:
    inference = None
    if _is_onnx(workload):
        from zigzag.io.onnx_import import read_onnx

        file = str(workload) if isinstance(workload, (str, Path)) else "<onnx model>"
        specs = read_onnx(
            workload, evaluate_all_operators=all_operators, file=file, **(onnx_options or {})
        )
        if (onnx_options or {}).get("operators") == "all":
            inference = _export_inference(workload, file)
    else:
        file = str(workload) if isinstance(workload, (str, Path)) else "<workload>"
        data = load_yaml(workload) if isinstance(workload, (str, Path)) else workload
        if _is_llm(workload, data):
            base = Path(workload).parent if isinstance(workload, (str, Path)) else None
            specs, inference = llm_workload_specs(data, file, base=base)
        else:
            specs = [dict(s, kind="layer") for s in validate_workload(data, file)]
    return _checked(
        _workload_from_specs(specs, entries, file, inference), entries, mapping_file, file
    )


def _export_inference(workload, file: str):
    """The inference step an LLM export computes (None for a model without attention)."""
    from zigzag.io.onnx_operators import export_inference
    from zigzag.io.onnx_reading import load_model

    name = Path(workload).stem if isinstance(workload, (str, Path)) else None
    found = export_inference(load_model(workload, file), name)
    return Inference(**found) if found["layers"] else None


def workload_from_specs(
    specs: list[dict], mapping, *, inference=None, file: str | None = None
) -> Workload:
    """A workload from layer dicts (``read_onnx``'s form) and a mapping file or its entries, checked as a
    loaded one."""
    entries, mapping_file = (
        (mapping, None) if isinstance(mapping, list) else (load_mapping(mapping), str(mapping))
    )
    return _checked(
        _workload_from_specs(specs, entries, file or "<workload>", inference),
        entries,
        mapping_file,
        file or "<workload>",
    )


def _checked(
    result: Workload, entries: list[MappingEntry], mapping_file: str | None, file: str
) -> Workload:
    check_mapping_dimensions(result, entries, mapping_file)
    warn_unmatched_entries(result, entries, mapping_file)
    warn_size_mismatches(result, file)
    return result


def _is_llm(workload, data) -> bool:
    """An LLM workload document: a ``*.llm.yaml`` file, or a document whose top level has an ``llm:`` key."""
    return str(workload).lower().endswith((".llm.yaml", ".llm.yml")) or (
        isinstance(data, dict) and "llm" in data
    )


def _is_onnx(workload) -> bool:
    if isinstance(workload, (str, Path)):
        return str(workload).lower().endswith(".onnx")
    return type(workload).__name__ == "ModelProto"


def _workload_from_specs(
    specs: list[dict], entries: list[MappingEntry], file: str, inference=None
) -> Workload:
    nodes = []
    for spec in specs:
        if spec.get("kind") == "dummy":
            nodes.append(
                DummyNode(spec["id"], spec["name"], spec["type"], dict(spec["operand_source"]))
            )
            continue
        try:
            nodes.append(build_layer(spec, entries))
        except LookupError as exc:
            where = f"layer {spec['id']} ({spec.get('name')})"
            raise InputError(
                file, where, f"{exc}; add a 'default' entry to the mapping file"
            ) from None
    return Workload(nodes, inference)


def build_workload(model: Any, mapping, **step):
    """The :class:`~zigzag.workload.workload.Workload` of one step of ``model`` (as ``load_model_config``
    takes it; ``step``: the fields of an ``llm:`` section) with its inference metadata; ``mapping``: a
    mapping file or its entries."""
    specs, inference = llm_layer_specs(model, **step)
    return workload_from_specs(specs, mapping, inference=inference, file=step.get("file"))
