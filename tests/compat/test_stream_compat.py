"""Stream users' scripts run unchanged on the top-level ``stream`` package (faces over zigzag.multicore)."""

from __future__ import annotations

import ast
import gzip
import importlib
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from zigzag.errors import InputError
from support import TESTS

DATA = TESTS / "data"
COMPAT = DATA / "stream_compat"
SMALL_REF = DATA / "reference" / "stream"
FUSED_REF = DATA / "stream" / "fused_resnet18_schedule.json.gz"
MAPPINGS = Path("stream") / "inputs" / "examples" / "mapping"
EXPERIMENT = "outputs/tpu_like_quad_core-resnet18-fused-genetic_algorithm"
SCRIPT_STACKS = [list(range(0, 11)), list(range(11, 22))] + [[i] for i in range(22, 49)]

# What Stream's own chain (stream/api.py at ed4e12e) and its documentation import, beside the scripts.
STREAM_NAMES = {
    "stream.api": ["optimize_allocation_ga", "optimize_allocation_co"],
    "stream.utils": ["CostModelEvaluationLUT"],
    "stream.cost_model.cost_model": ["StreamCostModelEvaluation"],
    "stream.visualization.memory_usage": ["plot_memory_usage"],
    "stream.visualization.perfetto": ["convert_scme_to_perfetto_json"],
    "stream.visualization.schedule": ["visualize_timeline_plotly", "plot_timeline_brokenaxes"],
    "stream.stages.stage": ["MainStage", "Stage", "StageCallable"],
    "stream.stages.parsing.accelerator_parser": ["AcceleratorParserStage"],
    "stream.stages.parsing.onnx_model_parser": ["ONNXModelParserStage"],
    "stream.stages.generation.layer_stacks_generation": ["LayerStacksGenerationStage"],
    "stream.stages.generation.tiling_generation": ["TilingGenerationStage"],
    "stream.stages.generation.tiled_workload_generation": ["TiledWorkloadGenerationStage"],
    "stream.stages.generation.scheduling_order_generation": ["SchedulingOrderGenerationStage"],
    "stream.stages.estimation.zigzag_core_mapping_estimation": ["ZigZagCoreMappingEstimationStage"],
    "stream.stages.set_fixed_allocation_performance": ["SetFixedAllocationPerformanceStage"],
    "stream.stages.allocation.genetic_algorithm_allocation": ["GeneticAlgorithmAllocationStage"],
    "stream.stages.allocation.constraint_optimization_allocation": [
        "ConstraintOptimizationAllocationStage"
    ],
}


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def imported_names(script: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of every ``from stream... import name`` in ``script``."""
    tree = ast.parse(script.read_text())
    return {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.split(".")[0] == "stream"
        for alias in node.names
    }


@pytest.mark.parametrize(
    "script", ["main_stream_ga.py", "main_stream_co.py", "uses_every_import.py"]
)
def test_every_name_stream_scripts_import_exists(script):
    names = imported_names(COMPAT / script)
    assert names
    for module, name in names | {(m, n) for m, ns in STREAM_NAMES.items() for n in ns}:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


def stream_checkout(tmp_path: Path, fixed: bool = False) -> Path:
    """A folder laid out as a Stream checkout: the script and ``stream/inputs``; with ``fixed``
    the fixed-allocation mapping sits at the path the script names."""
    shutil.copytree(COMPAT / "stream", tmp_path / "stream")
    shutil.copy(COMPAT / "main_stream_ga.py", tmp_path)
    if fixed:
        shutil.copy(
            tmp_path / MAPPINGS / "tpu_like_quad_core_resnet18_fixed_split.yaml",
            tmp_path / MAPPINGS / "tpu_like_quad_core.yaml",
        )
    return tmp_path


def run_script(folder: Path, name: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, name], cwd=folder, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_main_stream_ga_runs_unchanged(tmp_path):
    """Stream's example script, byte for byte, writes the files it names; a second run reuses
    the saved schedule (``skip_if_exists=True`` in the script)."""
    folder = stream_checkout(tmp_path)
    assert (folder / "main_stream_ga.py").read_bytes() == (
        COMPAT / "main_stream_ga.py"
    ).read_bytes()
    run_script(folder, "main_stream_ga.py")
    out = folder / EXPERIMENT
    assert (out / "memory.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plotly" in (out / "schedule.html").read_text()
    events = json.loads((out / "scme.json").read_text())["traceEvents"]
    assert {e["cat"] for e in events if e["ph"] == "X"} >= {"compute", "transfer"}
    scme = pickle.loads((out / "scme.pickle").read_bytes())
    chosen = json.loads((out / "summary.json").read_text())["search"]
    # the returned schedule is the search's evaluation (Stream's); summary.json reports it beside
    # the allocation's figures as run (what `zigzag stream run` of allocation.yaml gives)
    assert (
        scme.latency == chosen["search_latency"]
        and rel(scme.energy, chosen["search_energy"]) < 1e-12
    )
    assert len(json.loads((out / "cost_lut.pickle").read_text())["pairs"]) > 0
    saved = (out / "scme.pickle").stat().st_mtime_ns
    (out / "memory.png").unlink()
    run_script(folder, "main_stream_ga.py")
    assert (out / "scme.pickle").stat().st_mtime_ns == saved
    assert (out / "memory.png").exists()


@pytest.mark.slow
def test_main_stream_ga_with_the_fixed_mapping_equals_the_reference(tmp_path):
    """The unchanged script with the fixed-allocation mapping at its mapping path: latency,
    energy and its nine terms equal the reference Stream run on the same inputs and stacks."""
    ref = json.loads(gzip.open(FUSED_REF, "rt").read())
    assert ref["inputs"]["mode"] == "fused" and ref["inputs"]["layer_stacks"] == SCRIPT_STACKS
    assert ref["inputs"]["mapping"].endswith("tpu_like_quad_core_resnet18_fixed_split.yaml")
    folder = stream_checkout(tmp_path, fixed=True)
    run_script(folder, "main_stream_ga.py")
    scme = pickle.loads((folder / EXPERIMENT / "scme.pickle").read_bytes())
    totals = ref["totals"]
    assert scme.latency == totals["latency"]
    assert rel(scme.energy, totals["energy"]) < 1e-9
    for term in (
        "total_cn_onchip_energy",
        "total_cn_offchip_memory_energy",
        "total_eviction_to_offchip_memory_energy",
        "total_sink_layer_output_offchip_memory_energy",
        "total_core_to_core_memory_energy",
        "total_cn_offchip_link_energy",
        "total_core_to_core_link_energy",
    ):
        assert (
            rel(getattr(scme, term), totals[term]) < 1e-9
            or getattr(scme, term) == totals[term] == 0
        ), term


@pytest.fixture(scope="module")
def small_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("small")
    shutil.copytree(SMALL_REF / "small", folder / "small")
    shutil.copytree(SMALL_REF / "stream", folder / "stream")
    return folder


@pytest.mark.slow
def test_script_using_every_import_runs(small_folder):
    """A user script with every import, on the small reference case (fused and, through the
    stage chain, lbl): the reference's latency and energy, and every file written."""
    shutil.copy(COMPAT / "uses_every_import.py", small_folder)
    done = run_script(small_folder, "uses_every_import.py")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    expected = {c["case"]: c for c in yaml.safe_load((SMALL_REF / "expected.yaml").read_text())}
    for case, key in (("small_fused", "fused"), ("small_lbl", "lbl")):
        assert report[key]["latency"] == expected[case]["latency_cycles"]
        assert rel(report[key]["energy"], expected[case]["energy_pJ"]) < 1e-9
        assert report[key]["is_scme"]
    assert (
        rel(
            report["fused"]["onchip"],
            expected["small_fused"]["energy_terms_pJ"]["total_cn_onchip_energy"],
        )
        < 1e-9
    )
    assert report["fused"]["cns"] == expected["small_fused"]["nb_cns"]
    assert report["lut"]["nodes"] > 0 and report["lut"]["latency_total2"] > 0
    assert {"schedule.html", "memory.png", "scme.json", "scme.pickle", "cost_lut.pickle"} <= set(
        report["files"]
    )
    # the mapping fixes every layer's core: the constraint optimisation keeps them, so the same schedule
    assert report["co"]["latency"] == report["fused"]["latency"] and report["co"]["is_scme"]
    assert {"scme.pickle", "cost_lut.pickle", "waco"} <= set(report["co"]["files"])


@pytest.fixture(scope="module")
def small_scme(small_folder, tmp_path_factory):
    from stream.api import optimize_allocation_ga

    out = tmp_path_factory.mktemp("out")
    args = dict(
        hardware="small/dual_testing_core_offchip_v2.yaml",
        workload="small/small_3conv.onnx",
        mapping="small/mapping_plain.yaml",
        mode="fused",
        layer_stacks=[(0, 1, 2)],
        nb_ga_generations=1,
        nb_ga_individuals=2,
        experiment_id="exp",
        output_path=str(out),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(small_folder)
        return optimize_allocation_ga(**args), out / "exp", args


def test_scme_attributes_stream_reads(small_scme):
    from zigzag.multicore.schedule.result import Totals

    scme, _, _ = small_scme
    assert rel(sum(getattr(scme, t) for t in Totals.TERMS), scme.energy) < 1e-12
    assert str(scme).startswith("StreamCostModelEvaluation(latency=")
    graph = scme.workload
    assert graph.number_of_nodes() == scme.problem.nb_cns == len(scme.scheduling_order)
    position = {n.index: k for k, n in enumerate(graph.topological_sort())}
    for producer, consumer in graph.edges():
        assert position[producer.index] < position[consumer.index]
        assert producer in list(graph.predecessors(consumer)) and consumer in list(
            graph.successors(producer)
        )
        assert producer.end <= consumer.start
    assert max(n.end for n in graph.node_list) <= scme.latency
    memories = scme.accelerator.memory_manager
    assert {
        k: int(v[:, 1].max()) for k, v in memories.top_instance_stored_cumsum.items()
    } == scme.peak_memory()
    links = scme.accelerator.communication_manager
    assert (
        links.pair_links[(0, 1)]
        and links.pair_links[(0, 1)][0].get_name_for_schedule_plot() == "Core(0) -> Core(1)"
    )
    assert sum(len(link.events) for link in links.links) > 0


def test_skip_if_exists_reuses_the_saved_schedule(small_scme, small_folder):
    from stream.api import optimize_allocation_ga
    from stream.cost_model.cost_model import StreamCostModelEvaluation

    scme, folder, args = small_scme
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(small_folder)
        again = optimize_allocation_ga(**args, skip_if_exists=True)
    assert isinstance(again, StreamCostModelEvaluation) and again.latency == scme.latency
    (folder / "scme.pickle").write_bytes(b"not a pickle")
    with pytest.raises(InputError, match="scme.pickle"):
        optimize_allocation_ga(**args, skip_if_exists=True)


@pytest.mark.slow
def test_pictures_take_streams_arguments(small_scme, tmp_path):
    from stream.visualization.memory_usage import plot_memory_usage
    from stream.visualization.perfetto import convert_scme_to_perfetto_json
    from stream.visualization.schedule import plot_timeline_brokenaxes, visualize_timeline_plotly
    from stream.visualization.selection import schedule_trace
    from zigzag.multicore.plots.gantt import gantt_figure

    scme, _, _ = small_scme
    only_first = schedule_trace(scme, [0], links=False)
    assert set(only_first.cn["layer"].tolist()) == {0} and not only_first.links
    assert len(only_first.cn["layer"]) == sum(n.id == 0 for n in scme.workload.node_list)
    visualize_timeline_plotly(scme, fig_path=str(tmp_path / "a" / "schedule.html"), layer_ids=[0])
    assert "plotly" in (tmp_path / "a" / "schedule.html").read_text()
    plot_memory_usage(scme, (10,), (30,), fig_path=str(tmp_path / "memory.png"), fig_size=(8, 6))
    assert (tmp_path / "memory.png").exists()
    text = convert_scme_to_perfetto_json(
        scme, None, json_path=str(tmp_path / "t.json"), process_name="mine"
    )
    events = json.loads(text)["traceEvents"]
    assert events[0]["args"]["name"] == "mine" and text == (tmp_path / "t.json").read_text()
    assert gantt_figure(only_first, show_dependencies=True).data[-1].visible is True
    plot_timeline_brokenaxes(scme, fig_path=str(tmp_path / "timeline.png"))
    scme.plot_schedule(
        plot_full_schedule=True, plot_data_transfer=True, fig_path=str(tmp_path / "full.png")
    )
    scme.plot_memory_usage(fig_path=str(tmp_path / "memory_method.png"))
    for name in ("timeline.png", "full.png", "memory_method.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(InputError, match="layer_ids"):
        visualize_timeline_plotly(scme, fig_path=str(tmp_path / "b.html"), layer_ids=[99])
    with pytest.raises(InputError, match="section_start_percent"):
        plot_memory_usage(scme, (0, 50), (100,), fig_path=str(tmp_path / "m.png"))


def test_cost_lut_loads_what_the_api_wrote(small_scme, tmp_path):
    from stream.utils import CostModelEvaluationLUT

    _, folder, _ = small_scme
    lut = CostModelEvaluationLUT(str(folder / "cost_lut.pickle"))
    node = lut.get_nodes()[0]
    assert lut.get_equal_node(node) is node
    for core in lut.get_cores(node):
        assert lut.has_cme(node, core) and lut.get_cme(node, core).energy_total > 0
    with pytest.raises(InputError, match="no evaluation"):
        lut.get_cme(node, 99)
    assert CostModelEvaluationLUT(str(tmp_path / "none.pickle")).get_nodes() == []
    (tmp_path / "bad.pickle").write_bytes(b"\x80\x04")
    with pytest.raises(InputError, match="bad.pickle"):
        CostModelEvaluationLUT(str(tmp_path / "bad.pickle"))


def test_constraint_optimisation_names_a_missing_file_in_one_line():
    from stream.api import optimize_allocation_co

    with pytest.raises(InputError, match="hw.yaml") as error:
        optimize_allocation_co("hw.yaml", "wl.onnx", "map.yaml", "fused", None, "exp", "outputs")
    assert "\n" not in str(error.value)


@pytest.mark.slow
def test_main_stream_co_runs_unchanged(tmp_path):
    """Stream's constraint-optimisation script, byte for byte (ResNet-18 fused on the quad core, its
    stacks), writes the files it names; a second run reuses the saved schedule."""
    shutil.copytree(COMPAT / "stream", tmp_path / "stream")
    shutil.copy(COMPAT / "main_stream_co.py", tmp_path)
    run_script(tmp_path, "main_stream_co.py")
    out = tmp_path / "outputs" / "tpu_like_quad_core-resnet18-fused-constraint_optimization"
    assert (out / "memory.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plotly" in (out / "schedule.html").read_text()
    assert json.loads((out / "scme.json").read_text())["traceEvents"]
    assert len(json.loads((out / "cost_lut_post_co.pickle").read_text())["pairs"]) > 0
    summary = json.loads((out / "waco" / "summary.json").read_text())
    assert summary["search"]["method"] == "co" and len(summary["search"]["stacks"]) >= 2
    scme = pickle.loads((out / "scme.pickle").read_bytes())
    assert scme.latency == summary["latency"]
    saved = (out / "scme.pickle").stat().st_mtime_ns
    run_script(tmp_path, "main_stream_co.py")
    assert (out / "scme.pickle").stat().st_mtime_ns == saved
