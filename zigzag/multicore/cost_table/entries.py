"""What of a computation node (CN) sets its cost on a core (:class:`NodeKey`), and that cost
(:class:`CostEntry`), with their plain-data forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.multicore.offchip import (
    FOUR_WAY,
)
from zigzag.workload.layer import DimRelation, Layer, parse_equation
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS


_Pairs = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class NodeKey:
    """What of a CN determines its cost on a core (hashable, immutable).

    ``loop_sizes``: the CN's loop sizes (its span), in the layer's loop order; ``relations``:
    dimension relations (``"IX=2*OX+1*FX"``); ``pr_sizes``: sizes of the related input dims of the
    whole *layer* (Stream hands the layer's, not the CN's); ``precision``: bits per operand
    (``O`` = partial sums, ``O_final`` = final outputs); ``edge_bits``: per input operand, the sum
    of the bits on the CN's in-edges (empty for constant operands); ``spatial_mapping``: the
    mapping file's unrolling, used only on a core without ``dataflows``.

    Stream costs every CN with the entry of the first CN of its class (same layer, same number of
    real predecessors, in graph order; docs/models/multi-core.md#cost-table): build the key from that CN.
    """

    equation: str
    loop_sizes: _Pairs
    precision: _Pairs
    relations: tuple[str, ...] = ()
    pr_sizes: _Pairs = ()
    edge_bits: _Pairs = ()
    spatial_mapping: tuple[tuple[str, _Pairs], ...] | None = None
    #: the layer the CN belongs to, named in warnings only (not part of the key)
    layer_name: str = field(default="", compare=False)
    #: operation class of a vector layer (None: a layer of the MAC array, as in Stream)
    vector_op: str | None = None

    def layer(self, core: Accelerator, *, name: str = "cn") -> Layer:
        """The CN as a single-core layer on ``core`` (its dataflows as spatial mapping)."""
        spatial = _dataflows(core.dataflows) if core.dataflows else self.spatial_mapping
        entry = MappingEntry(
            name="default",
            spatial_mapping=None if spatial is None else dict(spatial),
            memory_operand_links=dict(STREAM_MEMORY_OPERAND_LINKS),
        )
        return Layer(
            id=0,
            name=name,
            operator_type="stream_cn",
            equation=self.equation,
            loop_sizes=dict(self.loop_sizes),
            operand_dims=parse_equation(self.equation),
            relations=tuple(DimRelation.parse(r) for r in self.relations),
            precision=dict(self.precision),
            operand_source={},
            mapping=entry,
            given_pr_sizes=dict(self.pr_sizes),
            vector_op=self.vector_op,
        )

    def to_dict(self) -> dict:
        data = {
            "equation": self.equation,
            "loop_sizes": dict(self.loop_sizes),
            "precision": dict(self.precision),
            "relations": list(self.relations),
            "pr_sizes": dict(self.pr_sizes),
            "edge_bits": dict(self.edge_bits),
        }
        if self.spatial_mapping is not None:
            data["spatial_mapping"] = {oa: dict(pairs) for oa, pairs in self.spatial_mapping}
        if self.vector_op is not None:
            data["vector_op"] = self.vector_op
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "NodeKey":
        spatial = data.get("spatial_mapping")
        return cls(
            equation=data["equation"],
            loop_sizes=tuple((str(d), int(s)) for d, s in data["loop_sizes"].items()),
            precision=tuple((str(o), int(p)) for o, p in data["precision"].items()),
            relations=tuple(data.get("relations", ())),
            pr_sizes=tuple((str(d), int(s)) for d, s in data.get("pr_sizes", {}).items()),
            edge_bits=tuple((str(o), int(b)) for o, b in data.get("edge_bits", {}).items()),
            spatial_mapping=None
            if spatial is None
            else tuple(
                (oa, tuple((d, int(f)) for d, f in pairs.items())) for oa, pairs in spatial.items()
            ),
            vector_op=data.get("vector_op"),
        )


def _dataflows(dataflows: Mapping) -> tuple[tuple[str, _Pairs], ...]:
    """A core's ``dataflows`` ({D1: ["K, 32"], ...}) as unrollings per array dimension."""
    result = []
    for oa, items in dataflows.items():
        pairs = []
        for item in items:
            dim, factor = (
                item
                if isinstance(item, (list, tuple))
                else (p.strip() for p in str(item).split(","))
            )
            pairs.append((str(dim).upper(), int(factor)))
        result.append((oa, tuple(pairs)))
    return tuple(result)


@dataclass(frozen=True)
class CostEntry:
    """A CN's cost on one core, as Stream's scheduler uses it (docs/models/multi-core.md#cost-table).

    ``too_large_operands``: memory operands streamed from DRAM, in the layer's equation order (the
    scheduler's order); ``dram_operands``: the same in the DRAM level's order; ``offchip_energy``:
    the DRAM level's energy of those operands, ``onchip_energy`` the rest of ``energy_total``;
    ``offchip_bw``: DRAM bandwidth need (bits/cycle) per direction (``rd_out_to_low``,
    ``wr_in_by_low``, ``rd_out_to_high``, ``wr_in_by_high``; zeros without streamed operands);
    ``result``: the single-core evaluation (mappings, per-level energies, utilisations, ...).
    """

    key: str
    too_large_operands: tuple[str, ...]
    dram_operands: tuple[str, ...]
    onchip_energy: float
    offchip_energy: float
    offchip_bw: dict[str, float]
    result: CostResult
    evaluations: int = field(default=0, compare=False)

    @property
    def latency(self) -> float:
        """Runtime of a CN with a fixed core (``latency_total2``)."""
        return self.result.latency_total2

    @property
    def ga_latency(self) -> int:
        """Runtime of a CN placed by the genetic allocation (``int(latency_total1)``)."""
        return int(self.result.latency_total1)

    @property
    def energy_total(self) -> float:
        return self.result.energy_total

    @property
    def mem_energy_breakdown(self) -> dict[str, tuple[float, ...]]:
        return self.result.mem_energy_breakdown

    @property
    def mac_utilization(self) -> float:
        return self.result.mac_utilization2

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "too_large_operands": list(self.too_large_operands),
            "dram_operands": list(self.dram_operands),
            "onchip_energy": self.onchip_energy,
            "offchip_energy": self.offchip_energy,
            "offchip_bw": dict(self.offchip_bw),
            "evaluations": self.evaluations,
            "result": self.result.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "CostEntry":
        return cls(
            key=data["key"],
            too_large_operands=tuple(data["too_large_operands"]),
            dram_operands=tuple(data["dram_operands"]),
            onchip_energy=data["onchip_energy"],
            offchip_energy=data["offchip_energy"],
            offchip_bw={d: data["offchip_bw"][d] for d in FOUR_WAY},
            result=CostResult.from_dict(data["result"]),
            evaluations=data.get("evaluations", 0),
        )
