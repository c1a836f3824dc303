"""The batched assigner compares the take combinations of a memory in blocks of arrays (to bound
memory): its choice must not depend on the block size. With blocks of one combination it scans
them one by one, as the scalar assigner does."""

import numpy as np
import pytest

from zigzag.mapping_search.batched import memory_levels as batched_levels
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner
from zigzag.mapping_search.batched.candidates import LoopTable, chunks
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search import spatial_mapping as spatial
from zigzag.mapping_search.loma import layer_temporal_loops, ordering_factors
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings
from support import REPO

INPUTS = REPO / "inputs"


@pytest.mark.parametrize("even", [False, True])
def test_level_assignment_does_not_depend_on_the_block_size(monkeypatch, even):
    # the TPU example's unified buffer holds two operands below their top memory: their takes
    # are combined, many combinations per candidate
    workload, accelerator = load_inputs(
        INPUTS / "workload" / "resnet18.onnx",
        INPUTS / "hardware" / "flow_tpu_32x32.yaml",
        INPUTS / "mapping" / "flow_tpu_32x32.yaml",
    )
    allocated = 0
    for layer in workload.layers[:6]:
        array_mapping = generate_spatial_mappings(
            layer, accelerator, nb_mappings=1, enable_mixing=False
        )[0]
        fractional, _ = spatial.convert(array_mapping, layer, accelerator)
        _, factors = ordering_factors(layer, layer_temporal_loops(layer, fractional), 6)
        loops = LoopTable(factors)
        orderings = next(chunks(loops.orderings(), loops.length, 8192))
        assigner = BatchLevelAssigner(layer, accelerator, fractional, loops, even=even)
        alive, cuts = assigner.assign(orderings)
        with monkeypatch.context() as patch:
            patch.setattr(batched_levels, "COMBINATION_BLOCK", 1)
            alive_one_by_one, cuts_one_by_one = assigner.assign(orderings)
        assert np.array_equal(alive, alive_one_by_one)
        assert cuts.keys() == cuts_one_by_one.keys()
        for operand in cuts:
            assert np.array_equal(cuts[operand], cuts_one_by_one[operand])
        allocated += int(alive.sum())
    assert allocated > 0
