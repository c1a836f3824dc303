"""A roofline per layer: arithmetic intensity against each memory's bandwidth and the array's peak.

For one evaluated layer (its best mapping):

* ``ops``: the points of its loop nest (MACs of a MAC layer, operations of a vector layer);
* ``peak``: operations per cycle of the unit it runs on (the MAC array's units, or ops per ideal
  cycle for a vector unit or an in-memory-computing array);
* per memory: the bytes moved through its ports by this mapping (word accesses x port width, all
  operands and directions, all instances), the intensity ``ops / bytes`` and the memory's
  bandwidth (sum of its ports' ``bandwidth_max`` x instances); its roof is intensity x bandwidth;
* per memory port the latency model times (``port_stall_slack``): the cycles it is busy, the ideal
  computation cycles plus its stall (or minus its slack); its roof is ops / those cycles. A port carrying
  two transfers a cycle (a per-MAC register exchanging its partial sum with the MAC and with the memory
  above it) halves the rate whatever the bandwidth of the memory as a whole;
* ``attainable`` = the lowest roof (or the peak); ``bound`` names it: ``compute`` or the memory, and
  ``bound_port`` that memory's port with the lowest roof (none when the model stalls none of its
  ports). A layer is thus labelled with what binds it in the model. ``achieved`` = ops / the layer's latency; ``achieved / attainable`` says how close the
  mapping gets (below 1: under-used array, on/off-loading).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryTraffic:
    memory: str
    bytes: float
    intensity: float | None  # ops per byte; None when nothing moves
    bandwidth_bytes_per_cycle: float
    roof: float | None  # ops per cycle this memory allows


@dataclass(frozen=True)
class RooflineRow:
    layer_id: int
    layer: str
    operator_type: str
    compute_unit: str
    ops: int
    latency_cycles: float
    peak: float
    achieved: float
    attainable: float
    bound: str
    memories: tuple[MemoryTraffic, ...]
    bound_port: str = ""  # "<memory>.<port>": the bound memory's port the latency model stalls most

    def record(self) -> dict:
        """One flat table row (per memory: bytes, intensity, roof)."""
        row = {
            "id": self.layer_id,
            "name": self.layer,
            "operator_type": self.operator_type,
            "compute_unit": self.compute_unit,
            "ops": self.ops,
            "latency_cycles": self.latency_cycles,
            "peak_ops_per_cycle": self.peak,
            "achieved_ops_per_cycle": self.achieved,
            "attainable_ops_per_cycle": self.attainable,
            "bound": self.bound,
            "bound_port": self.bound_port,
        }
        for m in self.memories:
            row[f"{m.memory}_bytes"] = m.bytes
            row[f"{m.memory}_intensity"] = m.intensity
            row[f"{m.memory}_bandwidth_bytes_per_cycle"] = m.bandwidth_bytes_per_cycle
        return row


def _peak(layer, result, accelerator) -> float:
    array = accelerator.operational_array
    on_vector_unit = getattr(result, "compute_unit", "mac_array") == "vector_unit"
    if not on_vector_unit and not array.is_imc:
        return float(array.total_units)
    return layer.total_macs / result.ideal_cycle if result.ideal_cycle else float("inf")


def memory_traffic(layer, result, accelerator) -> dict[str, float]:
    """Bytes moved through each memory's ports by the layer's mapping."""
    moved: dict[str, float] = {}
    for operand, names in result.memory_names.items():
        memory_operand = layer.memory_operand(operand)
        for name, accesses in zip(names, result.memory_word_access[operand]):
            memory = accelerator.memory.get(name)
            if memory is None:  # a vector unit's own registers: not a memory of the file
                continue
            bits = sum(
                count * (memory.bandwidth_max(memory_operand, direction) or 0)
                for direction, count in accesses.items()
            )
            moved[name] = moved.get(name, 0.0) + bits / 8
    return moved


def roofline_row(layer, result, accelerator) -> RooflineRow:
    """The roofline figures of one layer's result."""
    ops = layer.total_macs
    peak = _peak(layer, result, accelerator)
    traffic = []
    for name, size in memory_traffic(layer, result, accelerator).items():
        memory = accelerator.memory[name]
        bandwidth = (
            sum(p.bandwidth_max for p in memory.ports) * accelerator.unroll_count(memory) / 8
        )
        intensity = ops / size if size > 0 else None
        traffic.append(
            MemoryTraffic(
                name,
                size,
                intensity,
                bandwidth,
                None if intensity is None else intensity * bandwidth,
            )
        )
    ports = [(port.rpartition(".")[0], roof, port) for port, roof in port_roofs(ops, result)]
    roofs = [("compute", peak, "")] + ports  # on a tie the compute, then a port, names the bound
    roofs += [(m.memory, m.roof, "") for m in traffic if m.roof is not None]
    bound, attainable, port = min(roofs, key=lambda r: r[1])
    if not port:  # a memory's roof binds: name its port the model stalls most, if any
        stalled = sorted((roof, name) for memory, roof, name in ports if memory == bound)
        port = stalled[0][1] if stalled else ""
    latency = float(result.latency_total2)
    return RooflineRow(
        layer.id,
        layer.name,
        layer.operator_type,
        getattr(result, "compute_unit", "mac_array"),
        ops,
        latency,
        peak,
        ops / latency if latency else 0.0,
        attainable,
        bound,
        tuple(traffic),
        port,
    )


def port_roofs(ops: float, result) -> list[tuple[str, float]]:
    """("<memory>.<port>", ops per cycle) for each port the latency model stalls: ops over the cycles the
    port is busy (the ideal computation cycles plus its stall). Ports with slack cannot bind."""
    cycles = result.ideal_temporal_cycle
    return [
        (port, ops / (cycles + stall))
        for port, stall in sorted((getattr(result, "port_stall_slack", None) or {}).items())
        if stall > 0 and cycles + stall > 0
    ]


def roofline_rows(result) -> list[RooflineRow]:
    """One roofline row per evaluated layer of a NetworkResult, in processing order."""
    return [
        roofline_row(layer, cost, result.accelerators[layer.id]) for layer, cost in result.layers
    ]


def binding_line(rows: list[RooflineRow]) -> str:
    """What bounds the step's layers, by share of its latency, largest first (a port when the model
    stalls one, else the memory or ``compute``): ``layers bound by (share of the step): acc_reg.r_port_1
    97%, ...``."""
    total = sum(row.latency_cycles for row in rows)
    shares: dict[str, float] = {}
    for row in rows:
        name = row.bound_port or row.bound
        shares[name] = shares.get(name, 0.0) + row.latency_cycles
    ranked = sorted(shares.items(), key=lambda item: -item[1])
    parts = [f"{name} {cycles / total:.0%}" for name, cycles in ranked if total > 0]
    return "layers bound by (share of the step): " + ", ".join(parts)
