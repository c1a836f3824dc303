"""Stream's ``stream.utils``: :class:`CostModelEvaluationLUT`, the cost table a run wrote."""

from __future__ import annotations

from pathlib import Path

from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.multicore.cost_table import CostEntry, NodeKey
from zigzag.multicore.cost_table.lut import read_lut, read_lut_pairs

__all__ = ["CostModelEvaluationLUT"]


class CostModelEvaluationLUT:
    """The per-(CN, core) cost evaluations of a run, read from its ``cost_lut.pickle``.

    Nodes are our CN cost keys (:class:`~zigzag.multicore.cost_table.NodeKey`: what of a CN sets
    its cost), cores are core ids, and an evaluation is our single-core
    :class:`~zigzag.cost.result.CostResult` (``energy_total``, ``latency_total2``,
    ``mac_spatial_utilization``, ``mem_energy_breakdown``, ...). The file holds JSON (our cost
    table format) despite its name, as Stream names it.
    """

    def __init__(self, cache_path: str | None, load: bool = True):
        self.cache_path = cache_path
        self.lut: dict[NodeKey, dict[int, CostResult]] = {}
        self._entries: dict[str, CostEntry] = {}
        if load and cache_path and Path(cache_path).exists():
            self.load()

    def load(self) -> None:
        """Read the table from ``cache_path``."""
        if not self.cache_path:
            raise InputError(
                None, "cache_path", "no cost table file given; pass the run's cost_lut.pickle"
            )
        self._entries = read_lut(self.cache_path)
        self.lut = {}
        for (node, core), key in read_lut_pairs(self.cache_path).items():
            if key in self._entries:
                self.lut.setdefault(node, {})[core] = self._entries[key].result

    def get_nodes(self) -> list[NodeKey]:
        return list(self.lut)

    def get_cores(self, node: NodeKey) -> list[int]:
        return list(self.lut.get(node, {}))

    def has_cme(self, node: NodeKey, core: int) -> bool:
        return core in self.lut.get(node, {})

    def get_cme(self, node: NodeKey, core: int) -> CostResult:
        """The evaluation of ``node`` on core ``core``."""
        if not self.has_cme(node, core):
            raise InputError(
                self.cache_path,
                "cost table",
                f"no evaluation of this CN on core {core}; cores held "
                f"for it: {self.get_cores(node) or 'none'}",
            )
        return self.lut[node][core]

    def get_equal_node(self, node: NodeKey) -> NodeKey | None:
        """``node`` if the table holds it (a CN's cost key is its identity), else None."""
        return node if node in self.lut else None

    def get_equal_core(self, node: NodeKey, core: int) -> int | None:
        return core if self.has_cme(node, core) else None
