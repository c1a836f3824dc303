"""Problems that share their CN graph (as the allocation search's do) schedule as if each were alone."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from zigzag.multicore.schedule import schedule
from support.stream_reference_dump import problem_from_dump
from support import TESTS

REF = TESTS / "data" / "reference" / "stream"


def _facts(result):
    return (
        result.start.tolist(),
        result.end.tolist(),
        result.latency,
        result.totals.as_dict(),
        [tuple(t) for t in result.transfers],
        [[tuple(e) for e in link] for link in result.link_events],
        [list(t) for t in result.timelines],
    )


@pytest.mark.parametrize("name", ["small_lbl", "small_fused"])
def test_problems_sharing_a_graph_schedule_as_fresh_copies(name):
    base = problem_from_dump(REF / f"{name}.json")
    cores = np.unique(base.core)
    moved = replace(
        base, core=cores[::-1][np.searchsorted(cores, base.core)]
    )  # cores swapped around
    alone = copy.deepcopy(moved)  # the same problem made of other arrays: nothing shared
    assert moved.edge_src is base.edge_src and alone.edge_src is not base.edge_src
    first = _facts(schedule(base))
    assert _facts(schedule(moved)) == _facts(schedule(alone))
    assert _facts(schedule(moved)) != first  # the cores matter, so the comparison means something
    assert _facts(schedule(base)) == first
