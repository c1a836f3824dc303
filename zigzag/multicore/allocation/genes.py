"""The allocation problem: flexible (layer, group) genes and the fitness of one allocation.

A *gene* is one ``(layer id, group)`` whose CNs may go to more than one core (the layer's
mapping entry lists several cores and does not fix them; docs/models/multi-core.md#allocation-search). An *allocation*
gives one core per gene. Its fitness is ``(energy, latency)`` of the full schedule with the CNs
of every gene costed on the chosen core, runtime ``int(latency_total1)`` as Stream's genetic
algorithm does (docs/models/multi-core.md#allocation-search), every other CN keeping its fixed-allocation cost (``latency_total2``).

:class:`AllocationProblem` holds everything once: the scheduling problem of a placeholder
allocation and, per gene and candidate core, the cost arrays of the gene's CNs. Evaluating an
allocation only writes those arrays into copies of the per-CN cost vectors and schedules: the
CN graph, its tensors and edges are never rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from zigzag.errors import InputError
from zigzag.notes import grouped_layer_warnings
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.offchip import cache_read_share
from zigzag.multicore.schedule.adapter import CNCost, problem_from_cn_graph
from zigzag.multicore.schedule.costs import node_key
from zigzag.multicore.schedule.problem import ScheduleProblem, memory_operand_index
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.scheduler import schedule
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS


@dataclass(frozen=True)
class Gene:
    """One flexible ``(layer, group)``, the cores it may go to (valid cores only) and its layer stack."""

    layer: int
    group: int
    cores: tuple[int, ...]
    stack: int = 0

    @property
    def label(self) -> str:
        return f"{self.layer}:{self.group}"


def allocation_genes(graph: CNGraph, compute_cores: Sequence[int]) -> tuple[Gene, ...]:
    """The genes of ``graph``: every ``(layer, group)`` with CNs left to allocate (core -1), sorted.

    Valid cores are the layer's candidate cores that exist as compute cores, in mapping order.
    (Stream also drops cores whose id is not below the number of flexible unique nodes, a quirk
    that can remove legitimate cores; we keep every valid core.)
    """
    open_cns = np.flatnonzero(graph.core < 0)
    pairs = sorted(set(zip(graph.layer[open_cns].tolist(), graph.group[open_cns].tolist())))
    known = set(compute_cores)
    genes = []
    for layer, group in pairs:
        info = graph.layers[layer]
        cores = tuple(dict.fromkeys(c for c in info.core_allocation if c in known))
        if not cores:
            raise InputError(
                None,
                f"mapping of layer {layer} ({info.name}) core_allocation",
                f"none of the cores {list(info.core_allocation)} is a compute core "
                f"(compute cores: {sorted(known)}); list at least one of them",
            )
        genes.append(Gene(layer, group, cores, info.stack))
    return tuple(genes)


@dataclass(frozen=True)
class GeneCosts:
    """The cost arrays of one gene's CNs on each of its cores (index = position in ``gene.cores``)."""

    cns: np.ndarray
    runtime: np.ndarray  # (cores, CNs)
    onchip_energy: np.ndarray
    offchip_energy: np.ndarray
    bw_to_offchip: np.ndarray
    bw_from_offchip: np.ndarray
    too_large: tuple[tuple[tuple[int, ...], ...], ...]  # per core, per CN
    dram_bits: tuple[tuple, ...] = ()  # per core, per CN: CNCost.dram_bits


@dataclass(frozen=True)
class AllocationProblem:
    """Genes, their costs and the base scheduling problem (placeholder cores for the genes)."""

    genes: tuple[Gene, ...]
    gene_costs: tuple[GeneCosts, ...]
    base: ScheduleProblem
    prefetch_cns: tuple[tuple[int, int, int], ...] = ()  # (tensor, CN, memory operand)

    def check(self, allocation: Sequence[int]) -> None:
        """Raise :class:`InputError` unless ``allocation`` gives one valid core per gene."""
        if len(allocation) != len(self.genes):
            raise InputError(
                None,
                "allocation",
                f"{len(allocation)} cores for {len(self.genes)} genes; give one per gene",
            )
        for gene, core in zip(self.genes, allocation):
            if core not in gene.cores:
                raise InputError(
                    None,
                    f"allocation of layer {gene.layer} group {gene.group}",
                    f"core {core} is not one of its valid cores {list(gene.cores)}",
                )

    def problem(self, allocation: Sequence[int]) -> ScheduleProblem:
        """The scheduling problem of one allocation (one core per gene, gene order)."""
        self.check(allocation)
        base = self.base
        if not self.genes:
            return base
        core = base.core.copy()
        runtime, onchip, offchip = (
            base.runtime.copy(),
            base.onchip_energy.copy(),
            base.offchip_energy.copy(),
        )
        bw_to, bw_from = base.bw_to_offchip.copy(), base.bw_from_offchip.copy()
        too_large = list(base.too_large)
        dram_bits = list(base.dram_bits) if base.dram_bits is not None else None
        for gene, costs, chosen in zip(self.genes, self.gene_costs, allocation):
            k = gene.cores.index(chosen)
            cns = costs.cns
            core[cns] = chosen
            runtime[cns] = costs.runtime[k]
            onchip[cns] = costs.onchip_energy[k]
            offchip[cns] = costs.offchip_energy[k]
            bw_to[cns] = costs.bw_to_offchip[k]
            bw_from[cns] = costs.bw_from_offchip[k]
            for cn, streamed in zip(cns.tolist(), costs.too_large[k]):
                too_large[cn] = streamed
            if dram_bits is not None and costs.dram_bits:
                for cn, bits in zip(cns.tolist(), costs.dram_bits[k]):
                    dram_bits[cn] = bits
        prefetch = tuple((t, int(core[cn]), m) for t, cn, m in self.prefetch_cns)
        return replace(
            base,
            core=core,
            runtime=runtime,
            onchip_energy=onchip,
            offchip_energy=offchip,
            bw_to_offchip=bw_to,
            bw_from_offchip=bw_from,
            too_large=tuple(too_large),
            prefetch=prefetch,
            dram_bits=None if dram_bits is None else tuple(dram_bits),
        )

    def schedule(self, allocation: Sequence[int]) -> ScheduleResult:
        """The full schedule of one allocation."""
        return schedule(self.problem(allocation))

    def fitness(self, allocation: Sequence[int]) -> tuple[float, float]:
        """``(energy, latency)`` of one allocation, both to minimise."""
        result = self.schedule(allocation)
        return float(result.energy), float(result.latency)


