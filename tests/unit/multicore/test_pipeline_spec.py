"""The multi-core run description: its defaults, the config section it reads, its checks."""

import pytest

from zigzag.errors import InputError
from zigzag.multicore.pipeline import (
    STREAM_GENETIC_SEARCH,
    ConstraintOptimisation,
    FixedAllocation,
    GeneticSearch,
    MulticoreRun,
    allocation_of,
    search_defaults,
)


def test_search_defaults_hold_both_methods_options():
    assert search_defaults() == {
        "method": "ga",
        "individuals": 16,
        "generations": 8,
        "seed": 0,
        "choose": "latency",
        "time_limit": 600,
        "gap": 1e-4,
    }
    assert (STREAM_GENETIC_SEARCH.individuals, STREAM_GENETIC_SEARCH.generations) == (32, 100)


def test_allocation_of_a_config_section():
    assert allocation_of(None) == FixedAllocation()
    assert allocation_of(search_defaults()) == GeneticSearch()
    assert allocation_of({**search_defaults(), "method": "co", "time_limit": 5}) == (
        ConstraintOptimisation(time_limit=5)
    )


def test_run_is_frozen_and_normalised():
    run = MulticoreRun("a.yaml", "net.onnx", "m.yaml", "fused", layer_stacks=[[0, 1], [2]])
    assert run.layer_stacks == ((0, 1), (2,))
    assert run.schedule_name == "net"
    assert run.allocation == FixedAllocation()
    with pytest.raises(AttributeError):
        run.mode = "lbl"


@pytest.mark.parametrize(
    "make, where",
    [
        (lambda: MulticoreRun("a", "w", "m", "stacked"), "mode"),
        (lambda: MulticoreRun("a", "w", "m", "lbl", latency_model="fast"), "latency_model"),
        (lambda: GeneticSearch(choose="area"), "choose"),
    ],
)
def test_bad_values_are_input_errors(make, where):
    with pytest.raises(InputError) as info:
        make()
    assert info.value.where == where
