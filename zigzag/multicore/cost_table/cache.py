"""Cost-table entries in the content-addressed cache: their job and entry files, reading them
(a damaged entry is computed again) and looking one up or computing it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.io.atomic import write_json_once
from zigzag.io.sealed import DamagedFile, damage_warning, read_sealed, write_sealed
from zigzag.mapping_search.jobs import job_key
from zigzag.mapping_search.options import SearchOptions
from zigzag.multicore.cost_table.entries import CostEntry, NodeKey
from zigzag.multicore.cost_table.jobs import cost_job, evaluate_cost_job

if TYPE_CHECKING:
    from zigzag.multicore.hardware import Core


_LOG = logging.getLogger(__name__)


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