def build_allocation_problem(
    graph: CNGraph,
    accelerator,
    table: CostTable,
    prefetch: Sequence[str] = (),
    name: str = "schedule",
    latency_model: str = "zigzag",
) -> AllocationProblem:
    """Genes of ``graph`` on ``accelerator`` with their per-core costs from ``table``.

    Every (CN, candidate core) entry the search can use is looked up (or computed) here, once
    (a warning several layers' searches give is logged once, naming them).
    Fixed CNs keep Stream's fixed-allocation cost (``latency_total2``) on their core.
    """
    with grouped_layer_warnings():
        return _allocation_problem(graph, accelerator, table, prefetch, name, latency_model)


def _allocation_problem(
    graph: CNGraph,
    accelerator,
    table: CostTable,
    prefetch: Sequence[str],
    name: str,
    latency_model: str,
) -> AllocationProblem:
    genes = allocation_genes(graph, [c.id for c in accelerator.compute_cores])
    rep = graph.cost_node()
    keys = {r: node_key(graph, r) for r in np.unique(rep).tolist()}
    costs: list[CNCost | None] = [None] * len(graph)
    for cn in np.flatnonzero(graph.core >= 0).tolist():
        costs[cn] = cache_read_share(
            CNCost.of_entry(table.entry(keys[int(rep[cn])], int(graph.core[cn])), dram=table.dram),
            graph.layers[int(graph.layer[cn])].cache_operands,
        )
    placeholder = graph.core.copy()
    gene_costs = []
    for gene in genes:
        cns = np.flatnonzero((graph.layer == gene.layer) & (graph.group == gene.group))
        shares = graph.layers[gene.layer].cache_operands
        per_core = [
            [
                cache_read_share(CNCost.of_entry(entry, entry.ga_latency, table.dram), shares)
                for entry in (table.entry(keys[int(rep[cn])], core) for cn in cns.tolist())
            ]
            for core in gene.cores
        ]
        placeholder[cns] = gene.cores[0]
        for cn, cost in zip(cns.tolist(), per_core[0]):
            costs[cn] = cost

        def column(attr: str, rows=per_core) -> np.ndarray:
            return np.array([[getattr(x, attr) for x in row] for row in rows], dtype=np.float64)

        gene_costs.append(
            GeneCosts(
                cns=cns,
                runtime=column("runtime"),
                onchip_energy=column("onchip_energy"),
                offchip_energy=column("offchip_energy"),
                bw_to_offchip=column("bw_to_offchip"),
                bw_from_offchip=column("bw_from_offchip"),
                too_large=tuple(
                    tuple(tuple(memory_operand_index(m) for m in x.too_large) for x in row)
                    for row in per_core
                ),
                dram_bits=tuple(tuple(x.dram_bits for x in row) for row in per_core),
            )
        )
    base = problem_from_cn_graph(
        graph, accelerator, costs, cores=placeholder, name=name, latency_model=latency_model
    )
    return AllocationProblem(genes, tuple(gene_costs), base, _prefetch_cns(graph, base, prefetch))


def _prefetch_cns(
    graph: CNGraph, base: ScheduleProblem, prefetch: Sequence[str]
) -> tuple[tuple[int, int, int], ...]:
    """Stream's ``operands_to_prefetch`` as (tensor, CN, memory operand): the core follows the CN."""
    out = []
    for i in np.argsort(graph.node_order, kind="stable").tolist():
        info = graph.layers[int(graph.layer[i])]
        for op in info.operand_dims:
            if op in prefetch and op in info.constant_operands:
                m = memory_operand_index(STREAM_MEMORY_OPERAND_LINKS[op])
                out.append((int(base.operand_tensor[i, m]), i, m))
    return tuple(out)
