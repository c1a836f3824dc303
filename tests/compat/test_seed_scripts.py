"""The seed documents' example chains, run as a reader would write them (tests/data/seeds/: the
pages' code with their imports, ``zigzag.classes.stages`` and ``stream.classes.stages``), on the
project's example inputs; and the files and figures the pages say they give."""

from __future__ import annotations

import importlib
import json
import pickle
from argparse import Namespace
from pathlib import Path

import pytest

from zigzag.classes.stages import *  # the seed scripts' imports, in their order
from stream.classes.stages import *
from support import DATA, REPO

SEEDS = DATA / "seeds"
ZIGZAG_INPUTS = DATA / "reference" / "zigzag"
STREAM_INPUTS = REPO / "inputs" / "stream"

#: every seed-era module path and the names a script imports from it
SEED_MODULES = {
    "zigzag.classes.stages": ["MainStage", "Stage", "SimpleSaveStage", "LomaStage", "SumStage"],
    "zigzag.classes.stages.MainInputParserStages": [
        "AcceleratorParserStage",
        "WorkloadParserStage",
    ],
    "zigzag.classes.stages.ONNXModelParserStage": ["ONNXModelParserStage"],
    "zigzag.classes.stages.GeneralParameterIteratorStage": ["GeneralParameterIteratorStage"],
    "zigzag.classes.stages.WorkloadStage": ["WorkloadStage"],
    "zigzag.classes.stages.PlotTemporalMappingsStage": ["PlotTemporalMappingsStage"],
    "zigzag.classes.stages.ReduceStages": [
        "MinimalEnergyStage",
        "MinimalLatencyStage",
        "MinimalEDPStage",
        "SumStage",
        "ListifyStage",
    ],
    "zigzag.classes.stages.RunOptStages": [
        "RemoveExtraInfoStage",
        "CacheBeforeYieldStage",
        "SkipIfDumpExistsStage",
        "MultiProcessingSpawnStage",
        "MultiProcessingGatherStage",
    ],
    "zigzag.classes.stages.SaveStage": ["CompleteSaveStage", "SimpleSaveStage", "PickleSaveStage"],
    "zigzag.classes.stages.DumpStage": ["DumpStage"],
    "zigzag.classes.stages.TemporalMappingGeneratorStage": ["TemporalMappingGeneratorStage"],
    "zigzag.classes.stages.LomaStage": ["LomaStage"],
    "zigzag.classes.stages.SalsaStage": ["SalsaStage"],
    "zigzag.classes.stages.TemporalOrderingConversionStage": ["TemporalOrderingConversionStage"],
    "zigzag.classes.stages.SpatialMappingConversionStage": ["SpatialMappingConversionStage"],
    "zigzag.classes.stages.SpatialMappingGeneratorStage": ["SpatialMappingGeneratorStage"],
    "zigzag.classes.stages.CostModelStage": ["CostModelStage"],
    "zigzag.classes.stages.SearchInterLayerDataLocalityStage": [
        "SearchInterLayerDataLocalityStage"
    ],
    "zigzag.classes.stages.ExploitInterLayerDataLocalityStage": [
        "ExploitInterLayerDataLocalityStage"
    ],
    "zigzag.classes.stages.SearchUnusedMemoryStage": ["SearchUnusedMemoryStage"],
    "zigzag.classes.stages.RemoveUnusedMemoryStage": ["RemoveUnusedMemoryStage"],
    "zigzag.classes.stages.Stage": ["Stage", "MainStage"],
    "stream.classes.stages": [
        "MainStage",
        "AcceleratorParserStage",
        "StreamONNXModelParserStage",
        "LayerSplittingStage",
        "GenerateCNWorkloadHybridStage",
        "IntraCoreMappingStage",
        "InterCoreMappingStage",
        "CustomSpatialMappingGeneratorStage",
    ],
    "stream.classes.stages.CustomSpatialMappingGeneratorStage": [
        "CustomSpatialMappingGeneratorStage"
    ],
    "stream.classes.stages.GenerateCNWorkloadHybridStage": ["GenerateCNWorkloadHybridStage"],
    "stream.classes.stages.InterCoreMappingStage": ["InterCoreMappingStage"],
    "stream.classes.stages.IntraCoreMappingStage": ["IntraCoreMappingStage"],
    "stream.classes.stages.LayerSplittingStage": ["LayerSplittingStage"],
    "stream.classes.stages.ModelParserStage": ["ONNXModelParserStage"],
    "stream.classes.cost_model.cost_model": ["StreamCostModelEvaluation"],
}


