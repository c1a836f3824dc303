"""Multi-core hardware sweeps (``kind: multicore``): variants of a multi-core accelerator file,
each scheduled on every workload in every mode.

The variants come from the same engine as single-core ones (``zigzag.variants``); what is
particular here: the base's core files that a varied path goes into are read into it
(``zigzag.variants.multicore``), a variant is checked by the multi-core loader, its mapping
follows the core count (roles such as ``compute`` or ``mesh``), and a point is a schedule: the
mapping's fixed allocation, or the sweep's allocation method when the mapping leaves choices,
run through the multi-core pipeline (``zigzag.multicore.pipeline``). Cost-table entries live in
the shared, content-keyed cache, so a (CN shape, core) costed for one variant is read, not
searched, by every other (see docs/reference/sweeps.md).
"""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic
from zigzag.multicore.summaries import run_figures, run_summary
from zigzag.multicore.roles import follow_cores
from zigzag.variants import read_spec
from zigzag.variants.multicore import read_core_files


def _varied_paths(section: dict) -> list[str]:
    """The document paths a sweep section writes (vary, zip, derive and fragment edits)."""

    def mapping(key: str) -> dict:  # a key of another type is reported by read_spec
        value = section.get(key)
        return value if isinstance(value, dict) else {}

    aliases = mapping("params")
    groups = section.get("zip") if isinstance(section.get("zip"), list) else []
    keys = (
        list(mapping("vary"))
        + [k for group in groups if isinstance(group, dict) for k in group]
        + list(mapping("derive"))
    )
    paths = [
        aliases.get(k, k) for k in keys if isinstance(k, str) and isinstance(aliases.get(k, k), str)
    ]
    for options in mapping("fragments").values():
        for edits in (options or {}).values() if isinstance(options, dict) else ():
            edits = edits if isinstance(edits, dict) else {}
            paths += [str(p) for p in _listed(edits.get("remove"))]
            paths += [str(e.get("path")) for e in _listed(edits.get("add")) if isinstance(e, dict)]
            paths += [
                str(p) for p in (edits.get("set") if isinstance(edits.get("set"), dict) else {})
            ]
    return [p for p in paths if isinstance(p, str)]


def _listed(value) -> list:
    return value if isinstance(value, list) else []


def multicore_spec(section: dict, where: str, base_document: dict | None = None):
    """The variant spec of a multi-core sweep: the base file with the core files that varied
    paths go into read into it (the variants are checked by the multi-core loader when expanded)."""
    from zigzag.io.yaml_files import load_yaml

    base = section.get("base")
    if not isinstance(base, str):
        raise InputError(
            where, "base", "missing; give the multi-core accelerator file the variants start from"
        )
    document = base_document if base_document is not None else load_yaml(base)
    if not isinstance(document, dict):
        raise InputError(
            base, None, "the base document must be a mapping (a multi-core accelerator file)"
        )
    try:
        document = read_core_files(document, base, _varied_paths(section))
    except InputError as exc:
        raise InputError(where, exc.where, f"{exc.message} ({exc.file})") from None
    return read_spec(section, where, base_document=document)


def with_integer_core_ids(document: dict) -> dict:
    """The document with its ``cores`` keys as whole numbers again (JSON made them text)."""
    cores = document.get("cores")
    if isinstance(cores, dict) and all(isinstance(k, str) and k.isdigit() for k in cores):
        document = {**document, "cores": {int(k): v for k, v in cores.items()}}
    return document


def multicore_identity(home: str | Path):
    """``normalise(document, name)`` for the engine: the loader's normalised document (core
    files found from ``home``, the base file); an InputError makes the variant invalid."""
    from zigzag.io.stream_hardware import read_multicore_document

    def identity(document: dict, name: str) -> dict:
        normalised = read_multicore_document(with_integer_core_ids(document), home)
        return {k: v for k, v in normalised.items() if k != "name"} | {
            "cores": [
                {k: v for k, v in core.items() if k != "file"} for core in normalised["cores"]
            ]
        }

    return identity


def variant_accelerator(sweep, variant):
    """The :class:`MultiCoreAccelerator` of a variant."""
    from zigzag.io.stream_hardware import read_multicore_document
    from zigzag.multicore.topology import build_multicore

    document = with_integer_core_ids(variant.document)
    return build_multicore(read_multicore_document(document, sweep.base), variant.name)


