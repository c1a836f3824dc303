"""Stream's Stage API (seed and late-2024 names), ZigZag stages inside it, own stages, one-call API."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from zigzag.errors import InputError
from zigzag.stages import GeneralParameterIteratorStage, MinimalLatencyStage
from zigzag.multicore.api import optimize_allocation_ga
from zigzag.multicore.stages import *  # noqa: F403 - the seed's import style
from zigzag.multicore.stages import MainStage, Stage, StreamCostModelEvaluation
from support import REPO

INPUTS = REPO / "inputs" / "stream"

# The seed's example (docs "Stages" page), verbatim.
SEED_EXAMPLE = """
mainstage = MainStage(
[
AcceleratorParserStage,
StreamONNXModelParserStage,
LayerSplittingStage,
StreamONNXModelParserStage,
GenerateCNWorkloadHybridStage,
IntraCoreMappingStage,
InterCoreMappingStage,
],
accelerator=accelerator,
workload_path=workload_path,
mapping_path=mapping_path,
loma_lpf_limit=6,
nb_ga_individuals=32,
nb_ga_generations=100,
cost_lut_path=cost_lut_path,
plot_hof=True,
plot_file_name=plot_file_name,
plot_full_schedule=plot_full_schedule,
plot_data_transfer=plot_data_transfer,
cn_define_mode=CN_define_mode,
hint_loops=hint_loops,
scheduler_candidate_selection="memory",
operands_to_prefetch=[],
split_onnx_model_path=split_onnx_model_path,
split_W_double_buffered=split_W_double_buffered,
)
scme, _ = mainstage.run()
scme = scme[0]
"""


def seed_variables(tmp_path: Path) -> dict:
    return {
        "accelerator": str(INPUTS / "hardware" / "dual_testing_core.yaml"),
        "workload_path": str(INPUTS / "workload" / "small_3conv.onnx"),
        "mapping_path": str(INPUTS / "mapping" / "dual_testing_core.yaml"),
        "cost_lut_path": str(tmp_path / "cost_lut.json"),
        "plot_file_name": "-small",
        "plot_full_schedule": True,
        "plot_data_transfer": True,
        "CN_define_mode": 1,
        "hint_loops": [("OY", "all")],
        "split_onnx_model_path": str(tmp_path / "split.onnx"),
        "split_W_double_buffered": True,
    }


def test_seed_main_stage_example_runs_unchanged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # plot_hof draws the hall of fame into outputs/
    scope = {**globals(), **seed_variables(tmp_path)}
    exec(SEED_EXAMPLE, scope)
    scme = scope["scme"]
    assert isinstance(scme, StreamCostModelEvaluation)
    assert (
        scme.latency > 0 and scme.energy > 0 and scme.problem.nb_cns > 3
    )  # fused: rows of every layer
    assert Path(scope["cost_lut_path"]).exists()
    (fastest, search), (frugal, _) = scope["mainstage"].run()
    assert (fastest.latency, fastest.energy) == (scme.latency, scme.energy)
    assert scme.latency == min(p.latency for p in search.front) and frugal.energy == min(
        p.energy for p in search.front
    )
    assert len(search.genes) == 3 and search.options["plot_hof"] is True


def test_late_2024_chain_matches_the_search_function(tmp_path):
    from zigzag.multicore.pipeline import search_allocation

    kwargs = dict(
        accelerator=str(INPUTS / "hardware" / "dual_testing_core.yaml"),
        workload_path=str(INPUTS / "workload" / "small_3conv.onnx"),
        mapping_path=str(INPUTS / "mapping" / "dual_testing_core.yaml"),
        mode="fused",
        layer_stacks=None,
        loma_lpf_limit=6,
        nb_ga_individuals=6,
        nb_ga_generations=3,
        operands_to_prefetch=[],
    )
    chain = [
        AcceleratorParserStage,
        ONNXModelParserStage,
        LayerStacksGenerationStage,
        TilingGenerationStage,
        TiledWorkloadGenerationStage,
        ZigZagCoreMappingEstimationStage,
        SetFixedAllocationPerformanceStage,
        SchedulingOrderGenerationStage,
        GeneticAlgorithmAllocationStage,
    ]
    scme, search = MainStage(chain, **kwargs).run()[0]
    direct = search_allocation(
        kwargs["accelerator"],
        kwargs["workload_path"],
        kwargs["mapping_path"],
        "fused",
        individuals=6,
        generations=3,
    )
    assert search.front == direct.front
    assert (scme.latency, scme.energy) == (direct.chosen.latency, direct.chosen.energy)


def test_zigzag_stages_and_a_custom_stage_in_the_stream_chain(tmp_path):
    seen = []

    class CountingStage(Stage):
        """A custom stage written as the seed describes: build the substage, re-yield its results."""

        def __init__(self, list_of_callables, **kwargs):
            super().__init__(list_of_callables, **kwargs)
            self.substages = [self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs)]

        def run(self):
            for substage in self.substages:
                for cme, extra_info in substage.run():
                    seen.append(cme.latency)
                    yield cme, extra_info

    chain = [
        MinimalLatencyStage,
        GeneralParameterIteratorStage,
        CountingStage,
        AcceleratorParserStage,
        StreamONNXModelParserStage,
        GenerateCNWorkloadHybridStage,
        CustomSpatialMappingGeneratorStage,
        IntraCoreMappingStage,
        InterCoreMappingStage,
    ]
    answers = MainStage(
        chain,
        general_parameter_iterations={"hint_loops": [[], [("OY", "all")]]},
        accelerator=str(INPUTS / "hardware" / "dual_testing_core.yaml"),
        workload_path=str(INPUTS / "workload" / "small_3conv.onnx"),
        mapping_path=str(INPUTS / "mapping" / "dual_testing_core.yaml"),
        nb_ga_individuals=4,
        nb_ga_generations=2,
    ).run()
    assert len(seen) == 4 and len(answers) == 1  # two ends of the front per parameter value
    assert answers[0][0].latency == min(seen)


def test_unavailable_seed_option_is_a_one_line_error(tmp_path):
    variables = seed_variables(tmp_path)
    with pytest.raises(InputError, match="scheduler_candidate_selection"):
        MainStage(
            [
                AcceleratorParserStage,
                StreamONNXModelParserStage,
                GenerateCNWorkloadHybridStage,
                IntraCoreMappingStage,
                InterCoreMappingStage,
            ],
            accelerator=variables["accelerator"],
            workload_path=variables["workload_path"],
            mapping_path=variables["mapping_path"],
            scheduler_candidate_selection="latency",
        ).run()


def test_optimize_allocation_ga_writes_and_reuses(tmp_path):
    args = (
        str(INPUTS / "hardware" / "dual_testing_core.yaml"),
        str(INPUTS / "workload" / "small_3conv.onnx"),
        str(INPUTS / "mapping" / "dual_testing_core.yaml"),
        "lbl",
        None,
        2,
        4,
        "exp",
        str(tmp_path),
    )
    scme = optimize_allocation_ga(*args)
    folder = tmp_path / "exp"
    for name in (
        "scme.pickle",
        "cost_lut.pickle",
        "front.csv",
        "allocation.yaml",
        "summary.json",
        "schedule.csv",
    ):
        assert (folder / name).exists(), name
    (folder / "scme.pickle").write_bytes(pickle.dumps("cached"))
    assert optimize_allocation_ga(*args, skip_if_exists=True) == "cached"
    assert optimize_allocation_ga(*args).latency == scme.latency
    with pytest.raises(InputError, match="mode"):
        optimize_allocation_ga(*args[:3], "tiled", *args[4:])


def test_layer_splitting_stage_splits_weights_that_do_not_fit(tmp_path):
    class Collect(Stage):
        def is_leaf(self) -> bool:
            return True

        def run(self):
            yield self.kwargs["workload"], self.kwargs

    split = tmp_path / "split.onnx"
    chain = [
        AcceleratorParserStage,
        StreamONNXModelParserStage,
        LayerSplittingStage,
        StreamONNXModelParserStage,
        Collect,
    ]
    kwargs = dict(
        accelerator=str(INPUTS / "hardware" / "tpu_like_quad_core.yaml"),
        workload_path=str(
            REPO / "tests/data/reference/stream/stream/inputs/examples/workload/resnet18.onnx"
        ),
        mapping_path=str(INPUTS / "mapping" / "tpu_like_quad_core.yaml"),
        split_onnx_model_path=str(split),
    )
    plain, plain_seen = MainStage(chain, **kwargs, split_W_double_buffered=False).run()[0]
    halved, seen = MainStage(chain, **kwargs, split_W_double_buffered=True).run()[0]
    assert split.exists() and seen["workload_path"] == str(split)
    # 512x512x3x3 8-bit weights (18.9 Mbit) exceed a TPU-like core's 16.8 Mbit weight memory; with
    # double buffering (half of it) more layers are split
    assert plain_seen["layer_splits"] and set(plain_seen["layer_splits"]) < set(
        seen["layer_splits"]
    )
    assert all(factor >= 2 for factor in seen["layer_splits"].values())
    assert len(halved.layers) > len(plain.layers)
