"""Layer jobs: everything that determines one layer's search result, and its content key.

A job (``<cache>/jobs/<key>.json`` in the workflow, an entry of the multi-core cost table) holds
the layer's shape, precisions and mapping entry, the accelerator as a normalised dict, the search
options and the model version, and nothing else, so its key (a hash of that content) identifies the
result: identical layers share one job across layers, experiments, hardware variants and cores.

Imported by every layer job, so it imports only the model types, never YAML, ONNX, pandas,
matplotlib or networkx.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections import OrderedDict

from zigzag.io.accelerator_dict import accelerator_to_dict
from zigzag.io.sealed import read_sealed, sealed_text
from zigzag.mapping.entry import MappingEntry
from zigzag.memo import recent
from zigzag.workload.workload import build_layer

#: The sources (relative to the package) whose code turns a job into its result: the cost model,
#: the search, the hardware, workload and mapping types, and the job's and result's (de)serialisers.
MODEL_SOURCES = (
    "cost",
    "mapping_search",
    "hardware",
    "workload",
    "mapping",
    "io/accelerator_dict.py",
    "io/run_files.py",
)


def model_version(
    package: str | os.PathLike | None = None, sources: tuple[str, ...] = MODEL_SOURCES
) -> str:
    """A hash of the Python source of ``sources`` under ``package`` (this package by default):
    any edit to the code that computes results changes it, and with it every job key."""
    root = (
        os.fspath(package)
        if package is not None
        else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )
    files = []
    for source in sources:
        path = os.path.join(root, *source.split("/"))
        if not os.path.isdir(path):
            files.append((source, path))
            continue
        for folder, _, names in os.walk(path):
            relative = os.path.relpath(folder, root).replace(os.sep, "/")
            files += [
                (f"{relative}/{name}", os.path.join(folder, name))
                for name in names
                if name.endswith(".py")
            ]
    digest = hashlib.sha256()
    for relative, path in sorted(files):
        with open(path, "rb") as file:
            content = file.read()
        digest.update(f"{relative}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()[:16]


#: The model's version, part of every job (and so of its key): computed from the source, so a
#: change to the model or the search invalidates cached results without anyone bumping a number.
MODEL_VERSION = model_version()


def versioned_digest(text: str) -> str:
    """A cache name for ``text`` that also hashes :data:`MODEL_VERSION`, so what an older version
    of the search wrote is kept under other names."""
    return hashlib.sha256(f"{MODEL_VERSION}\0{text}".encode()).hexdigest()[:32]


#: options that enter a job only when set to something else than their default, so that adding
#: them left the keys of existing jobs unchanged
KEYED_WHEN_SET = {"latency_model": "zigzag"}


def options_field(options) -> dict:
    """The ``options`` of a layer job: every search option, with the latency model the cost model
    applies (the options of :data:`KEYED_WHEN_SET` only when not at their default)."""
    given = {**options.to_dict(), "latency_model": options.cost_latency_model}
    return {
        name: value
        for name, value in given.items()
        if name not in KEYED_WHEN_SET or value != KEYED_WHEN_SET[name]
    }


def layer_job(layer, accelerator, options) -> dict:
    """Everything that determines a layer's search result (nothing else)."""
    return {
        "model_version": MODEL_VERSION,
        "layer": layer.signature(),
        "accelerator": accelerator_to_dict(accelerator),
        "options": options_field(options),
    }


def job_key(job: dict) -> str:
    """The job's content hash. Keys of mappings are sorted (their order means nothing, so equal
    content written in another order shares a key), except the accelerator's memories: their
    order is the memory hierarchy, so they are hashed as a list of (name, memory) pairs."""
    if "accelerator" in job:
        job = {**job, "accelerator": _hashed_form(job["accelerator"])}
    return _digest(encoded(job))


def _hashed_form(accelerator):
    """A job's accelerator as its key reads it: its memories as a list of (name, memory) pairs."""
    if isinstance(accelerator, dict) and isinstance(accelerator.get("memories"), dict):
        memories = [[name, memory] for name, memory in accelerator["memories"].items()]
        return {**accelerator, "memories": memories}
    return accelerator


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def encoded(value) -> str:
    """A job field's JSON text as :func:`job_key` writes it inside the job."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def accelerator_text(accelerator: dict) -> str:
    """A job's ``accelerator`` field's text as :func:`job_key` writes it."""
    return encoded(_hashed_form(accelerator))


def key_of_texts(texts: dict[str, str]) -> str:
    """:func:`job_key` of the job whose fields' texts are ``texts`` (field name -> its text, as
    :func:`encoded` and, for the accelerator, :func:`accelerator_text` give them): the same text,
    put together in the order of the sorted field names."""
    named = (f"{_NAMES.get(name) or encoded(name)}:{texts[name]}" for name in sorted(texts))
    return _digest("{" + ",".join(named) + "}")


#: the texts of a layer job's field names
_NAMES = {name: encoded(name) for name in ("accelerator", "layer", "model_version", "options")}

#: the signatures' texts of the last :data:`SIGNATURES_KEPT` layers asked (a layer is immutable)
_SIGNATURES: OrderedDict = OrderedDict()
SIGNATURES_KEPT = 2048


def signature_text(layer) -> str:
    """The text of ``layer.signature()`` as a job holds it (:func:`encoded`), kept per layer."""
    return recent(_SIGNATURES, layer, lambda: encoded(layer.signature()), SIGNATURES_KEPT)


def layer_from_job(job: dict):
    """The job's layer (identity-free: id 0, the name it was first planned under)."""
    signature = job["layer"]
    entry = MappingEntry.from_dict({**signature["mapping"], "name": "default"})
    name = job.get("layer_name", "layer")
    return build_layer({**signature, "id": 0, "name": name, "operand_source": {}}, [entry])


def job_result_text(result, stats, key: str) -> str:
    """The text of job ``key``'s result file, ``{"key": key, "result": the CostResult's fields,
    "stats": the search's, "sha256": ...}``, sealed (:mod:`zigzag.io.sealed`): compact JSON (the C
    encoder; an indented dump takes the pure-Python one, ~10x slower), whose tuples are written as
    lists, so it reads back as ``to_dict()``'s."""
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    return sealed_text({"result": fields, "stats": dataclasses.asdict(stats)}, key)


def read_job_result(path, key: str | None = None):
    """The CostResult of a job's result file, checked (a DamagedFile when it is damaged or was
    computed for another key than ``key``); a MappingError with its reason when the file records
    that no mapping fits (``zigzag/steps/failures.py``)."""
    from zigzag.cost.result import CostResult
    from zigzag.errors import MappingError

    data = read_sealed(path, key)
    if "failed" in data:
        raise MappingError(data["failed"]["reason"])
    return CostResult.from_dict(data["result"])