@pytest.mark.parametrize("module", sorted(SEED_MODULES))
def test_seed_module_paths_are_todays_objects(module):
    imported = importlib.import_module(module)
    today = "zigzag.multicore" if module.startswith("stream") else "zigzag.stages"
    for name in SEED_MODULES[module]:
        assert getattr(imported, name).__module__.startswith(today), f"{module}.{name}"


def run_seed(name: str, **given) -> dict:
    """Run ``tests/data/seeds/<name>.txt`` with the names the page leaves to the reader."""
    scope = {"__name__": "__main__", **given}
    exec(compile((SEEDS / f"{name}.txt").read_text(), name, "exec"), scope)
    return scope


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_zigzag_stage_page_runs_as_written(in_tmp):
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.classes.stages import MinimalLatencyStage, WorkloadParserStage

    gemm = [
        str(ZIGZAG_INPUTS / kind / name)
        for kind, name in (
            ("workload", "gemm_layer.yaml"),
            ("hardware", "gemm_l1.yaml"),
            ("mapping", "gemm_l1.yaml"),
        )
    ]
    args = Namespace(
        workload=gemm[0],
        accelerator=gemm[1],
        mapping=gemm[2],
        dump_folder="outputs/run",
        pickle_filename="outputs/run/list_of_cmes.pickle",
        lpf_limit=3,
    )
    scope = run_seed(
        "zigzag_stages",
        args=args,
        workload_parser_stage=WorkloadParserStage,
        opt_stage=MinimalLatencyStage,
        nb_spatial_mappings_generated=3,
    )
    total, per_layer = scope["cmes"][0]
    energy, latency, _ = get_hardware_performance_zigzag(
        *gemm, lpf_limit=3, dump_folder="api", loma_show_progress_bar=False
    )
    assert (total.energy_total, total.latency_total2) == pytest.approx((energy, latency))
    run = in_tmp / "outputs" / "run"
    assert json.loads((run / "overall_simple.json").read_text()) == total.simple_dict()
    assert len(list(run.glob("*_complete.json"))) == len(per_layer) == 1
    saved = pickle.loads((run / "list_of_cmes.pickle").read_bytes())
    assert [cme.energy_total for cme in saved] == [cme.energy_total for cme, _ in per_layer]


def test_older_zigzag_stage_page_runs_as_written(in_tmp):
    scope = run_seed(
        "zigzag_stages_older",
        args=Namespace(
            accelerator=str(ZIGZAG_INPUTS / "hardware" / "tpu_like.yaml"),
            model=str(STREAM_INPUTS / "workload" / "small_3conv.onnx"),
            mapping=str(ZIGZAG_INPUTS / "mapping" / "tpu_like.yaml"),
        ),
    )
    results = scope["results"]
    assert len(results) == 3 and all(cme.latency_total2 > 0 for cme, _ in results)
    [saved] = list((in_tmp / "outputs").glob("*.json"))
    assert json.loads(saved.read_text()) == [cme.simple_dict() for cme, _ in results]


def stream_seed_inputs(folder: Path) -> dict:
    return {
        "accelerator": str(STREAM_INPUTS / "hardware" / "dual_testing_core.yaml"),
        "workload_path": str(STREAM_INPUTS / "workload" / "small_3conv.onnx"),
        "mapping_path": str(STREAM_INPUTS / "mapping" / "dual_testing_core.yaml"),
        "cost_lut_path": str(folder / "cost_lut.json"),
        "plot_file_name": "-small_3conv-",
        "plot_full_schedule": True,
        "plot_data_transfer": True,
        "CN_define_mode": 1,
        "hint_loops": [("OY", "all")],
        "split_onnx_model_path": str(folder / "split.onnx"),
        "split_W_double_buffered": True,
    }


#: what docs/compat/stream-users.md documents on the schedule object
TERMS = """total_cn_onchip_energy total_cn_offchip_link_energy total_cn_offchip_memory_energy
total_eviction_to_offchip_link_energy total_eviction_to_offchip_memory_energy
total_sink_layer_output_offchip_link_energy total_sink_layer_output_offchip_memory_energy
total_core_to_core_link_energy total_core_to_core_memory_energy""".split()


