"""Stream's cost table: the best single-core mapping of each computation node (CN) on each core.

One *entry* = one CN shape on one core: our single-core search (minimum latency, the core's
``dataflows`` as spatial mapping, LOMA) on the core, with the operands that do not fit its top
memories streamed from an off-chip DRAM level (docs/models/multi-core.md#cost-table). Inputs:

* :class:`NodeKey` -- what of a CN determines its cost (loop sizes, equation, dimension relations,
  input sizes, precisions, and the bits its in-edges bring per operand for the too-large test);
* the core (an :class:`~zigzag.hardware.accelerator.Accelerator` with ``dataflows``), the off-chip
  memory and the search options.

An entry is identified by the hash of its *job*: the single-core layer job (layer signature, the
core with its DRAM level, options, model version, see :mod:`zigzag.mapping_search.jobs`) plus the
streamed operands. Entries live in the content-addressed cache as
``<cache>/multicore-cost/jobs/<key>.json`` and ``<cache>/multicore-cost/entries/<key>.json``, so they are
shared by identical CNs, cores, experiments and allocations, and an input change gives a new key
(never a stale entry). :class:`CostTable` also reads and writes all its entries as one file
(Stream's ``cost_lut_path``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from zigzag.cost.model import analyse
from zigzag.cost.result import CostResult
from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.io.atomic import write_json_atomic, write_json_once
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.sealed import DamagedFile, damage_warning, read_sealed, write_sealed
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.jobs import job_key, layer_from_job, layer_job, model_version
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.offchip import (
    FOUR_WAY,
    offchip_bandwidth,
    stored_bits,
    too_large_operands,
    with_dram_level,
)
from zigzag.workload.layer import DimRelation, Layer, parse_equation
from zigzag.multicore.mapping import STREAM_MEMORY_OPERAND_LINKS

if TYPE_CHECKING:
    from zigzag.multicore.hardware import Core

#: The version of the Stream-specific part of an entry (too-large test, DRAM level, split, off-chip
#: bandwidth): a hash of the modules computing it, as the single-core model's version inside the job.
STREAM_COST_VERSION = model_version(sources=("multicore/cost_table.py", "multicore/offchip.py"))

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


# ----- jobs: the content that determines an entry ----------------------------------------------


def cost_job(
    node: NodeKey, core: "Accelerator | Core", options: SearchOptions, dram: Memory | None
) -> dict:
    """Everything that determines ``node``'s entry on ``core`` (and nothing else).

    Runs the too-large test (docs/models/multi-core.md#cost-table) and adds the DRAM level (docs/models/multi-core.md#cost-table), so the job is the single-core
    layer job on the extended core plus the streamed operands. The core's name is left out (it does
    not change the cost), so identical cores share entries.
    """
    core = getattr(
        core, "accelerator", core
    )  # a multi-core accelerator's Core, or a bare Accelerator
    if core.operational_array.total_units == 0:
        raise InputError(
            None,
            f"core '{core.name}'",
            "has no operational units (the off-chip core); it runs no CN",
        )
    layer = node.layer(core)
    streamed = too_large_operands(layer, core, stored_bits(layer, dict(node.edge_bits)))
    if streamed and dram is None:
        raise InputError(
            None,
            f"core '{core.name}'",
            f"cannot hold memory operands {', '.join(streamed)} of a CN and the accelerator has no "
            "off-chip core to stream them from; add an offchip_core",
        )
    hardware = with_dram_level(core, dram, streamed) if streamed else core
    job = layer_job(layer, hardware, options)
    job["accelerator"]["name"] = "core"
    job["stream"] = {"version": STREAM_COST_VERSION, "dram_operands": list(streamed)}
    return job


def evaluate_cost_job(
    job: dict, key: str | None = None, layer_name: str | None = None
) -> CostEntry:
    """Search a job's CN on its core and derive Stream's figures (docs/models/multi-core.md#cost-table);
    ``layer_name`` names the CN's layer in the search's warnings."""
    layer = layer_from_job({**job, "layer_name": layer_name or "CN"})
    hardware = accelerator_from_dict(job["accelerator"])
    options = SearchOptions(**job["options"])
    best, stats = search_layer(layer, hardware, options, show_progress=False)
    streamed = tuple(job["stream"]["dram_operands"])
    in_equation_order = tuple(
        layer.memory_operand(op) for op in layer.operands if layer.memory_operand(op) in streamed
    )
    onchip, offchip = best.energy_total, 0.0
    for mem_op in in_equation_order:
        dram_energy = best.mem_energy_breakdown[layer.layer_operand_of[mem_op]][-1]
        offchip += dram_energy
        onchip -= dram_energy
    bandwidth = dict.fromkeys(FOUR_WAY, 0)
    if streamed:
        detail = analyse(
            layer,
            hardware,
            best.spatial_mapping,
            best.spatial_mapping_int,
            best.temporal_mapping,
            spatial_mapping_array=best.spatial_mapping_array,
            **options.model_options(),
        )
        bandwidth = offchip_bandwidth(detail, hardware.memories[-1].name)
    return CostEntry(
        key=key or job_key(job),
        too_large_operands=in_equation_order,
        dram_operands=streamed,
        onchip_energy=onchip,
        offchip_energy=offchip,
        offchip_bw=bandwidth,
        result=best,
        evaluations=stats.evaluations,
    )


_LOG = logging.getLogger(__name__)


# ----- the cache -------------------------------------------------------------------------------


def job_path(cache: str | Path, key: str) -> Path:
    return Path(cache) / "multicore-cost" / "jobs" / f"{key}.json"


def entry_path(cache: str | Path, key: str) -> Path:
    return Path(cache) / "multicore-cost" / "entries" / f"{key}.json"


def write_job(
    cache: str | Path, job: dict, *, label: str | None = None, layer_name: str | None = None
) -> str:
    """Store a job in the cache (once) and return its key (``label`` and ``layer_name`` are kept
    beside the job, outside its key)."""
    key = job_key(job)
    path = job_path(cache, key)
    if not path.exists():
        extra = {
            name: value for name, value in (("label", label), ("layer_name", layer_name)) if value
        }
        write_json_once(path, {**job, **extra})
    return key


def read_entry(cache: str | Path, key: str) -> CostEntry | None:
    """The cached entry ``key``, checked (:mod:`zigzag.io.sealed`); None when there is none or it
    is damaged (reported in one warning naming it: the caller computes it again and replaces it)."""
    try:
        data = read_sealed(entry_path(cache, key), key)
    except FileNotFoundError:
        return None
    except DamagedFile as exc:
        _LOG.warning(damage_warning(exc))
        return None
    return CostEntry.from_dict(data)


def write_entry(path: str | Path, entry: CostEntry) -> None:
    """Write ``entry`` sealed with its key."""
    write_sealed(path, entry.to_dict(), entry.key)


def cost_of(
    node: NodeKey,
    core: "Accelerator | Core",
    options: SearchOptions = SearchOptions(),
    *,
    dram: Memory | None = None,
    cache: str | Path | None = None,
) -> CostEntry:
    """``node``'s cost entry on ``core`` (``dram``: the off-chip memory for too-large operands),
    read from ``cache`` when there, else computed (and stored there when a cache is given)."""
    job = cost_job(node, core, options, dram)
    key = job_key(job)
    cached = None if cache is None else read_entry(cache, key)
    if cached is not None:
        return cached
    entry = evaluate_cost_job(job, key, node.layer_name)
    if cache is not None:
        write_job(cache, job)
        write_entry(entry_path(cache, key), entry)
    return entry


# ----- the table -------------------------------------------------------------------------------

LUT_FORMAT = "zigzag-flow stream cost table"


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


def write_lut(
    path: str | Path,
    entries: Iterable[CostEntry],
    pairs: Mapping[tuple[NodeKey, int], str] | None = None,
) -> None:
    """All ``entries`` as one JSON file, keyed by content, with the (CN, core id) pairs that used
    them (``pairs``: pair -> key) for readers that look entries up by CN and core."""
    write_json_atomic(
        path,
        {
            "format": LUT_FORMAT,
            "version": STREAM_COST_VERSION,
            "entries": {entry.key: entry.to_dict() for entry in entries},
            "pairs": [
                {"node": node.to_dict(), "core": core_id, "key": key}
                for (node, core_id), key in (pairs or {}).items()
            ],
        },
    )


def read_lut(path: str | Path) -> dict[str, CostEntry]:
    """Entries of a one-file cost table, by key."""
    data = _lut_data(path)
    return {key: CostEntry.from_dict(entry) for key, entry in data["entries"].items()}


def read_lut_pairs(path: str | Path) -> dict[tuple[NodeKey, int], str]:
    """The (CN, core id) -> entry key pairs a one-file cost table records (none in older files)."""
    data = _lut_data(path)
    return {(NodeKey.from_dict(p["node"]), int(p["core"])): p["key"] for p in data.get("pairs", [])}


def _lut_data(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            path, None, f"cannot read the cost table ({exc}); delete it to rebuild it"
        ) from None
    if not isinstance(data, dict) or data.get("format") != LUT_FORMAT:
        raise InputError(
            path,
            "format",
            f"not a cost table written by zigzag-flow (expected format '{LUT_FORMAT}'); "
            "give another cost_lut_path or delete the file",
        )
    return data
