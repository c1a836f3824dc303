"""Constraint-optimisation allocation: the slot model against exhaustive enumeration and against the
reference's Gurobi answers, the way from files to a schedule, its faces (CLI, API, Stage API)."""

from __future__ import annotations

import itertools
import json
import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from zigzag.errors import InputError
from zigzag.multicore.allocation.slots import SlotProblem, solve_slots
from zigzag.multicore.pipeline import ConstraintOptimisation
from support import REPO, TESTS

DATA = TESTS / "data"
CO = DATA / "co"
GAP = ConstraintOptimisation().gap  # the run description's default
STREAM_REF = DATA / "reference" / "stream"
ORACLE = sorted((CO / "oracle").glob("*.json"))


def enumerate_best(p: SlotProblem) -> int | None:
    """The slot model's optimum by trying every (split, cores, slot) of every node."""
    slots = len(p.nodes)
    options = []
    for n in p.nodes:
        options.append(
            [
                (k, cores, s)
                for k in p.splits(n)
                for cores in itertools.combinations(p.cores, k)
                if all((n, c, k) in p.runtime for c in cores)
                for s in range(slots)
            ]
        )
    best = None
    for choice in itertools.product(*options):
        at = dict(zip(p.nodes, choice))
        used = [(c, s) for k, cores, s in choice for c in cores]
        if len(used) != len(set(used)):
            continue
        if any(at[b][2] <= at[a][2] for a, b in p.dependencies):
            continue
        if any(at[a][1] != at[b][1] for g in p.groups for a, b in zip(g, g[1:])):
            continue
        if any(
            sum(
                math.ceil(p.weight_bits.get(n, 0) / k)
                for n, (k, cores, _) in at.items()
                if c in cores
            )
            > p.capacity_bits[c]
            for c in p.cores
        ):
            continue
        length = [0] * slots
        busy = {c: [0] * slots for c in p.cores}
        for n, (k, cores, s) in at.items():
            for c in cores:
                length[s] = max(length[s], p.runtime[n, c, k])
                busy[c][s] = 1
        idle = []
        for c in p.cores:
            total = sum(busy[c])
            idle.append(
                sum(length[s] for s in range(slots) if sum(busy[c][: s + 1]) == 0)
                + sum(length[s] for s in range(slots) if sum(busy[c][:s]) == total)
            )
        value = p.iterations * sum(length) - (p.iterations - 1) * min(idle)
        best = value if best is None else min(best, value)
    return best


def random_problem(rng: random.Random) -> SlotProblem:
    nodes = tuple(range(10, 10 + rng.randint(1, 4)))
    cores = tuple(range(rng.randint(1, 3)))
    runtime = {}
    for n in nodes:
        base = rng.randint(1, 60)
        for c in cores:
            if rng.random() < 0.85 or c == 0:
                for k in range(1, len(cores) + 1):
                    if k == 1 or rng.random() < 0.7:
                        runtime[n, c, k] = base // k + rng.randint(0, 3)
    dependencies = tuple((a, b) for a, b in itertools.combinations(nodes, 2) if rng.random() < 0.4)
    groups = ((nodes[0], nodes[1]),) if len(nodes) > 1 and rng.random() < 0.3 else ()
    return SlotProblem(
        nodes,
        cores,
        runtime,
        {n: rng.choice([0, 0, 10, 30]) for n in nodes},
        {c: rng.choice([40, 60, 100]) for c in cores},
        dependencies,
        groups,
        rng.randint(1, 4),
    )


@pytest.mark.parametrize("seed", range(40))
def test_slot_model_reaches_the_enumerated_optimum(seed):
    problem = random_problem(random.Random(seed))
    best = enumerate_best(problem)
    if best is None:
        with pytest.raises(InputError, match="constraint-optimisation allocation: "):
            solve_slots(problem, time_limit=30, gap=GAP)
        return
    answer = solve_slots(problem, time_limit=30, gap=GAP)
    assert answer.optimal and answer.objective == best


def test_infeasible_weights_are_one_line_with_what_to_change():
    problem = SlotProblem((1, 2), (0,), {(1, 0, 1): 5, (2, 0, 1): 5}, {1: 100, 2: 100}, {0: 50})
    with pytest.raises(InputError) as caught:
        solve_slots(problem, time_limit=10, gap=GAP)
    assert str(caught.value) == (
        "constraint-optimisation allocation: the weights of node 1 (100 bits, at least 100 bits "
        "per core when split) do not fit the weight memory of any of its cores [0] (largest 50 "
        "bits); give a larger weight memory or more cores"
    )


