"""The guided search over a hardware sweep (zigzag.sweep.hardware_search): seeded, the same front with one
worker or two, its front table and figure, budgets, and the hypervolume it is judged by."""

from __future__ import annotations

import csv
import itertools

import pytest

from support import DATA, REPO
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.sweep import read_sweep, run_sweep, search_sweep
from zigzag.sweep.hypervolume import hypervolume
from zigzag.sweep.hardware_search import objectives

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
SWEEP = {
    "name": "s",
    "base": str(BASE),
    "lpf_limit": 3,
    "params": {
        "D1": "operational_array.sizes[0]",
        "D2": "operational_array.sizes[1]",
        "ub": "memories.unified_buffer.size",
    },
    "zip": [{"D1": [8, 16, 32, 64], "D2": [64, 32, 16, 8]}],
    "vary": {"ub": ["256KiB", "1MiB", "3MiB"]},
    "derive": {"memories.unified_buffer.area": "0.7 * ub"},
    "workloads": [str(WORKLOAD)],
    "mapping": str(MAPPING),
}


def read_rows(path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_hypervolume_of_known_fronts():
    assert hypervolume([(0.5, 0.5, 0.5)], (1, 1, 1)) == pytest.approx(0.125)
    # two boxes of 0.5 x 1 x 1 and 1 x 0.5 x 1 overlapping in 0.5 x 0.5 x 1
    assert hypervolume([(0.5, 0, 0), (0, 0.5, 0)], (1, 1, 1)) == pytest.approx(0.75)
    assert hypervolume([(0.5, 0, 0), (0, 0.5, 0), (0.6, 0.6, 0)], (1, 1, 1)) == pytest.approx(
        0.75
    )  # dominated
    assert hypervolume([(2, 0, 0)], (1, 1, 1)) == 0.0
    assert hypervolume([(0.2, 0.5), (0.5, 0.2)], (1, 1)) == pytest.approx(
        0.8 * 0.5 + 0.5 * 0.8 - 0.5 * 0.5
    )


def test_variant_at_each_position_is_the_grid_variant():
    from zigzag.sweep.config import accelerator_identity
    from zigzag.sweep.runner import variants_of
    from zigzag.variants import axis_sizes, variant_at

    sweep = read_sweep(SWEEP)
    sizes = axis_sizes(sweep.spec)
    assert sizes == (3, 4)  # vary first, then the zipped group
    made = [
        variant_at(sweep.spec, p, normalise=accelerator_identity)
        for p in itertools.product(*(range(n) for n in sizes))
    ]
    assert sorted((v.name, v.id) for v in made) == sorted(
        (v.name, v.id) for v in variants_of(sweep)
    )


@pytest.mark.slow
def test_search_is_seeded_and_the_same_with_two_workers(tmp_path):
    budget = {"population": 4, "generations": 2, "seed": 7}
    cache = tmp_path / "cache"
    one = search_sweep(SWEEP, tmp_path / "one", cache=cache, budget={**budget, "workers": 1})
    two = search_sweep(SWEEP, tmp_path / "two", cache=cache, budget={**budget, "workers": 2})
    assert one.front == two.front and one.rows == two.rows
    assert one.evaluations == len(one.rows) <= 4 * (2 + 1) and one.grid_size == 12
    assert (tmp_path / "one" / "search_front.csv").read_text() == (
        tmp_path / "two" / "search_front.csv"
    ).read_text()


@pytest.mark.slow
def test_front_table_and_figure(tmp_path):
    rows = run_sweep(
        {**SWEEP, "search": {"population": 4, "generations": 1, "workers": 1}},
        tmp_path / "out",
        cache=tmp_path / "cache",
    )
    table = read_rows(tmp_path / "out" / "search_front.csv")
    assert table and {
        "variant",
        "D1",
        "D2",
        "ub",
        "energy_pJ",
        "latency_cycles",
        "area_mm2",
    } <= set(table[0])
    points = {r["variant"]: objectives([r]) for r in rows if r["status"] == "ok"}
    front = {r["variant"] for r in table}
    for name in front:  # nothing evaluated dominates a variant of the front
        assert not any(
            all(a <= b for a, b in zip(other, points[name])) and other != points[name]
            for other in points.values()
        )
    dominated = set(points) - front
    assert all(
        any(all(a <= b for a, b in zip(points[f], points[d])) for f in front) for d in dominated
    )
    assert len(read_rows(tmp_path / "out" / "variants.csv")) == len(rows) <= 4 * 2
    assert (tmp_path / "out" / "plots" / "search_front.png").stat().st_size > 0


@pytest.mark.slow
def test_search_that_exhausts_a_small_grid_reaches_its_hypervolume(tmp_path):
    cache = tmp_path / "cache"
    grid = run_sweep(SWEEP, tmp_path / "grid", cache=cache)
    found = search_sweep(
        SWEEP,
        tmp_path / "search",
        cache=cache,
        budget={"population": 4, "generations": 6, "seed": 1, "workers": 1},
    )
    grid_points = [objectives([r]) for r in grid if r["status"] == "ok"]
    reference = tuple(1.1 * max(p[i] for p in grid_points) for i in range(3))
    search_points = [(r["energy_pJ"], r["latency_cycles"], r["area_mm2"]) for r in found.front]
    assert hypervolume(search_points, reference) == pytest.approx(
        hypervolume(grid_points, reference), rel=1e-12
    )


def test_search_budget_errors_are_one_line():
    with pytest.raises(InputError, match=r"search\.population: 2 is less than the minimum of 4"):
        read_sweep({**SWEEP, "search": {"population": 2}})
    with pytest.raises(
        InputError,
        match=r"search\.budget: unknown key 'budget'; known keys here: method, population, generations",
    ):
        read_sweep({**SWEEP, "search": {"budget": 3}})


@pytest.mark.slow
def test_cli_search(tmp_path, capsys):
    status = main(
        [
            "sweep",
            "--base",
            str(BASE),
            "--param",
            "ub=memories.unified_buffer.size",
            "--vary",
            "ub=[256KiB,1MiB,3MiB]",
            "--vary",
            "memories.dram.r_cost=[1900,2000]",
            "--workload",
            str(WORKLOAD),
            "--mapping",
            str(MAPPING),
            "--lpf-limit",
            "3",
            "--population",
            "4",
            "--generations",
            "1",
            "--workers",
            "1",
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert status == 0
    assert (
        "search: " in capsys.readouterr().out and (tmp_path / "out" / "search_front.csv").exists()
    )


@pytest.mark.slow
def test_workflow_search_sweep(tmp_path):
    import json
    import re
    import subprocess
    import sys

    import yaml

    (tmp_path / "inputs").symlink_to(REPO / "inputs")
    (tmp_path / "small.yaml").write_text(WORKLOAD.read_text())
    sweep = {
        **SWEEP,
        "name": "tpu",
        "base": "inputs/hardware/flow_tpu_32x32.yaml",
        "workloads": ["small.yaml"],
        "mapping": "inputs/mapping/flow_tpu_array.yaml",
        "search": {"population": 4, "generations": 1, "seed": 2, "workers": 2},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"hardware_sweeps": [sweep]}))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--cores",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-3000:]
    assert len(re.findall(r"^\s*(?:local)?rule sweep_search:", output, re.MULTILINE)) == 1
    assert "rule sweep_batch:" not in output  # the grid is not expanded into jobs
    folder = tmp_path / "results" / "hardware_sweeps" / "tpu"
    stats = json.loads((folder / "search.json").read_text())
    assert stats["grid_size"] == 12 and stats["evaluations"] <= 4 * 2
    direct = search_sweep(
        SWEEP,
        tmp_path / "direct",
        cache=tmp_path / "results" / ".cache",
        budget={"population": 4, "generations": 1, "seed": 2, "workers": 1},
    )
    assert [r["variant"] for r in read_rows(folder / "search_front.csv")] == [
        r["variant"] for r in direct.front
    ]
