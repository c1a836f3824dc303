"""The allocation search: genes, determinism, parallel workers, the front, saved mappings, CLI."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
import yaml

from zigzag.errors import InputError
from zigzag.multicore.allocation import dominated_share, nsga2
from zigzag.multicore.pipeline import MulticoreRun, Scheduled, search_allocation, write_run
from zigzag.multicore.allocation.front import distinct_points, parse_allocation, read_front
from zigzag.multicore.allocation.heuristics import balanced_blocks, linked_walk, seed_allocations
from zigzag.multicore.pipeline import run_stream
from support import TESTS

REF = TESTS / "data" / "reference" / "stream"
QUAD = REF / "stream/inputs/examples/hardware/tpu_like_quad_core.yaml"
DUAL = REF / "small/dual_testing_core_offchip_v2.yaml"
SMALL = REF / "small/small_3conv.onnx"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cost-cache")


@pytest.fixture(scope="module")
def flexible(tmp_path_factory):
    """A mapping letting every layer of the small network go to any of the four quad-core cores."""
    path = tmp_path_factory.mktemp("mapping") / "flexible.yaml"
    path.write_text("- name: default\n  core_allocation: [0, 1, 2, 3]\n")
    return path


@pytest.fixture(scope="module")
def small_search(flexible, cache):
    return search_allocation(
        QUAD,
        SMALL,
        flexible,
        "fused",
        individuals=8,
        generations=12,
        seed=0,
        cache=cache,
        cwd=str(REF),
    )


def test_genes_are_the_flexible_layer_groups_with_their_valid_cores(small_search):
    assert [(g.layer, g.group, g.cores) for g in small_search.genes] == [
        (i, 0, (0, 1, 2, 3)) for i in range(3)
    ]


def test_front_equals_the_exhaustive_pareto_front(small_search):
    problem = small_search.problem
    values = {a: problem.fitness(a) for a in itertools.product(*(g.cores for g in problem.genes))}
    points = set(values.values())
    exhaustive = {
        p for p in points if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points)
    }
    assert {(p.energy, p.latency) for p in small_search.front} == exhaustive
    for p in small_search.front:  # every stored allocation really has its stored fitness
        assert values[p.cores] == (p.energy, p.latency)
    assert len(exhaustive) > 1  # a real trade-off: energy and latency disagree here


def test_same_seed_same_front_with_one_or_two_workers(small_search):
    problem = small_search.problem
    one, _ = nsga2(problem, 8, 6, seed=3, workers=1)
    again, _ = nsga2(problem, 8, 6, seed=3, workers=1)
    two, _ = nsga2(problem, 8, 6, seed=3, workers=2)
    assert one == again == two


def test_fixed_mapping_round_trip(small_search, flexible, tmp_path):
    run = MulticoreRun(QUAD, SMALL, flexible, "fused", cwd=str(REF))
    done = Scheduled(run, small_search.accelerator, small_search, small_search.fixed_schedule())
    files = write_run(tmp_path, done)
    saved = yaml.safe_load(files["allocation.yaml"].read_text())
    fixed = {e["name"]: e["core_allocation"] for e in saved if e.get("core_allocation_is_fixed")}
    assert fixed == {f"/conv{i}/Conv": [c] for i, c in enumerate(small_search.chosen.cores)}
    rerun = run_stream(QUAD, SMALL, files["allocation.yaml"], "fused", cache=None, cwd=str(REF))
    summary = json.loads(files["summary.json"].read_text())
    assert (rerun.latency, rerun.energy) == (summary["latency"], summary["energy"])
    # the figures the search reports are the re-run's; its own fitness is kept beside them
    assert (summary["search"]["latency"], summary["search"]["energy"]) == (
        rerun.latency,
        rerun.energy,
    )
    assert summary["search"]["search_latency"] == small_search.chosen.latency
    runs = {p.cores: small_search.figures(p) for p in small_search.front}
    assert rerun.latency == min(lat for _, lat in runs.values())  # lowest latency as run
    front = read_front(files["front.csv"])
    distinct = distinct_points(
        small_search.front, small_search.figures
    )  # one row per (energy, latency) as run
    assert sorted((e, lat) for e, lat, _ in front) == [
        (e, lat) for e, lat, _ in front
    ]  # lowest energy first
    assert {(e, lat) for e, lat, _ in front} == {small_search.figures(p) for p, _ in distinct}
    assert sum(count for _, count in distinct) == len(small_search.front)
    genes = small_search.genes
    for e, lat, allocation in front:  # each row's allocation really has the row's figures
        assert runs[tuple(allocation[(g.layer, g.group)] for g in genes)] == (e, lat)


def test_nothing_flexible_evaluates_the_fixed_allocation_once(cache):
    found = search_allocation(
        DUAL,
        SMALL,
        REF / "small/mapping_plain.yaml",
        "lbl",
        individuals=4,
        generations=3,
        cache=cache,
        cwd=str(REF),
    )
    assert found.genes == () and found.stats.evaluations == 1 and len(found.front) == 1
    fixed = run_stream(
        DUAL, SMALL, REF / "small/mapping_plain.yaml", "lbl", cache=cache, cwd=str(REF)
    )
    assert (found.front[0].energy, found.front[0].latency) == (fixed.energy, fixed.latency)


def test_bad_allocation_and_choice_are_one_line_errors(small_search, flexible):
    with pytest.raises(InputError, match="not one of its valid cores"):
        small_search.problem.check([0, 1, 7])
    with pytest.raises(InputError, match="layer_id:group=core"):
        parse_allocation("0:0=1 oops")
    with pytest.raises(InputError, match="choose"):
        search_allocation(QUAD, SMALL, flexible, "lbl", choose="fastest", cwd=str(REF))


def test_dominated_share():
    assert dominated_share([(1, 5), (5, 1)], [(1, 4)]) == 0.5
    assert dominated_share([(1, 5)], [(1, 5)]) == 0.0


@pytest.mark.slow
def test_cli_search_writes_front_and_chosen_point(flexible, cache, tmp_path):
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "zigzag",
        "stream",
        "search",
        "--accelerator",
        str(QUAD),
        "--workload",
        str(SMALL),
        "--mapping",
        str(flexible),
        "--mode",
        "lbl",
        "--individuals",
        "6",
        "--generations",
        "3",
        "--seed",
        "0",
        "--workers",
        "2",
        "--cache",
        str(cache),
        "--cwd",
        str(REF),
        "--output",
        str(out),
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("generation ") >= 4  # one line per generation (0..3)
    assert (
        "allocation search" not in done.stderr and "\r" not in done.stderr
    )  # no progress bar in a redirected output
    rows = read_front(out / "front.csv")
    assert rows and all(set(a) == {(0, 0), (1, 0), (2, 0)} for _, _, a in rows)
    for name in ("summary.json", "schedule.csv", "allocation.yaml"):
        assert (out / name).exists()
    again = subprocess.run(command[:-1] + [str(tmp_path / "again")], capture_output=True, text=True)
    assert again.returncode == 0
    assert (tmp_path / "again" / "front.csv").read_text() == (out / "front.csv").read_text()
    bad = subprocess.run(
        command[:-1] + [str(tmp_path / "bad"), "--individuals", "1"], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "individuals" in bad.stderr and "Traceback" not in bad.stderr


RESNET = REF / "stream/inputs/examples/workload/resnet18.onnx"
FLEXIBLE_QUAD = REF / "stream/inputs/examples/mapping/tpu_like_quad_core.yaml"
REFERENCE_FRONTS = TESTS / "data" / "stream"


@pytest.fixture(scope="module")
def resnet_problem(cache):
    """ResNet-18 x quad core with the flexible mapping, per mode: the allocation problem only."""

    def build(mode):
        stacks = [range(0, 11), range(11, 22)] if mode == "fused" else None
        return search_allocation(
            QUAD,
            RESNET,
            FLEXIBLE_QUAD,
            mode,
            stacks,
            individuals=2,
            generations=0,
            cache=cache,
            cwd=str(REF),
        ).problem

    return build


@pytest.mark.parametrize("prefetch", [(), ("W",)])
def test_search_figures_are_what_running_its_allocation_gives(cache, tmp_path, prefetch):
    """A CNN (ResNet-18, quad core, layer by layer): the chosen point's energy and latency, as the
    search reports them (summary.json, front.csv), equal `run` of the allocation it wrote, bit for
    bit, with and without prefetched weights (small_3conv: ResNet's weights do not fit a core)."""
    network, mapping = (
        (RESNET, FLEXIBLE_QUAD) if not prefetch else (SMALL, REF / "small/mapping_plain.yaml")
    )
    hardware = QUAD if not prefetch else DUAL
    found = search_allocation(
        hardware,
        network,
        mapping,
        "lbl",
        individuals=6,
        generations=2,
        seed=0,
        cache=cache,
        operands_to_prefetch=prefetch,
        output=tmp_path,
        cwd=str(REF),
    )
    rerun = run_stream(
        hardware,
        network,
        tmp_path / "allocation.yaml",
        "lbl",
        cache=cache,
        operands_to_prefetch=prefetch,
        cwd=str(REF),
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["search"]["energy"], summary["search"]["latency"]) == (
        rerun.energy,
        rerun.latency,
    )
    chosen = {tuple(sorted(a.items())) for _, _, a in read_front(tmp_path / "front.csv")}
    assert tuple(sorted(found.allocation().items())) in chosen
    assert found.figures(found.chosen) == (rerun.energy, rerun.latency)


def test_heuristic_allocations_are_blocks_along_linked_cores(resnet_problem):
    problem = resnet_problem("fused")
    seeds = seed_allocations(problem)
    assert len(set(seeds)) == len(seeds) and all(len(s) == len(problem.genes) for s in seeds)
    assert seeds[0] == (0,) * len(
        problem.genes
    )  # the four identical cores: one single-core start, not four
    assert (0,) * 19 + (1,) * 19 in seeds  # two blocks of equal gene counts
    for seed in seeds:  # every change of core between neighbouring genes goes over one link
        for a, b in zip(seed, seed[1:]):
            assert a == b or len(problem.base.hardware.routes[(a, b)]) == 1
    first_stack = [c for g, c in zip(problem.genes, seeds[-1]) if g.stack == 0]
    assert len(set(first_stack)) == 4  # a fused stack spread over the four cores (a pipeline)
    assert linked_walk([3, 1, 0, 2], problem.base.hardware.routes) == (0, 1, 2, 3)
    assert balanced_blocks([1, 1, 2, 4], 2) == [0, 0, 0, 1]


@pytest.mark.slow
@pytest.mark.parametrize("mode, generations", [("lbl", 8), ("fused", 1)])
def test_search_evaluates_its_budget_and_is_deterministic_on_resnet(
    resnet_problem, mode, generations
):
    problem = resnet_problem(mode)
    one, stats = nsga2(problem, 16, generations, seed=0, workers=1)
    again, _ = nsga2(problem, 16, generations, seed=0, workers=1)
    two, _ = nsga2(problem, 16, generations, seed=0, workers=2)
    assert one == again == two
    assert stats.evaluations == 16 * (
        generations + 1
    )  # every child a new allocation, never more than the budget


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_front_not_dominated_by_the_reference_ga(mode, cache):
    """ResNet-18 x quad core, flexible mapping, the reference's GA budget (16 x 8): no point of our
    front is dominated by any recorded front of the reference's GA (tests/data/stream/README.md)."""
    paths = sorted(REFERENCE_FRONTS.glob(f"reference_ga_front_{mode}*.json"))
    recorded = [json.loads(path.read_text()) for path in paths]
    assert recorded and all(r["case"]["mode"] == mode for r in recorded)
    ref = recorded[0]
    stacks = (
        [tuple(s) for s in ref["case"]["layer_stacks"]] if ref["case"]["layer_stacks"] else None
    )
    found = search_allocation(
        QUAD,
        RESNET,
        FLEXIBLE_QUAD,
        mode,
        stacks,
        individuals=16,
        generations=8,
        seed=0,
        workers=2,
        cache=cache,
        cwd=str(REF),
    )
    ours = [(p.energy, p.latency) for p in found.front]
    for run in recorded:
        assert [[g.layer, g.group] for g in found.genes] == run[
            "genes"
        ]  # same genes as Stream (docs/models/multi-core.md#allocation-search)
        assert [list(g.cores) for g in found.genes] == run["valid"]
        assert (
            found.stats.evaluations <= run["evaluations"] - 1
        )  # its budget: 16 x (8 + 1) schedules
        assert dominated_share(ours, [(p["energy"], p["latency"]) for p in run["front"]]) == 0.0, (
            run["case"]["seed"]
        )
