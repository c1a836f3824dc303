"""One point of a sweep: a variant on a workload, searched layer by layer through the shared cache.

Each distinct layer is a content-keyed job (``zigzag.mapping_search.jobs``): its result is read from
``<cache>/results/<key>.json`` when some earlier experiment, sweep or run computed it, and
written there otherwise, so variants, experiments and reruns share every layer result.

A point that cannot run comes back as a row with a ``status`` and the one-line ``reason``:
``invalid`` (the variant's document does not validate), ``infeasible`` (the mapping does not
fit the array, a memory is too small, ...), ``failed`` (an unexpected error).
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import logging
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.loaders import checked_accelerator, checked_mapping, load_workload
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.capacity import CapacityError
from zigzag.mapping_search.job_keys import JobKeys
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.result_store import ResultStore
from zigzag.mapping_search.options import SearchOptions
from zigzag.io import tables
from zigzag.sweep.config import DEFAULT_LINKS
from zigzag.sweep.describe import DETAIL_KEY, hierarchy_of, layer_detail
from zigzag.tokens import per_token_figures
from zigzag.tokens.columns import bound_columns
from zigzag.tokens.workloads import llm_document
from zigzag.variants import follow_hardware, without_spatial_mapping

logger = logging.getLogger(__name__)


def point_mapping(sweep, variant, parsed: dict | None = None) -> list:
    """The mapping document of ``sweep`` for ``variant`` (unrollings sized for its array), to validate;
    ``parsed``: a dict kept by the caller, where the mapping file is read once (a copy is used)."""
    if sweep.mapping is None:
        document = [{"name": "default", "memory_operand_links": dict(_default_links())}]
    elif parsed is None:
        document = load_yaml(sweep.mapping)
    else:
        key = ("mapping file", str(sweep.mapping))
        if key not in parsed:
            parsed[key] = load_yaml(sweep.mapping)
        document = copy.deepcopy(parsed[key])
    if sweep.spatial_mapping == "generate":
        document = without_spatial_mapping(document)
    else:
        document = follow_hardware(
            document, variant.document, variant.parameters, file=sweep.mapping
        )
    return document


def _default_links() -> dict:

    return DEFAULT_LINKS


def workload_points(sweep) -> list[dict]:
    """Every combination of the sweep's ``workload_vary`` values (field -> value), in order;
    ``[{}]`` when it varies no workload field."""
    names = [name for name, _ in sweep.workload_axes]
    return [
        dict(zip(names, values))
        for values in itertools.product(*(v for _, v in sweep.workload_axes))
    ]


def point_label(changes: dict) -> str:
    """``context=4096 batch=8``: a workload point's name in tables and figures."""
    return " ".join(f"{k}={v}" for k, v in changes.items())


def load_point_workload(workload: str, changes: dict, entries: list, options: dict):
    """The workload of one point: the file itself, or its LLM document with ``changes`` applied."""
    if changes:
        return load_workload(llm_document(workload, changes, source=workload), entries, **options)
    return load_workload(workload, entries, **options)


