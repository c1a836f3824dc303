"""The cost table of one accelerator: (CN, core id) -> entry, from memory, its one-file table,
the cache or computed."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.mapping_search.jobs import job_key
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.cost_table.cache import entry_path, read_entry, write_entry, write_job
from zigzag.multicore.cost_table.entries import CostEntry, NodeKey
from zigzag.multicore.cost_table.jobs import cost_job, evaluate_cost_job
from zigzag.multicore.cost_table.lut import read_lut, write_lut


class CostTable:
    """(CN, core id) -> :class:`CostEntry` for one accelerator and one set of options.

    Entries come from memory, then the one-file table given as ``lut_path`` (if it exists), then
    the content-addressed ``cache``, else they are computed. ``save()`` writes every entry used
    (plus those read from ``lut_path``) to ``lut_path``. Entries are found by content, so a
    table file made for other inputs is harmless: its entries are simply not used.
    """

    def __init__(
        self,
        cores: Mapping[int, Accelerator],
        *,
        dram: Memory | None = None,
        options: SearchOptions = SearchOptions(),
        cache: str | Path | None = None,
        lut_path: str | Path | None = None,
    ):
        self.cores = dict(cores)
        self.dram = dram
        self.options = options
        self.cache = cache
        self.lut_path = Path(lut_path) if lut_path is not None else None
        self._entries: dict[str, CostEntry] = {}
        self._keys: dict[tuple[NodeKey, int], str] = {}
        self.computed = 0
        if self.lut_path is not None and self.lut_path.exists():
            self._entries.update(read_lut(self.lut_path))

    @classmethod
    def for_accelerator(cls, accelerator, **kwargs) -> "CostTable":
        """The table of a :class:`~zigzag.multicore.hardware.MultiCoreAccelerator` (its compute cores,
        and its off-chip core's memory for streamed operands)."""
        cores = {core.id: core.accelerator for core in accelerator.compute_cores}
        return cls(cores, dram=offchip_memory(accelerator), **kwargs)

    def key(self, node: NodeKey, core_id: int) -> str:
        """The content key of ``node`` on core ``core_id``."""
        pair = (node, core_id)
        if pair not in self._keys:
            self._keys[pair] = job_key(self.job(node, core_id))
        return self._keys[pair]

    def job(self, node: NodeKey, core_id: int) -> dict:
        return cost_job(node, self._core(core_id), self.options, self.dram)

    def entry(self, node: NodeKey, core_id: int) -> CostEntry:
        """The cost of ``node`` on core ``core_id``."""
        key = self.key(node, core_id)
        if key not in self._entries:
            self._entries[key] = self._load_or_compute(node, core_id, key)
        return self._entries[key]

    def fill(self, pairs: Iterable[tuple[NodeKey, int]]) -> list[CostEntry]:
        """The entries of several (node, core id) pairs (computed once per distinct key)."""
        return [self.entry(node, core_id) for node, core_id in pairs]

    def planned_jobs(self, pairs: Iterable[tuple[NodeKey, int]]) -> dict[str, dict]:
        """key -> job of every (node, core id) pair not cached yet, in order (the workflow's cost
        plan holds them; its ``multicore-costs`` steps compute them)."""
        if self.cache is None:
            raise InputError(None, "cache", "planning cost-table jobs needs a cache folder")
        jobs = {}
        for node, core_id in pairs:
            key = self.key(node, core_id)
            if (
                key not in jobs
                and key not in self._entries
                and not entry_path(self.cache, key).exists()
            ):
                jobs[key] = {
                    **self.job(node, core_id),
                    "label": f"CN on core {core_id}",
                    "layer_name": node.layer_name,
                }
        return jobs

    def _core(self, core_id: int) -> Accelerator:
        try:
            return self.cores[core_id]
        except KeyError:
            raise InputError(
                None,
                "core_allocation",
                f"core {core_id} does not exist (cores: "
                f"{', '.join(map(str, self.cores))}); use one of those",
            ) from None

    def _load_or_compute(self, node: NodeKey, core_id: int, key: str) -> CostEntry:
        cached = None if self.cache is None else read_entry(self.cache, key)
        if cached is not None:
            return cached
        job = self.job(node, core_id)
        entry = evaluate_cost_job(job, key, node.layer_name)
        self.computed += 1
        if self.cache is not None:
            write_job(self.cache, job)
            write_entry(entry_path(self.cache, key), entry)
        return entry

    def save(self, path: str | Path | None = None) -> Path:
        """Write all entries held to one file (default: ``lut_path``)."""
        target = Path(path) if path is not None else self.lut_path
        if target is None:
            raise InputError(None, "cost_lut_path", "no file given to save the cost table to")
        write_lut(
            target,
            self._entries.values(),
            {p: k for p, k in self._keys.items() if k in self._entries},
        )
        return target


def offchip_memory(accelerator) -> Memory | None:
    """The memory of a multi-core accelerator's off-chip core (None without one)."""
    offchip = accelerator.offchip_core
    if offchip is None:
        return None
    memories = offchip.accelerator.memories
    if len(memories) != 1:
        raise InputError(
            offchip.file or None,
            "memories",
            f"the off-chip core has {len(memories)} memories; give it exactly one (the DRAM)",
        )
    return memories[0]
