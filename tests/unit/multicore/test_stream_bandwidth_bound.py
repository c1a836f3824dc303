"""The multi-core ``latency_model``: Stream's link model for a CNN (a schedule whose DRAM link moves
more bits than it can carry is flagged, not changed) and on request, ``bandwidth_bound`` for an LLM
step (the default ``auto``) and on request (streaming CNs last at least their DRAM bits over the
link bandwidth they get, so no link carries more than its width)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zigzag.errors import InputError
from zigzag.steps.multicore import resolve_multicore_experiments
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.scheduler import schedule
from zigzag.multicore.schedule.dram_links import DEMAND_LIMIT, dram_link_shares
from zigzag.multicore.schedule.traffic import streamed_dram_bits
from support import REPO, TESTS

ROOT = REPO
DATA = TESTS / "data" / "stream_llm"
REF = TESTS / "data" / "reference" / "stream"
QUAD = (
    ROOT / "inputs/stream/hardware/tpu_like_quad_core.yaml",
    ROOT / "inputs/stream/mapping/llm_quad_core.yaml",
)
CNN = (
    REF / "stream/inputs/examples/hardware/tpu_like_quad_core.yaml",
    REF / "small/small_3conv.onnx",
    REF / "small/mapping_plain.yaml",
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cost-cache")


@pytest.fixture(scope="module")
def problems(cache):
    """Scheduling problems of two LLM exports (decode lbl, prefill fused) and a CNN, under Stream's
    link model (named: the default for an LLM step is bandwidth_bound)."""
    gpt2 = run_stream(
        QUAD[0], DATA / "gpt2_decode.onnx", QUAD[1], "lbl", cache=cache, latency_model="zigzag"
    ).problem
    prefill = run_stream(
        QUAD[0],
        DATA / "llama_tiny_prefill.onnx",
        QUAD[1],
        "fused",
        cache=cache,
        latency_model="zigzag",
    ).problem
    cnn = run_stream(CNN[0], CNN[1], CNN[2], "lbl", cache=cache, cwd=str(REF)).problem
    return {"gpt2_decode": gpt2, "llama_tiny_prefill": prefill, "small_3conv": cnn}


def _varied(problem, bits_scale: float, runtime_scale: float, latency_model: str):
    """``problem`` with its streamed DRAM bits and run times scaled (a harder or easier link). The
    fused prefill keeps its run times: other ones make its memory bookkeeping overflow a core's
    memory whatever the latency model (a limit of the scheduler, not of this option)."""
    if problem.name == "llama_tiny_prefill":
        runtime_scale = 1.0
    bits = tuple(
        None if b is None else tuple((r * bits_scale, w * bits_scale) for r, w in b)
        for b in problem.dram_bits
    )
    return replace(
        problem,
        dram_bits=bits,
        runtime=problem.runtime * runtime_scale,
        latency_model=latency_model,
    )


def _peak_activity(result, link: int) -> float:
    """The largest summed activity on ``link`` at any time."""
    steps = sorted(
        (t, sign * e.activity)
        for e in result.link_events[link]
        if e.end > e.start
        for t, sign in ((e.start, 1), (e.end, -1))
    )
    level = peak = 0.0
    for _, delta in sorted(steps, key=lambda s: (s[0], s[1])):  # ends before starts at equal times
        level += delta
        peak = max(peak, level)
    return peak


CASES = st.sampled_from(["gpt2_decode", "llama_tiny_prefill", "small_3conv"])


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=CASES, bits_scale=st.floats(0.05, 40), runtime_scale=st.floats(0.05, 2))
def test_bandwidth_bound_keeps_every_dram_link_within_its_width(
    problems, case, bits_scale, runtime_scale
):
    result = schedule(_varied(problems[case], bits_scale, runtime_scale, "bandwidth_bound"))
    p = result.problem
    for label, share in dram_link_shares(result).items():
        assert share["demand"] <= DEMAND_LIMIT, label
    for index, link in enumerate(p.hardware.links):
        if not math.isinf(link.bandwidth):
            assert _peak_activity(result, index) <= link.bandwidth
    offchip = p.hardware.offchip_core
    for n in range(
        p.nb_cns
    ):  # a streaming CN lasts at least its bits over the width of each link it uses
        streamed = streamed_dram_bits(p, n)
        if not streamed:
            continue
        duration = result.end[n] - result.start[n]
        assert result.end[n] >= result.start[n] + p.runtime[n]  # never shorter than its cost
        core = int(p.core[n])
        read, write = sum(r for _, r, _ in streamed), sum(w for _, _, w in streamed)
        for lk in set(p.hardware.routes[(offchip, core)]) | set(p.hardware.routes[(core, offchip)]):
            bits = read * (lk in p.hardware.routes[(offchip, core)]) + write * (
                lk in p.hardware.routes[(core, offchip)]
            )
            assert duration * p.hardware.links[lk].bandwidth >= bits * (1 - 1e-9)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=CASES, bits_scale=st.floats(0.05, 40), runtime_scale=st.floats(0.05, 2))
def test_by_default_the_bits_change_nothing(problems, case, bits_scale, runtime_scale):
    """Stream's link model: the DRAM bits are reported, never used to schedule (parity)."""
    base = schedule(_varied(problems[case], 1.0, runtime_scale, "zigzag"))
    varied = schedule(_varied(problems[case], bits_scale, runtime_scale, "zigzag"))
    assert varied.latency == base.latency and varied.energy == base.energy
    assert (varied.start == base.start).all() and (varied.end == base.end).all()
    assert (varied.end == varied.start + varied.problem.runtime).all()  # no CN stretched
    assert varied.link_events == base.link_events


