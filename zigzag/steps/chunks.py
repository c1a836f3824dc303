"""The per-layer work of an experiment in chunks: the workflow runs one job per chunk (rule
``evaluate_layers``; multi-core: ``multicore_costs``), so a job's start-up is paid once per chunk of
layer searches, not once per layer, while the chunks of one experiment still run in parallel.

A plan lists the keys to compute and how many chunks share them; chunk ``i`` of ``n`` (named
``"{i}of{n}"``) takes every ``n``-th key from the ``i``-th, so each chunk gets large and small
layers alike. The number of chunks is decided when the experiment is planned, from the cores of
that run (``ZIGZAG_FLOW_CORES``, which the Snakefile sets from ``--cores``) and at least
:data:`MIN_PER_CHUNK` keys per chunk; a later run with other ``--cores`` reuses the plan as it is.
"""

from __future__ import annotations

import math
import os

from zigzag.errors import InputError

#: fewer keys than this per chunk would make a job's start-up a large share of its work
MIN_PER_CHUNK = 8


def planned_chunks(keys: int, environ=os.environ) -> int:
    """How many chunks share ``keys`` keys to compute (0 when there are none)."""
    if keys == 0:
        return 0
    try:
        cores = max(1, int(environ.get("ZIGZAG_FLOW_CORES", "1")))
    except ValueError:
        cores = 1
    return max(1, min(cores, math.ceil(keys / MIN_PER_CHUNK)))


def chunk_names(count: int) -> list[str]:
    """The names of ``count`` chunks: ``1of3``, ``2of3``, ``3of3``."""
    return [f"{i}of{count}" for i in range(1, count + 1)]


def chunk_keys(keys: list[str], name: str) -> list[str]:
    """The keys of chunk ``name`` (``"{i}of{n}"``)."""
    try:
        index, count = (int(part) for part in name.split("of"))
    except ValueError:
        index = count = 0
    if not 1 <= index <= count:
        raise InputError(None, "chunk", f"'{name}' is not a chunk; give it as <i>of<n>, e.g. 1of2")
    return keys[index - 1 :: count]


def evaluate_cost_chunk(plan_path, cache, chunk: str, output) -> str:
    """A multi-core cost plan's chunk ``chunk``: its entries not in the cache yet computed into it
    (``<cache>/multicore-cost/entries/<key>.json``); ``output`` records its keys and those computed
    here. Returns the step's one-line outcome."""
    import json
    from pathlib import Path

    from zigzag.io.atomic import write_json_atomic
    from zigzag.multicore.cost_table.cache import entry_path, read_entry, write_entry
    from zigzag.multicore.cost_table.jobs import evaluate_cost_job

    try:
        plan = json.loads(Path(plan_path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(
            str(plan_path), None, f"cannot read the cost plan ({exc}); plan the costs again"
        ) from None
    keys = chunk_keys(plan.get("to_compute", []), chunk)
    computed = []
    for key in keys:
        if read_entry(cache, key) is None:
            job = dict(plan["jobs"][key])
            job.pop("label", None)
            entry = evaluate_cost_job(job, key, job.pop("layer_name", None))
            write_entry(entry_path(cache, key), entry)
            computed.append(key)
    write_json_atomic(output, {"keys": keys, "computed": computed})
    return f"{plan['experiment']} cost chunk {chunk}: {len(keys)} entries, {len(computed)} computed here"
