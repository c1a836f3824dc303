"""Helpers of the tests of the batched search's sharing across variants
(``zigzag.mapping_search.batched.shared`` and what it builds on): the 32x32 example's mapping, a
layer searched through a shared cache, and the check that it finds what the unshared search finds."""

from __future__ import annotations

import yaml

from support import REPO
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.batched.shared import COST_FIELDS, cost_free_job
from zigzag.mapping_search.batched.structural import structure_free_job
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.layer_search import search_layer


def tpu32_mapping_entries() -> list[MappingEntry]:
    """The mapping entries of the 32x32 example (``inputs/mapping/flow_tpu_32x32.yaml``)."""
    text = (REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text()
    return [MappingEntry.from_dict(entry) for entry in yaml.safe_load(text)]


def shared_search(shared, layer, accelerator, options):
    """``layer``'s best result on ``accelerator`` searched through ``shared`` (a
    ``SharedCandidates``) under its job's cost-free and structure-free keys, as a batch job does."""
    job = layer_job(layer, accelerator, options)
    keys = (job_key(cost_free_job(job)), job_key(structure_free_job(job, COST_FIELDS)))
    result, _ = search_layer(
        layer, accelerator, options, show_progress=False, shared=(shared, *keys)
    )
    return result


def assert_shared_as_alone(shared, layer, accelerator, options) -> None:
    """The search through ``shared`` finds the unshared search's result, every field."""
    alone, _ = search_layer(layer, accelerator, options, show_progress=False)
    assert shared_search(shared, layer, accelerator, options).to_dict() == alone.to_dict()