def test_the_real_problems_scheduled_by_default_are_stream_s(problems):
    """Without the option nothing moves; with it a step that fits its link is unchanged too."""
    for problem in problems.values():
        default = schedule(problem)
        assert default.problem.latency_model == "zigzag"
        assert (default.end == default.start + problem.runtime).all()
    fits = problems["small_3conv"]  # streams little: nothing to stretch
    assert (
        schedule(replace(fits, latency_model="bandwidth_bound")).latency == schedule(fits).latency
    )


def test_an_overcommitted_link_is_flagged_once_and_the_option_removes_it(
    problems, tmp_path, caplog
):
    heavy = _varied(problems["gpt2_decode"], 10.0, 1.0, "zigzag")
    default = schedule(heavy)
    check = default.dram_link_check()
    assert check["dram_link_overcommitted"] and check["dram_link_demand"] > 5
    with caplog.at_level(logging.WARNING, logger="zigzag"):
        default.write(tmp_path / "default")
    lines = [r.getMessage() for r in caplog.records if "DRAM link" in r.getMessage()]
    assert (
        len(lines) == 1
        and check["dram_link"] in lines[0]
        and "latency_model: bandwidth_bound" in lines[0]
    )
    summary = json.loads((tmp_path / "default" / "summary.json").read_text())
    assert summary["dram_link_overcommitted"] is True and summary["latency_model"] == "zigzag"
    assert summary["dram_link_demand"] == pytest.approx(check["dram_link_demand"])
    caplog.clear()
    bound = schedule(replace(heavy, latency_model="bandwidth_bound"))
    with caplog.at_level(logging.WARNING, logger="zigzag"):
        bound.write(tmp_path / "bound")
    assert not [r for r in caplog.records if "DRAM link" in r.getMessage()]
    summary = json.loads((tmp_path / "bound" / "summary.json").read_text())
    assert not summary["dram_link_overcommitted"] and summary["latency_model"] == "bandwidth_bound"
    # the step now takes at least its DRAM bits over the link
    link = max(dram_link_shares(bound).values(), key=lambda s: s["demand"])
    assert bound.latency > default.latency * 5 and link["demand"] <= DEMAND_LIMIT


def test_run_stream_and_the_cli_take_the_option(cache, tmp_path, capsys):
    from zigzag.cli import main

    result = run_stream(
        QUAD[0],
        DATA / "gpt2_decode.onnx",
        QUAD[1],
        "lbl",
        cache=cache,
        latency_model="bandwidth_bound",
    )
    assert result.problem.latency_model == "bandwidth_bound"
    assert result.dram_link_check()["dram_link_demand"] <= DEMAND_LIMIT
    code = main(
        [
            "stream",
            "run",
            "--accelerator",
            str(QUAD[0]),
            "--workload",
            str(DATA / "gpt2_decode.onnx"),
            "--mapping",
            str(QUAD[1]),
            "--mode",
            "lbl",
            "--output",
            str(tmp_path / "run"),
            "--cache",
            str(cache),
            "--latency-model",
            "bandwidth_bound",
        ]
    )
    assert code in (0, None)
    out = capsys.readouterr().out
    assert "DRAM link demand" in out and "[bandwidth_bound]" in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["latency"] == result.latency and summary["latency_model"] == "bandwidth_bound"
    with pytest.raises(InputError, match="latency"):
        run_stream(
            QUAD[0], DATA / "gpt2_decode.onnx", QUAD[1], "lbl", cache=cache, latency_model="fast"
        )


def test_the_allocation_search_evaluates_and_reports_with_the_option(tmp_path, cache):
    from zigzag.multicore.pipeline import search_allocation

    flexible = tmp_path / "flexible.yaml"
    flexible.write_text("- name: default\n  core_allocation: [0, 1, 2, 3]\n")
    found = search_allocation(
        CNN[0],
        CNN[1],
        flexible,
        "lbl",
        individuals=4,
        generations=2,
        seed=0,
        cache=cache,
        cwd=str(REF),
        latency_model="bandwidth_bound",
        output=tmp_path / "search",
    )
    assert found.problem.base.latency_model == "bandwidth_bound"
    assert found.fixed_schedule().problem.latency_model == "bandwidth_bound"
    rerun = run_stream(
        CNN[0],
        CNN[1],
        tmp_path / "search" / "allocation.yaml",
        "lbl",
        cache=cache,
        cwd=str(REF),
        latency_model="bandwidth_bound",
    )
    assert (rerun.energy, rerun.latency) == found.figures(found.chosen)