def test_infeasible_in_all_but_not_alone_names_the_totals():
    problem = SlotProblem((1, 2), (0,), {(1, 0, 1): 5, (2, 0, 1): 5}, {1: 40, 2: 40}, {0: 50})
    with pytest.raises(InputError) as caught:
        solve_slots(problem, time_limit=10, gap=GAP)
    assert "the stack's weights (80 bits) cannot be divided among the cores' weight memories " in (
        str(caught.value)
    )
    assert "(50 bits in all)" in str(caught.value)


def test_bad_solver_options_are_one_line():
    problem = SlotProblem((1,), (0,), {(1, 0, 1): 5}, {}, {0: 50})
    with pytest.raises(InputError, match="time_limit"):
        solve_slots(problem, time_limit=0, gap=GAP)
    with pytest.raises(InputError, match="gap"):
        solve_slots(problem, time_limit=10, gap=1.5)


def test_same_answer_on_every_run():
    problem = random_problem(random.Random(7))
    answers = {solve_slots(problem, time_limit=30, gap=GAP).parts for _ in range(3)}
    assert len(answers) == 1


def _recorded_problem(record: dict) -> SlotProblem:
    cores = tuple(sorted(int(name.split()[-1]) for name in record["capacities"]))
    runtime = {
        (n, int(c.split()[-1]), k): v
        for n, c, k, v in record["latencies"]
        if record["splits"][str(n)][c][str(k)]
    }
    groups = tuple(tuple(g) for _, g in sorted(record["groups"].items(), key=lambda kv: int(kv[0])))
    return SlotProblem(
        tuple(sorted({n for n, _, _ in runtime})),
        cores,
        runtime,
        {int(k): v for k, v in record["weights"].items()},
        {int(name.split()[-1]): int(v) for name, v in record["capacities"].items()},
        tuple(tuple(d) for d in record["dependencies"]),
        groups,
        record["iterations"],
    )


@pytest.mark.parametrize("oracle", ORACLE, ids=[p.stem for p in ORACLE])
def test_reference_models_solve_to_the_reference_objective(oracle):
    """The reference's own model inputs (recorded from Stream + Gurobi), solved by ours."""
    for record in json.loads(oracle.read_text())["stacks"]:
        answer = solve_slots(_recorded_problem(record), time_limit=60, gap=GAP)
        assert answer.objective == pytest.approx(record["objective"], rel=1e-6)


@pytest.fixture(scope="module")
def reference_folder(tmp_path_factory) -> Path:
    """The reference cases' folder layout (core files are found from the working directory)."""
    folder = tmp_path_factory.mktemp("co")
    shutil.copytree(STREAM_REF / "small", folder / "small")
    shutil.copytree(STREAM_REF / "stream", folder / "stream")
    shutil.copytree(CO / "inputs", folder / "co")
    shutil.copy(CO / "inputs" / "mapping_flexible.yaml", folder / "small")
    shutil.copytree(
        CO / "inputs" / "hardware",
        folder / "stream" / "inputs" / "examples" / "hardware",
        dirs_exist_ok=True,
    )
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("oracle", ORACLE, ids=[p.stem for p in ORACLE])
def test_our_models_equal_the_references(oracle, reference_folder, monkeypatch):
    """From the same files, our steady states have the reference's model inputs and optimum."""
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.multicore.allocation.constraint import allocate
    from zigzag.multicore.allocation.genes import build_allocation_problem
    from zigzag.multicore.cost_table import CostTable
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files

    monkeypatch.chdir(reference_folder)
    ref = json.loads(oracle.read_text())
    case = ref["case"]
    hardware = load_multicore_accelerator(case["hardware"])
    stacks = [tuple(s) for s in case.get("layer_stacks") or []] or None
    graph = cn_graph_from_files(hardware, case["workload"], case["mapping"], case["mode"], stacks)
    table = CostTable.for_accelerator(hardware, options=SearchOptions(opt="latency", lpf_limit=6))
    build_allocation_problem(graph, hardware, table)
    ours = allocate(graph, hardware, table, time_limit=60, gap=GAP)
    assert len(ours.stacks) == len(ref["stacks"])
    for stack, record in zip(ours.stacks, ref["stacks"]):
        expected = _recorded_problem(record)
        assert stack.problem.nodes == expected.nodes
        assert dict(stack.problem.runtime) == expected.runtime
        assert dict(stack.problem.weight_bits) == expected.weight_bits
        assert dict(stack.problem.capacity_bits) == expected.capacity_bits
        assert set(stack.problem.dependencies) == set(expected.dependencies)
        assert stack.problem.iterations == expected.iterations
        assert stack.answer.objective == pytest.approx(record["objective"], rel=1e-6)


