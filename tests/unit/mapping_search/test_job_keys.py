"""Layer-job keys from their parts encoded once (zigzag/mapping_search/job_keys.py): the keys of the
whole jobs, on variants differing in costs, sizes, bandwidths and the array, and on every layer."""

from __future__ import annotations

import yaml

from support import DATA, REPO
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.batched.shared import COST_FIELDS, cost_free_job
from zigzag.mapping_search.batched.structural import structure_free_job
from zigzag.mapping_search.job_keys import JobKeys
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.options import SearchOptions

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def variant(edge: int, buffer: int, bandwidth: int, cost: float):
    document = yaml.safe_load(BASE.read_text())
    document["operational_array"]["sizes"] = [edge, edge]
    memory = document["memories"]["unified_buffer"]
    memory["size"], memory["r_cost"] = buffer, cost
    for port in memory["ports"]:
        port["bandwidth_max"] = bandwidth
    return accelerator_from_dict(validate_accelerator(document, "variant"))


def whole_job_keys(layer, accelerator, options) -> tuple[str, str, str]:
    job = layer_job(layer, accelerator, options)
    return (
        job_key(job),
        job_key(cost_free_job(job)),
        job_key(structure_free_job(job, COST_FIELDS)),
    )


def test_keys_from_parts_are_the_whole_jobs_keys():
    entries = [MappingEntry.from_dict(e) for e in yaml.safe_load(MAPPING.read_text())]
    layers = load_workload(str(WORKLOAD), entries).layers
    accelerators = [
        variant(32, 2**23, 512, 1567.67),
        variant(32, 2**23, 512, 200.0),  # costs only
        variant(32, 2**20, 128, 1567.67),  # size and bandwidth
        variant(16, 2**23, 512, 1567.67),  # another array
    ]
    keys = JobKeys(size=2)  # smaller than what is asked: entries are dropped and made again
    seen = {}
    for options in (SearchOptions(lpf_limit=4), SearchOptions(opt="energy")):
        for number, accelerator in enumerate(accelerators):
            for layer in layers:
                expected = whole_job_keys(layer, accelerator, options)
                assert keys.keys(layer, accelerator, options) == expected
                assert keys.keys(layer, accelerator, options) == expected  # from kept texts
                seen[layer.id, number, options.opt] = expected
    assert len(keys) <= 6
    first, costs, sizes, array = (seen[layers[0].id, n, "latency"] for n in range(4))
    assert costs[0] != first[0] and costs[1:] == first[1:]  # the same candidates and structure
    assert sizes[1] != first[1] and sizes[2] == first[2]  # the same structure
    assert array[2] != first[2]