def test_config_and_sweeps_refuse_an_unknown_latency_model(tmp_path):
    from zigzag.sweep.config import read_sweep

    spec = {
        "name": "x",
        "accelerator": str(QUAD[0]),
        "workload": str(DATA / "gpt2_decode.onnx"),
        "mapping": str(QUAD[1]),
        "mode": "lbl",
    }
    assert (
        resolve_multicore_experiments({"stream_experiments": [spec]})["x"]["latency_model"]
        == "auto"
    )
    chosen = resolve_multicore_experiments(
        {"stream_experiments": [spec | {"latency_model": "bandwidth_bound"}]}
    )
    assert chosen["x"]["latency_model"] == "bandwidth_bound"
    with pytest.raises(InputError, match="latency_model"):
        resolve_multicore_experiments(
            {"stream_experiments": [spec | {"latency_model": "roofline"}]}
        )
    section = {
        "name": "s",
        "kind": "multicore",
        "base": str(ROOT / "inputs/stream/hardware/tpu_like_mesh_llm.yaml"),
        "params": {"rows": "mesh.rows"},
        "vary": {"rows": [2]},
        "workloads": [str(DATA / "gpt2_decode.onnx")],
        "mapping": str(ROOT / "inputs/stream/mapping/llm_mesh_roles.yaml"),
        "latency_model": "roofline",
    }
    with pytest.raises(InputError, match="latency_model"):
        read_sweep(section, "config.yaml")
    assert read_sweep(section | {"latency_model": "bandwidth_bound"}, "config.yaml").options == {
        "latency_model": "bandwidth_bound"
    }
    del section["latency_model"]
    assert read_sweep(section, "config.yaml").options == {"latency_model": "auto"}


def test_the_stage_api_takes_the_option(cache):
    from zigzag.multicore.stages import (
        AcceleratorParserStage,
        GeneticAlgorithmAllocationStage,
        MainStage,
        ONNXModelParserStage,
        SchedulingOrderGenerationStage,
        SetFixedAllocationPerformanceStage,
        TiledWorkloadGenerationStage,
        ZigZagCoreMappingEstimationStage,
    )

    chain = [
        AcceleratorParserStage,
        ONNXModelParserStage,
        TiledWorkloadGenerationStage,
        ZigZagCoreMappingEstimationStage,
        SetFixedAllocationPerformanceStage,
        SchedulingOrderGenerationStage,
        GeneticAlgorithmAllocationStage,
    ]
    kwargs = dict(
        accelerator=str(QUAD[0]),
        workload_path=str(DATA / "gpt2_decode.onnx"),
        mapping_path=str(QUAD[1]),
        mode="lbl",
        layer_stacks=None,
        nb_ga_individuals=2,
        nb_ga_generations=0,
        cost_cache=cache,
    )
    plain, _ = MainStage(chain, **kwargs, latency_model="zigzag").run()[0]
    bound, search = MainStage(chain, **kwargs).run()[0]  # auto: bandwidth_bound for an LLM step
    assert search.problem.base.latency_model == "bandwidth_bound"
    assert plain.dram_link_check()["dram_link_overcommitted"]
    assert (
        bound.dram_link_check()["dram_link_demand"]
        <= DEMAND_LIMIT
        < plain.dram_link_check()["dram_link_demand"]
    )
    assert bound.latency > plain.latency


def test_the_constraint_optimisation_models_streaming_nodes_as_the_scheduler_runs_them(cache):
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.multicore.allocation.constraint import slot_problem, steady_states
    from zigzag.multicore.cost_table import CostTable
    from zigzag.multicore.topology import load_multicore_accelerator
    from zigzag.multicore.inputs import cn_graph_from_files

    hardware = load_multicore_accelerator(QUAD[0])
    graph = cn_graph_from_files(hardware, DATA / "gpt2_decode.onnx", QUAD[1], "lbl", None)
    table = CostTable.for_accelerator(
        hardware, options=SearchOptions(opt="latency", lpf_limit=6), cache=cache
    )
    longer = 0
    for state in steady_states(graph):
        plain, _ = slot_problem(graph, hardware, table, state)
        bound, _ = slot_problem(graph, hardware, table, state, "bandwidth_bound")
        plain_runtime, bound_runtime = dict(plain.runtime), dict(bound.runtime)
        assert plain_runtime.keys() == bound_runtime.keys()
        assert all(bound_runtime[k] >= plain_runtime[k] for k in plain_runtime)
        longer += sum(bound_runtime[k] > plain_runtime[k] for k in plain_runtime)
    assert longer  # the LM head's pieces need more cycles for their bits than their cost says