@pytest.mark.slow
def test_cli_writes_an_allocation_that_runs_to_the_same_schedule(
    reference_folder, tmp_path, monkeypatch
):
    monkeypatch.chdir(reference_folder)
    inputs = [
        "--accelerator",
        "small/dual_testing_core_offchip_v2.yaml",
        "--workload",
        "small/small_3conv.onnx",
        "--mode",
        "fused",
        "--layer-stacks",
        "0-2",
    ]
    found = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "stream",
            "search",
            "--method",
            "co",
            *inputs,
            "--mapping",
            "co/mapping_flexible.yaml",
            "--output",
            str(tmp_path / "co"),
        ],
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stderr
    assert "objective 1340 cycles (optimal" in found.stdout
    summary = json.loads((tmp_path / "co" / "summary.json").read_text())
    assert summary["search"]["stacks"][0]["objective"] == 1340
    mapping = yaml.safe_load((tmp_path / "co" / "allocation.yaml").read_text())
    split = [e for e in mapping if e["name"] == "/conv1/Conv"][0]
    assert split["core_allocation"] == [0, 1] and split["inter_core_tiling"] == ["K, 2"]
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "stream",
            "run",
            *inputs,
            "--mapping",
            str(tmp_path / "co" / "allocation.yaml"),
            "--output",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    rerun = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert rerun["latency"] == summary["latency"] and rerun["energy"] == summary["energy"]
    assert (tmp_path / "co" / "co_slots.csv").read_text().splitlines()[
        0
    ] == "stack,slot,core,layer,sub_id"


def test_stage_api_and_stream_api_give_the_cli_result(reference_folder, tmp_path, monkeypatch):
    """Stream's stage chain with its constraint-optimisation leaf, and ``stream.api.optimize_allocation_co``."""
    import stream.api
    from zigzag.multicore.api import CO_STAGES
    from zigzag.multicore.stages import MainStage

    monkeypatch.chdir(reference_folder)
    files = dict(
        accelerator="small/dual_testing_core_offchip_v2.yaml",
        workload_path="small/small_3conv.onnx",
        mapping_path="co/mapping_flexible.yaml",
    )
    ((scme, search),) = MainStage(
        CO_STAGES, **files, mode="fused", layer_stacks=[(0, 1, 2)], loma_lpf_limit=6
    ).run()
    assert search.allocation.stacks[0].answer.objective == 1340
    assert search.allocation.layer_cores[1] == (0, 1)
    result = stream.api.optimize_allocation_co(
        files["accelerator"],
        files["workload_path"],
        files["mapping_path"],
        "fused",
        [(0, 1, 2)],
        "co-small",
        str(tmp_path),
    )
    assert result.latency == scme.latency and result.energy == scme.energy
    assert (tmp_path / "co-small" / "scme.pickle").exists() and (
        tmp_path / "co-small" / "cost_lut.pickle"
    ).exists()
    assert (reference_folder / "outputs" / "co-small" / "cost_lut_post_co.pickle").exists()
    assert (tmp_path / "co-small" / "waco" / "co_slots.csv").exists()


