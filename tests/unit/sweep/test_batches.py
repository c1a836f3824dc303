"""``batch_size: auto`` (zigzag/sweep/workflow.py): at most 48 jobs, each at least ceil(n / 48)
variants and at most half as many again, cut where the earliest-listed parameter changes."""

from __future__ import annotations

import itertools
import math
import random
from types import SimpleNamespace

from zigzag.sweep.workflow import AUTO_BATCHES, batches
from zigzag.variants import Variant

AUTO = SimpleNamespace(batch_size="auto")


def variants_of(rows: list[dict]) -> list[Variant]:
    return [Variant(f"v{i}", f"{i:04d}", row, {}, {}, None, ()) for i, row in enumerate(rows)]


def test_a_grid_is_cut_where_its_slow_parameters_change():
    grid = itertools.product(
        [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)], range(8), range(5), range(5)
    )
    variants = variants_of(
        [{"D1": d1, "D2": d2, "ub": ub, "acc": acc, "bw": bw} for (d1, d2), ub, acc, bw in grid]
    )
    jobs = batches(AUTO, variants)
    # 1,000 variants: not 48 jobs of 21 (two buffer sizes each), 40 of one shape and buffer size
    assert [len(job) for job in jobs] == [25] * 40
    assert all(len({(v.parameters["D1"], v.parameters["ub"]) for v in job}) == 1 for job in jobs)
    assert [v for job in jobs for v in job] == variants


def test_without_slow_changes_the_jobs_are_of_the_least_size():
    variants = variants_of([{"x": i} for i in range(100)])
    # (the last takes what is left when that keeps it within half a job more)
    assert [len(job) for job in batches(AUTO, variants)] == [3] * 32 + [4]


def test_any_variants_make_at_most_48_jobs_of_bounded_sizes_in_order():
    rng = random.Random(0)
    for n in (1, 47, 48, 49, 97, 250, 1003):
        rows = [
            {"a": rng.randint(0, 2), "b": rng.randint(0, 3), "c": [rng.randint(0, 1)]}
            for _ in range(n)
        ]
        variants = variants_of(rows)
        jobs = batches(AUTO, variants)
        size = math.ceil(n / AUTO_BATCHES)
        assert len(jobs) <= AUTO_BATCHES
        assert [v for job in jobs for v in job] == variants
        assert all(size <= len(job) <= size + size // 2 for job in jobs[:-1])
        assert 1 <= len(jobs[-1]) <= size + size // 2


def test_a_number_keeps_its_runs():
    variants = variants_of([{"x": i // 3} for i in range(10)])
    assert [len(job) for job in batches(SimpleNamespace(batch_size=4), variants)] == [4, 4, 2]