def variant_mapping(sweep, variant):
    """The variant's parsed Stream mapping: core roles and tiling expressions resolved (None
    without a mapping: the pipeline's automatic one)."""
    if sweep.mapping is None:
        return None
    from zigzag.io.yaml_files import load_yaml
    from zigzag.multicore.mapping import parse_stream_mapping

    followed = follow_cores(
        load_yaml(sweep.mapping), with_integer_core_ids(variant.document), file=sweep.mapping
    )
    return parse_stream_mapping(followed, sweep.mapping)


def evaluate_multicore(sweep, variant, workload: str, mode: str, cache: str | Path) -> dict:
    """The figures of one schedule of a variant: fixed allocation, or the sweep's allocation
    method (``allocation_search``) when the mapping leaves cores to choose."""
    from zigzag.multicore.pipeline import MulticoreRun, allocation_of
    from zigzag.multicore.pipeline.calls import run_multicore
    from zigzag.multicore.pipeline.prepared import build_graph, has_open_cores
    from zigzag.multicore.tiling import parse_layer_stacks

    run = MulticoreRun(
        variant_accelerator(sweep, variant),
        workload,
        variant_mapping(sweep, variant),
        mode,
        layer_stacks=parse_layer_stacks(sweep.layer_stacks) if sweep.layer_stacks else None,
        latency_model=sweep.options.get("latency_model", "auto"),
    )
    graph = build_graph(run)
    if has_open_cores(graph):
        run = replace(run, allocation=allocation_of(sweep.allocation_search))
    done = run_multicore(run, cache=cache, graph=graph)
    found, result = done.allocated, done.schedule
    method = run.allocation.method
    figures: dict[str, Any] = {"allocation": "fixed"}
    if method == "ga":
        figures = {
            "allocation": "searched",
            "search_front_points": len(found.front),
            "search_schedules": found.stats.evaluations,
        }
    elif method == "co":
        figures = {
            "allocation": "constraint optimisation",
            "co_optimal_stacks": sum(s.answer.optimal for s in found.allocation.stacks),
        }
    tokens = None
    if str(workload).endswith(".onnx"):  # a transformer step: its per-token figures
        from zigzag.multicore.schedule.tokens import export_figures

        tokens = export_figures(result, workload)
    return {
        **figures,
        **schedule_figures(
            result, done.accelerator, with_integer_core_ids(variant.document), tokens
        ),
    }


def schedule_figures(result, accelerator, document: dict, tokens: dict | None = None) -> dict:
    """A schedule's row figures, defined once for sweeps and the workflow's table
    (``zigzag.multicore.summaries``): latency, energy and its terms, area, utilisation of the compute
    cores and per core, DRAM traffic and the number of CNs; ``utilization`` is the compute cores';
    with ``tokens`` (a transformer step's figures), the per-token columns."""

    row = run_figures(run_summary(result, accelerator, document, tokens))
    row.pop("pareto")
    row.pop("latency_s")  # from the sweep's clock_ghz
    row["utilization"] = row["compute_utilization"]
    return row


def write_multicore_files(sweep, variant, folder: str | Path) -> Path:
    """The variant as files: ``<folder>/<name>.yaml`` (core files named by their path from
    there) and ``<name>.mapping.yaml`` (the mapping with its roles resolved)."""
    import yaml

    from zigzag.io.stream_cores import resolve_core_file

    folder = Path(folder)
    document = copy.deepcopy(with_integer_core_ids(variant.document))

    def relocated(reference: Any) -> Any:
        if isinstance(reference, str):
            found = resolve_core_file(reference, sweep.base)
            return os.path.relpath(found, folder) if found is not None else reference
        if isinstance(reference, list):
            return [relocated(r) for r in reference]
        return reference

    if "offchip_core" in document:
        document["offchip_core"] = relocated(document["offchip_core"])
    if isinstance(document.get("mesh"), dict):
        for key in ("core", "pooling_core", "simd_core"):
            if key in document["mesh"]:
                document["mesh"][key] = relocated(document["mesh"][key])
    if isinstance(document.get("cores"), (dict, list)):
        cores = document["cores"]
        document["cores"] = (
            {k: relocated(v) for k, v in cores.items()}
            if isinstance(cores, dict)
            else relocated(cores)
        )
    path = folder / f"{variant.name}.yaml"
    write_text_atomic(path, yaml.safe_dump(document, sort_keys=False))
    from zigzag.io.yaml_files import load_yaml

    if sweep.mapping is None:  # the automatic mapping: nothing to write
        return path
    mapping = follow_cores(
        load_yaml(sweep.mapping), with_integer_core_ids(variant.document), file=sweep.mapping
    )
    write_text_atomic(
        folder / f"{variant.name}.mapping.yaml", yaml.safe_dump(mapping, sort_keys=False)
    )
    return path
