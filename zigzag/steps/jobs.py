"""Layer jobs: the unit of work of the workflow's ``evaluate_layer`` rule.

A job file (``<cache>/jobs/<key>.json``) holds everything that determines one layer's search
result (layer shape, precisions and mapping entry, the accelerator as a normalised dict, the
search options, the model version) and nothing else, so its key (a hash of that content)
identifies the result: identical layers share one job across layers and experiments.

This module is imported by every layer job, so it imports only the model types and the search,
never YAML, ONNX, pandas, matplotlib or networkx.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

#: Bump when a change to the model or the search changes results: it invalidates cached results.
MODEL_VERSION = 2


def layer_job(layer, accelerator, options) -> dict:
    """Everything that determines a layer's search result (nothing else)."""
    from zigzag.io.accelerator_dict import accelerator_to_dict

    return {
        "model_version": MODEL_VERSION,
        "layer": layer.signature(),
        "accelerator": accelerator_to_dict(accelerator),
        "options": options.to_dict(),
    }


def job_key(job: dict) -> str:
    """The job's content hash. Keys of mappings are sorted (their order means nothing, so equal
    content written in another order shares a key), except the accelerator's memories: their
    order is the memory hierarchy, so they are hashed as a list of (name, memory) pairs."""
    accelerator = job.get("accelerator")
    if isinstance(accelerator, dict) and isinstance(accelerator.get("memories"), dict):
        job = {**job, "accelerator": {**accelerator, "memories": [[name, memory] for name, memory
                                                                  in accelerator["memories"].items()]}}
    text = json.dumps(job, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def layer_from_job(job: dict):
    """The job's layer (identity-free: id 0, the name it was first planned under)."""
    from zigzag.mapping.entry import MappingEntry
    from zigzag.workload.workload import build_layer

    signature = job["layer"]
    entry = MappingEntry.from_dict({**signature["mapping"], "name": "default"})
    name = job.get("layer_name", "layer")
    return build_layer({**signature, "id": 0, "name": name, "operand_source": {}}, [entry])


def evaluate_job(job_path: str | Path, result_path: str | Path, *, show_progress: bool | None = None):
    """Search one job's layer and write its best result (a CostResult) to ``result_path``."""
    from zigzag.io.accelerator_dict import accelerator_from_dict
    from zigzag.io.atomic import write_json_atomic
    from zigzag.search.layer_search import search_layer
    from zigzag.search.options import SearchOptions

    job = json.loads(Path(job_path).read_text())
    layer = layer_from_job(job)
    accelerator = accelerator_from_dict(job["accelerator"])
    best, stats = search_layer(layer, accelerator, SearchOptions(**job["options"]), show_progress=show_progress)
    write_json_atomic(result_path, {"result": best.to_dict(), "stats": dataclasses.asdict(stats)})
    return best


def prepare_job_environment(environ) -> None:
    """Settings that make the many short job processes start faster (called by the Snakefile).

    * one BLAS/OpenMP thread per job: jobs run in parallel already, and numpy imports faster;
    * the package's bytecode is compiled once, also where ``PYTHONDONTWRITEBYTECODE`` is set
      (otherwise every job compiles every module it imports, ~0.1 s each time).
    """
    import sys

    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        environ.setdefault(name, "1")
    if sys.dont_write_bytecode:
        import compileall

        compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2)