@pytest.mark.slow
def test_stream_stage_page_runs_as_written(in_tmp):
    """The page's chain as written (32 individuals, 100 generations): the whole result object and
    the hall-of-fame pictures its plot options ask for."""
    from stream.cost_model.cost_model import StreamCostModelEvaluation
    from stream.visualization.memory_usage import plot_memory_usage
    from stream.visualization.schedule import plot_timeline_brokenaxes

    scope = run_seed("stream_stages", **stream_seed_inputs(in_tmp))
    scme = scope["scme"]
    assert type(scme) is StreamCostModelEvaluation
    assert scme.energy == pytest.approx(sum(getattr(scme, term) for term in TERMS))
    assert scme.latency > 0 and scme.energy_total == scme.energy
    nodes = scme.workload.node_list
    assert len(nodes) == scme.workload.number_of_nodes() == scme.problem.nb_cns
    assert max(n.end for n in nodes) <= scme.latency
    assert sorted(scme.scheduling_order) == sorted((n.id, n.sub_id) for n in nodes)
    assert set(scme.accelerator.core_ids) >= {n.chosen_core_allocation for n in nodes}
    assert scme.accelerator.memory_manager.top_instance_capacities
    assert scme.accelerator.communication_manager.links

    # plot_hof: per hall-of-fame point its schedule (whole, with transfers) and memory pictures
    outputs = in_tmp / "outputs"
    schedules = sorted(outputs.glob("schedule_plot-small_3conv-*.png"))
    memories = sorted(outputs.glob("memory_usage_plot-small_3conv-*.png"))
    assert schedules and len(schedules) == len(memories)
    assert (outputs / "pareto-small_3conv-.png").stat().st_size > 10_000
    assert Path(scope["cost_lut_path"]).exists()

    # Stream's own calls on the result: the methods, and the 2023 forms of the picture functions
    scme.plot_schedule(plot_full_schedule=True, plot_data_transfer=True, fig_path="a/s.png")
    scme.plot_memory_usage(fig_path="a/m.png")
    plot_memory_usage(scme.accelerator.memory_manager, fig_path="a/m2023.png")
    plot_timeline_brokenaxes(scme.workload, scme.accelerator, True, (0,), (100,), True, "a/t.png")
    for name in ("s.png", "m.png", "m2023.png", "t.png"):
        assert (in_tmp / "a" / name).stat().st_size > 10_000, name


def test_zigzag_save_stages_save_a_stream_chain(in_tmp):
    """The Stream page invites ZigZag's stages: the save stages keep the Stream results."""
    inputs = stream_seed_inputs(in_tmp)
    mainstage = MainStage(
        [
            AcceleratorParserStage,
            StreamONNXModelParserStage,
            SimpleSaveStage,
            CompleteSaveStage,
            PickleSaveStage,
            DumpStage,
            GenerateCNWorkloadHybridStage,
            IntraCoreMappingStage,
            InterCoreMappingStage,
        ],
        accelerator=inputs["accelerator"],
        workload_path=inputs["workload_path"],
        mapping_path=inputs["mapping_path"],
        loma_lpf_limit=6,
        nb_ga_individuals=4,
        nb_ga_generations=2,
        cn_define_mode=1,
        hint_loops=[("OY", "all")],
        operands_to_prefetch=[],
        dump_folder="outputs/save",
        dump_filename_pattern="outputs/save/dump.pickle",
    )
    (scme, _), (frugal, _) = mainstage.run()
    saved = in_tmp / "outputs" / "save"
    assert json.loads((saved / "scme_simple.json").read_text()) == {
        "energy": scme.energy,
        "latency": scme.latency,
    }
    assert json.loads((saved / "scme_lowest_energy_simple.json").read_text())["energy"] == (
        frugal.energy
    )
    complete = json.loads((saved / "scme_complete.json").read_text())
    assert complete["total_cn_onchip_energy"] == scme.total_cn_onchip_energy
    assert len(complete["cns"]) == scme.problem.nb_cns
    pickled = pickle.loads((saved / "list_of_cmes.pickle").read_bytes())
    assert [(s.latency, s.energy) for s in pickled] == [
        (scme.latency, scme.energy),
        (frugal.latency, frugal.energy),
    ]
    dumped = pickle.loads((saved / "dump.pickle").read_bytes())
    assert [pair[0].latency for pair in dumped] == [scme.latency, frugal.latency]


def test_package_names_stay_the_stages_once_their_modules_are_imported():
    import stream.classes.stages.InterCoreMappingStage  # noqa: F401
    import zigzag.classes.stages.WorkloadStage  # noqa: F401
    from stream.classes import stages as stream_stages
    from zigzag import stages
    from zigzag.classes import stages as seed_stages
    from zigzag.multicore import stages as multicore_stages

    assert seed_stages.WorkloadStage is stages.WorkloadStage
    assert stream_stages.InterCoreMappingStage is multicore_stages.InterCoreMappingStage
