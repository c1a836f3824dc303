"""An allocation table's entries answer "are these sizes inside every candidate's bounds?" from one
interval per memory kept at creation (zigzag/mapping_search/batched/structural.py): the same answer
as comparing the size with every candidate's bounds."""

from __future__ import annotations

import numpy as np
import yaml

from support import DATA, REPO
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops
from zigzag.mapping_search.batched.structural import Allocations, _inside
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def every_candidate_inside(entry, sizes: dict) -> bool:
    """The check against every candidate's bounds (the arrays themselves)."""
    for name, (low, high) in entry.bounds.items():
        size = sizes.get(name)
        if size is None or not bool(np.all((low <= size) & (size < high))):
            return False
    return True


def test_intervals_answer_as_every_candidates_bounds():
    document = yaml.safe_load(BASE.read_text())
    accelerator = accelerator_from_dict(validate_accelerator(document, "base"))
    entries = [MappingEntry.from_dict(e) for e in yaml.safe_load(MAPPING.read_text())]
    checked, answers = 0, set()
    for layer in load_workload(str(WORKLOAD), entries).layers:
        array_mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
        fractional, _ = spatial_mapping.convert(array_mapping, layer, accelerator)
        constraints, loops, assigner = candidate_loops(
            layer, accelerator, fractional, lpf_limit=4, even=False
        )
        allocations = Allocations()
        list(allocations.chunks("key", loops, assigner, constraints, 512))
        table = allocations.tables["key"][0]
        own = {memory.name: float(memory.size) for memory in accelerator.memories}
        for entry in table:
            values = {float(v) for pair in entry.bounds.values() for a in pair for v in a}
            probes = sorted(v for v in values if np.isfinite(v))
            for name in entry.bounds:
                for probe in [*probes, *(np.nextafter(p, -np.inf) for p in probes), 0.0]:
                    sizes = {**own, name: probe}
                    answer = _inside(entry, sizes)
                    assert answer == every_candidate_inside(entry, sizes)
                    answers.add(answer)
                    checked += 1
            assert not _inside(entry, {}) and not every_candidate_inside(entry, {})
    assert checked > 100 and answers == {True, False}
