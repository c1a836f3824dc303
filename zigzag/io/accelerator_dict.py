"""Accelerator <-> its normalised accelerator-YAML dict (the form validation produces).

Kept apart from the loaders (YAML parsing, validation) so that a layer job, which reads an
already validated accelerator from JSON, imports only the model types.
"""

from __future__ import annotations

from zigzag.hardware.accelerator import (
    Accelerator,
    Memory,
    OperationalArray,
    Port,
    VectorOperation,
    VectorUnit,
)
from zigzag.hardware.imc import ImcArray


def accelerator_from_dict(data: dict) -> Accelerator:
    """An Accelerator from a validated, normalised accelerator document."""
    array = data["operational_array"]
    memories = [_memory(name, mem) for name, mem in data["memories"].items()]
    return Accelerator(
        name=data["name"],
        operational_array=_operational_array(array, {m.name: m for m in memories}),
        memories=tuple(memories),
        dataflows=data.get("dataflows"),
        area_unit=data.get("area_unit"),
        vector_unit=_vector_unit(data.get("vector_unit")),
    )


def _memory(name: str, mem: dict) -> Memory:
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
    return Memory(
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
        cost_source=mem.get("cost_source", "file"),
        cost_note=mem.get("cost_note", ""),
    )


def _vector_unit(data: dict | None) -> VectorUnit | None:
    if data is None:
        return None
    return VectorUnit(
        lanes=data["lanes"],
        operations={
            name: VectorOperation(cycles=op["cycles"], energy=op["energy"])
            for name, op in data["operations"].items()
        },
        memories=tuple(data["memories"]),
        registers=tuple(_memory(name, mem) for name, mem in (data.get("registers") or {}).items()),
        unit_area=data.get("unit_area"),
    )


def _operational_array(array: dict, memories: dict[str, Memory]) -> OperationalArray | ImcArray:
    dimensions = dict(zip(array["dimensions"], array["sizes"]))
    if not array.get("is_imc", False):
        return OperationalArray(
            dimensions=dimensions,
            unit_energy=array.get("unit_energy"),
            unit_area=array.get("unit_area"),
            unit_energy_per_precision=tuple(
                (e["bits"], e["unit_energy"]) for e in array.get("unit_energy_per_precision") or ()
            ),
        )
    activation, weight = array["input_precision"]
    cells = memories["cells"]
    return ImcArray(
        dimensions=dimensions,
        analog=array.get("imc_type") == "analog",
        activation_precision=activation,
        weight_precision=weight,
        bit_serial_precision=array["bit_serial_precision"],
        adc_resolution=array.get("adc_resolution") or 0,
        cells_size=cells.size,
        cells_area=cells.area,
    )


def _operational_array_to_dict(array: OperationalArray | ImcArray) -> dict:
    data = {"dimensions": list(array.dimensions), "sizes": list(array.dimensions.values())}
    if isinstance(array, ImcArray):
        return {
            **data,
            "is_imc": True,
            "imc_type": array.imc_type,
            "input_precision": [array.activation_precision, array.weight_precision],
            "bit_serial_precision": array.bit_serial_precision,
            "adc_resolution": array.adc_resolution,
        }
    data = {**data, "unit_energy": array.unit_energy, "unit_area": array.unit_area, "is_imc": False}
    if array.unit_energy_per_precision:  # only when given: the job keys of other files stay
        data["unit_energy_per_precision"] = [
            {"bits": bits, "unit_energy": energy}
            for bits, energy in array.unit_energy_per_precision
        ]
    return data


def _memory_to_dict(m: Memory) -> dict:
    return {
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
        **(
            {"cost_source": m.cost_source, "cost_note": m.cost_note}
            if m.cost_source != "file"
            else {}
        ),
    }


def _vector_unit_to_dict(unit: VectorUnit) -> dict:
    data = {
        "lanes": unit.lanes,
        "operations": {
            name: {"cycles": op.cycles, "energy": op.energy} for name, op in unit.operations.items()
        },
        "memories": list(unit.memories),
    }
    if unit.registers:
        data["registers"] = {m.name: _memory_to_dict(m) for m in unit.registers}
    if unit.unit_area is not None:
        data["unit_area"] = unit.unit_area
    return data


def accelerator_to_dict(accelerator: Accelerator) -> dict:
    """The normalised accelerator-YAML form of an Accelerator (inverse of accelerator_from_dict)."""
    array = accelerator.operational_array
    data = {
        "name": accelerator.name,
        "memories": {m.name: _memory_to_dict(m) for m in accelerator.memories},
        "operational_array": _operational_array_to_dict(array),
    }
    if accelerator.dataflows is not None:
        data["dataflows"] = accelerator.dataflows
    if accelerator.area_unit is not None:
        data["area_unit"] = accelerator.area_unit
    if accelerator.vector_unit is not None:
        data["vector_unit"] = _vector_unit_to_dict(accelerator.vector_unit)
    return data


def _allocation(text: str) -> tuple[str, str]:
    operand, direction = (part.strip() for part in text.split(","))
    return operand, direction