def evaluate_point(
    sweep,
    variant,
    workload: str,
    cache: str | Path,
    *,
    workloads: dict | None = None,
    mode: str | None = None,
    changes: dict | None = None,
    shared=None,
    packed: bool = False,
) -> dict:
    """The row of ``variant`` on ``workload``: status, reason and, when it ran, its figures.

    ``workloads``: a dict kept by the caller to reuse parsed workloads (and the mapping file) across
    variants;
    ``mode``: lbl or fused, for a multi-core sweep (its variants are scheduled); ``changes``:
    the workload fields of this point (``workload_vary``); ``shared``: a
    :class:`~zigzag.mapping_search.batched.shared.SharedCandidates` kept by the caller, so variants that
    differ only in memory costs re-score one another's mapping candidates (same rows); ``packed``:
    the layer results it searches are appended to the process's pack
    (:mod:`zigzag.mapping_search.result_packs`) rather than written a file each."""
    row = {"status": "ok", "reason": ""}
    if variant.problem is not None:
        return {"status": "invalid", "reason": variant.problem}
    try:
        if sweep.kind == "multicore":
            from zigzag.sweep.multicore import evaluate_multicore

            row.update(evaluate_multicore(sweep, variant, workload, mode, Path(cache)))
        else:
            row.update(
                _evaluate(
                    sweep,
                    variant,
                    workload,
                    Path(cache),
                    workloads if workloads is not None else {},
                    changes or {},
                    shared,
                    packed,
                )
            )
    except CapacityError as exc:  # the step does not fit the memory holding it
        row = {"status": "invalid", "reason": " ".join(str(exc).split())}
    except (InputError, MappingError) as exc:
        row = {"status": "infeasible", "reason": " ".join(str(exc).split())}
    except Exception as exc:  # noqa: BLE001 - one broken point must not stop the sweep; it is reported
        logger.exception("%s on %s failed", variant.name, workload)
        row = {"status": "failed", "reason": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
    return row


def _evaluate(
    sweep, variant, workload: str, cache: Path, parsed: dict, changes: dict, shared, packed: bool
) -> dict:

    document, _ = upgrade_accelerator(variant.document, variant.name)
    # a sweep reads a digital array's areas in um2 unless the file states its unit (docs/reference/sweeps.md),
    # so CACTI's areas (mm2) are converted to that unit before they are added up
    area_unit = document.get("area_unit")
    array = document.get("operational_array")
    memories = document.get("memories")
    uses_cacti = isinstance(memories, dict) and any(
        isinstance(m, dict) and m.get("auto_cost_extraction") for m in memories.values()
    )
    if area_unit is None and uses_cacti and not (isinstance(array, dict) and array.get("is_imc")):
        area_unit = "um2"
        document = {**document, "area_unit": area_unit}
    accelerator_data = checked_accelerator(document, variant.name)
    mapping = checked_mapping(
        point_mapping(sweep, variant, parsed),
        accelerator_data,
        sweep.mapping or "generated mapping",
    )
    key = (
        workload,
        json.dumps(changes, sort_keys=True),
        json.dumps(mapping, sort_keys=True),
        json.dumps(sweep.workload_options, sort_keys=True),
    )
    if key not in parsed:
        entries = [MappingEntry.from_dict(e) for e in mapping]
        parsed[key] = load_point_workload(workload, changes, entries, sweep.workload_options)
    options = SearchOptions(**sweep.options).resolved(parsed[key].inference is not None)
    network = evaluate_network(
        parsed[key],
        accelerator_from_dict(accelerator_data),
        options,
        log_uncosted=False,
        search=functools.partial(
            _layer_result, options=options, store=ResultStore(cache, packed), shared=shared
        ),
    )
    results = [result for _, result in network.layers]
    experiment = {
        "name": variant.name,
        "workload": workload,
        "mapping": sweep.mapping or "generated",
        "accelerator": "",
        "options": sweep.options,
    }
    figures = tables.experiment_row(experiment, results, network.total, area_unit, network.uncosted)
    keep = ("layers", *(name for name, _ in tables.NETWORK_FIGURES), "uncosted_layers", "area_um2")
    row = {k: figures[k] for k in keep}
    row.update({k: v for k, v in figures.items() if k.endswith("_energy_pJ") and k not in row})
    if network.inference is not None:
        row.update(_token_columns(network))
    row[DETAIL_KEY] = layer_detail(results, hierarchy_of(accelerator_data))
    return row


def _token_columns(network) -> dict:
    """The per-token columns of an LLM step (in cycles; seconds are added with the clock)."""
    figures = per_token_figures(network)
    columns = {
        k: getattr(figures, k)
        for k in (
            "phase",
            "batch",
            "tokens",
            "context",
            "energy_per_token_pJ",
            "energy_per_token_J",
            "weights_bytes",
            "kv_cache_bytes_per_token",
            "kv_cache_bytes",
            "state_bytes",
        )
    }
    columns["step_cycles"] = figures.step_cycles
    columns["dram_bound_ratio"] = None if figures.dram is None else figures.dram.ratio
    columns.update(bound_columns(figures))
    return columns


#: the layer jobs' keys of this process's points, each part of a job encoded once
JOB_KEYS = JobKeys()


def _layer_result(layer, accelerator, options, store: ResultStore, shared):
    """The layer's best result through this batch's memory (``shared``), else the result store
    (read, or searched once and stored)."""
    key, *keys = JOB_KEYS.keys(layer, accelerator, options)
    result = None if shared is None else shared.result(key)
    if result is not None:  # this job's result, already computed or read by this batch
        return result
    result = store.best(None, layer, accelerator, options, shared=shared, key=key, keys=keys)
    if shared is not None:
        shared.keep_result(key, result)
    return result