@pytest.mark.slow
def test_workflow_runs_a_constraint_optimisation_experiment(tmp_path):
    """``search: {method: co}`` in ``stream_experiments``: the allocation, its slots and pictures."""
    repo = REPO
    shutil.copytree(STREAM_REF / "small", tmp_path / "small")
    shutil.copytree(STREAM_REF / "stream", tmp_path / "stream")
    shutil.copy(CO / "inputs" / "mapping_flexible.yaml", tmp_path / "mapping.yaml")
    experiment = {
        "name": "small-co",
        "accelerator": "small/dual_testing_core_offchip_v2.yaml",
        "workload": "small/small_3conv.onnx",
        "mapping": "mapping.yaml",
        "mode": "fused",
        "layer_stacks": "0-2",
        "search": {"method": "co", "time_limit": 60},
    }
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({"stream_experiments": [experiment], "outputs": {"plot_format": "png"}})
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(repo / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(tmp_path / "config.yaml"),
            "--cores",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "results" / "multicore" / "small-co"
    summary = json.loads((run / "summary.json").read_text())
    assert (
        summary["search"]["method"] == "co" and summary["search"]["stacks"][0]["objective"] == 1340
    )
    assert (run / "co_slots.csv").exists() and (run / "plots" / "gantt.png").exists()
    assert not (run / "front.csv").exists()


def test_multicore_sweep_may_allocate_by_constraint_optimisation(tmp_path):
    from zigzag.sweep import read_sweep, run_sweep

    repo = REPO
    mapping = yaml.safe_load(
        (repo / "inputs" / "stream" / "mapping" / "mesh_all_cores.yaml").read_text()
    )
    for entry in mapping:
        entry["core_allocation_is_fixed"] = False
        entry["inter_core_tiling"] = ["K, *"] if entry["name"] != "default" else ["H, 1"]
    path = tmp_path / "flexible.yaml"
    path.write_text(yaml.safe_dump(mapping))
    spec = {
        "kind": "multicore",
        "base": str(repo / "inputs" / "stream" / "hardware" / "tpu_like_mesh_pooling.yaml"),
        "params": {"rows": "mesh.rows", "cols": "mesh.cols"},
        "workloads": [str(repo / "inputs" / "stream" / "workload" / "small_3conv.onnx")],
        "mapping": str(path),
        "allocation_search": {"method": "co", "time_limit": 60},
    }
    rows = run_sweep(spec, tmp_path / "out", cache=tmp_path / "cache")
    assert rows[0]["status"] == "ok" and rows[0]["allocation"] == "constraint optimisation"
    assert rows[0]["co_optimal_stacks"] >= 1
    with pytest.raises(InputError) as error:
        read_sweep({"name": "s", **spec, "allocation_search": {"method": "milp"}}, "config")
    assert error.value.where == "allocation_search.method" and "\n" not in str(error.value)


@pytest.mark.slow
def test_a_fixed_numeric_split_keeps_its_cores(reference_folder, tmp_path, monkeypatch):
    """A layer whose mapping fixes its cores and a numeric split (``[K, 2]`` over cores 0 and 1)
    keeps them: the solver places each group on its listed core, the written allocation lists
    them again, and its schedule is the plain run's (before, the solver could put a layer on one
    core, and the allocation it wrote then listed one core for two groups and was refused)."""
    from zigzag.multicore.api import CO_STAGES, STAGES
    from zigzag.multicore.stages import MainStage

    monkeypatch.chdir(reference_folder)
    mapping = tmp_path / "fixed_split.yaml"
    mapping.write_text(
        "- name: default\n  core_allocation: [0, 1]\n  core_allocation_is_fixed: true\n"
        "  intra_core_tiling:\n    - OY, all\n  inter_core_tiling:\n    - K, 2\n"
    )
    files = dict(
        accelerator="small/dual_testing_core_offchip_v2.yaml",
        workload_path="small/small_3conv.onnx",
        mapping_path=str(mapping),
    )
    ((scme, search),) = MainStage(CO_STAGES, **files, mode="lbl", loma_lpf_limit=6).run()
    assert set(search.allocation.layer_cores.values()) == {(0, 1)}
    for stack in search.allocation.stacks:
        assert all(k == 1 for (_, _, k) in stack.problem.runtime)  # nothing left to split
    ((plain, _),) = MainStage(STAGES, **files, mode="lbl", loma_lpf_limit=6).run()
    assert (scme.latency, scme.energy) == (plain.latency, plain.energy)


def test_parts_on_a_shared_dram_link_queue_there():
    """Two CNs streaming 30 cycles each over one DRAM link both cores use: in one slot or two, on one
    core or split over both, the repetition takes at least the 60 cycles the link is busy (without the
    link, both run at once in 10 cycles)."""
    runtime = {(n, c, k): 10 // k for n in (1, 2) for c in (0, 1) for k in (1, 2)}
    plain = SlotProblem((1, 2), (0, 1), runtime, {}, {0: 1, 1: 1})
    linked = SlotProblem(
        (1, 2),
        (0, 1),
        runtime,
        {},
        {0: 1, 1: 1},
        link_cycles={(n, c, k): {7: 30 // k} for n in (1, 2) for c in (0, 1) for k in (1, 2)},
    )
    assert solve_slots(plain, time_limit=10, gap=0).objective == 10
    assert solve_slots(linked, time_limit=10, gap=0).objective == 60
