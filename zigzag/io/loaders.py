"""Load the three ZigZag inputs (accelerator, mapping, workload) into model objects.

Everything user-facing goes through here: files are read, validated (``zigzag.io.validation``)
and turned into :class:`Accelerator`, :class:`MappingEntry` and :class:`Workload` objects.
Problems surface as one-line :class:`zigzag.errors.InputError`.
"""

from __future__ import annotations

from pathlib import Path

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator, Memory, OperationalArray, Port
from zigzag.io.consistency import check_mapping_dimensions, warn_size_mismatches
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.validation import (
    check_mapping_fits_accelerator,
    validate_accelerator,
    validate_mapping,
    validate_workload,
)
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping.entry import MappingEntry
from zigzag.workload.workload import DummyNode, Workload, build_layer


def accelerator_from_dict(data: dict) -> Accelerator:
    """An Accelerator from a validated, normalised accelerator document."""
    array = data["operational_array"]
    memories = []
    for name, mem in data["memories"].items():
        ports = tuple(
            Port(
                name=p["name"],
                type=p["type"],
                bandwidth_min=p["bandwidth_min"],
                bandwidth_max=p["bandwidth_max"],
                allocation=tuple(_allocation(a) for a in p["allocation"]),
            )
            for p in mem["ports"]
        )
        memories.append(
            Memory(
                name=name,
                size=mem["size"],
                r_cost=mem["r_cost"],
                w_cost=mem["w_cost"],
                area=mem["area"],
                operands=tuple(mem["operands"]),
                ports=ports,
                served_dimensions=tuple(mem["served_dimensions"]),
                latency=mem.get("latency", 1),
                mem_type=mem.get("mem_type", "sram"),
                auto_cost_extraction=mem.get("auto_cost_extraction", False),
                force_double_buffering=mem.get("force_double_buffering", False),
            )
        )
    return Accelerator(
        name=data["name"],
        operational_array=OperationalArray(
            dimensions=dict(zip(array["dimensions"], array["sizes"])),
            unit_energy=array.get("unit_energy"),
            unit_area=array.get("unit_area"),
            is_imc=array.get("is_imc", False),
        ),
        memories=tuple(memories),
        dataflows=data.get("dataflows"),
    )


def accelerator_to_dict(accelerator: Accelerator) -> dict:
    """The normalised accelerator-YAML form of an Accelerator (inverse of accelerator_from_dict)."""
    array = accelerator.operational_array
    data = {
        "name": accelerator.name,
        "memories": {
            m.name: {
                "size": m.size,
                "r_cost": m.r_cost,
                "w_cost": m.w_cost,
                "area": m.area,
                "latency": m.latency,
                "mem_type": m.mem_type,
                "auto_cost_extraction": m.auto_cost_extraction,
                "operands": list(m.operands),
                "ports": [
                    {
                        "name": p.name,
                        "type": p.type,
                        "bandwidth_min": p.bandwidth_min,
                        "bandwidth_max": p.bandwidth_max,
                        "allocation": [f"{op}, {d}" for op, d in p.allocation],
                    }
                    for p in m.ports
                ],
                "served_dimensions": list(m.served_dimensions),
                "force_double_buffering": m.force_double_buffering,
            }
            for m in accelerator.memories
        },
        "operational_array": {
            "dimensions": list(array.dimensions),
            "sizes": list(array.dimensions.values()),
            "unit_energy": array.unit_energy,
            "unit_area": array.unit_area,
            "is_imc": array.is_imc,
        },
    }
    if accelerator.dataflows is not None:
        data["dataflows"] = accelerator.dataflows
    return data


def _allocation(text: str) -> tuple[str, str]:
    operand, direction = (part.strip() for part in text.split(","))
    return operand, direction


def read_accelerator(path: str | Path) -> dict:
    """The validated, normalised document of an accelerator YAML file in either memory format
    (the older ZigZag-3.8.0 port format is converted, see `zigzag.io.legacy_hardware`)."""
    data, _ = upgrade_accelerator(load_yaml(path), str(path))
    return validate_accelerator(data, str(path))


def load_accelerator(path: str | Path) -> Accelerator:
    """Read, validate and build an accelerator YAML file."""
    return accelerator_from_dict(read_accelerator(path))


def load_mapping(path: str | Path) -> list[MappingEntry]:
    """Read and validate a mapping YAML file."""
    return [MappingEntry.from_dict(e) for e in validate_mapping(load_yaml(path), str(path))]


def load_inputs(
    workload, accelerator: str | Path, mapping: str | Path, *, evaluate_all_operators: bool = False
) -> tuple[Workload, Accelerator]:
    """Load and cross-check the three inputs of an experiment."""
    accelerator_data = read_accelerator(accelerator)
    mapping_data = validate_mapping(load_yaml(mapping), str(mapping))
    check_mapping_fits_accelerator(mapping_data, accelerator_data, str(mapping))
    entries = [MappingEntry.from_dict(e) for e in mapping_data]
    return (
        _load_workload(workload, entries, str(mapping), evaluate_all_operators),
        accelerator_from_dict(accelerator_data),
    )


def load_workload(
    workload,
    mapping: str | Path | list[MappingEntry],
    *,
    evaluate_all_operators: bool = False,
) -> Workload:
    """A workload from a YAML path, an ONNX path or ModelProto, or a list of layer dicts."""
    if isinstance(mapping, list):
        return _load_workload(workload, mapping, None, evaluate_all_operators)
    return _load_workload(workload, load_mapping(mapping), str(mapping), evaluate_all_operators)


def _load_workload(workload, entries: list[MappingEntry], mapping_file: str | None, all_operators: bool) -> Workload:
    if _is_onnx(workload):
        from zigzag.io.onnx_import import read_onnx

        file = str(workload) if isinstance(workload, (str, Path)) else "<onnx model>"
        specs = read_onnx(workload, evaluate_all_operators=all_operators, file=file)
    elif isinstance(workload, (str, Path)):
        file = str(workload)
        specs = [dict(s, kind="layer") for s in validate_workload(load_yaml(workload), file)]
    else:
        file = "<workload>"
        specs = [dict(s, kind="layer") for s in validate_workload(workload, file)]
    result = _workload_from_specs(specs, entries, file)
    check_mapping_dimensions(result, entries, mapping_file)
    warn_size_mismatches(result, file)
    return result


def _is_onnx(workload) -> bool:
    if isinstance(workload, (str, Path)):
        return str(workload).lower().endswith(".onnx")
    return type(workload).__name__ == "ModelProto"


def _workload_from_specs(specs: list[dict], entries: list[MappingEntry], file: str) -> Workload:
    nodes = []
    for spec in specs:
        if spec.get("kind") == "dummy":
            nodes.append(DummyNode(spec["id"], spec["name"], spec["type"], dict(spec["operand_source"])))
            continue
        try:
            nodes.append(build_layer(spec, entries))
        except LookupError as exc:
            where = f"layer {spec['id']} ({spec.get('name')})"
            raise InputError(file, where, f"{exc}; add a 'default' entry to the mapping file") from None
    return Workload(nodes)
