"""The examples of ZigZag's documentation, rewritten, run against our package: the reference's
``docs/source/*.rst`` (api, stages, visualization, outputs, workload, mapping) and the two versions
of its stage document the project started from (the older one with ``accelerator_path``,
``onnx_model_path``, ``mapping_path``, ``filename_pattern`` and ``LomaStage``)."""

from __future__ import annotations

import contextlib
import io
import json
import pickle
from argparse import Namespace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from support import TESTS

DATA = TESTS / "data"
INPUTS = DATA / "reference" / "zigzag"
GEMM = (
    str(INPUTS / "workload" / "gemm_layer.yaml"),
    str(INPUTS / "hardware" / "gemm_l1.yaml"),
    str(INPUTS / "mapping" / "gemm_l1.yaml"),
)
TPU_HARDWARE = str(INPUTS / "hardware" / "tpu_like.yaml")
TPU_MAPPING = str(INPUTS / "mapping" / "tpu_like.yaml")


def small_model(*, infer_shapes: bool = True) -> onnx.ModelProto:
    """Two 3x3 convolutions with a ReLU between them (8 -> 16 -> 16 channels, 16x16 pixels)."""
    weights = [
        numpy_helper.from_array(np.ones(shape, np.float32), name)
        for name, shape in (("w1", (16, 8, 3, 3)), ("w2", (16, 16, 3, 3)))
    ]
    nodes = [
        helper.make_node(
            "Conv", ["input", "w1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node(
            "Conv", ["r1", "w2"], ["output"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16, 16, 16])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return onnx.shape_inference.infer_shapes(model) if infer_shapes else model


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ----- api.rst ---------------------------------------------------------------------------------
def test_api_page_example(in_tmp):
    from zigzag import api

    workload, accelerator, mapping = GEMM
    energy, latency, cme = api.get_hardware_performance_zigzag(
        workload,
        accelerator,
        mapping,
        opt="latency",
        dump_folder="outputs/{datetime}.json",
        pickle_filename="outputs/list_of_cmes.pickle",
    )
    assert (energy, latency) == (cme[0][0].energy_total, cme[0][0].latency_total2)
    assert (in_tmp / "outputs" / "{datetime}.json" / "overall_simple.json").exists()
    assert len(pickle.loads((in_tmp / "outputs" / "list_of_cmes.pickle").read_bytes())) == 1


# ----- visualization.rst -----------------------------------------------------------------------
def test_visualization_page_examples(in_tmp):
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.utils import pickle_load
    from zigzag.visualization.results.plot_cme import bar_plot_cost_model_evaluations_breakdown
    from zigzag.visualization.results.print_mapping import print_mapping

    get_hardware_performance_zigzag(
        str(INPUTS / "workload" / "resnet18.onnx"),
        TPU_HARDWARE,
        TPU_MAPPING,
        dump_folder="outputs",
        loma_show_progress_bar=False,
    )
    pickle_filename = "outputs/list_of_cmes.pickle"
    with open(pickle_filename, "rb") as fp:
        cmes = pickle.load(fp)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_mapping(cmes[0])
    lines = printed.getvalue().splitlines()
    assert lines[0] == "Loop ordering for /conv1/Conv"
    assert lines[2].split() == ["Temporal", "Loops", "O", "W", "I"]
    assert any(line.strip().startswith("parfor K in [0, 32)") for line in lines)

    cmes = pickle_load(pickle_filename)
    bar_plot_cost_model_evaluations_breakdown(cmes, save_path="outputs/plot_breakdown.png")
    assert (in_tmp / "outputs" / "plot_breakdown.png").stat().st_size > 10_000


# ----- outputs.rst -----------------------------------------------------------------------------
def test_outputs_page_json_representations(in_tmp):
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.utils import json_repr_handler

    _, _, results = get_hardware_performance_zigzag(
        *GEMM, dump_folder="out", loma_show_progress_bar=False
    )
    total, [(cme, _)] = results[0]
    assert cme.__simplejsonrepr__() == {"energy": cme.energy_total, "latency": cme.latency_total2}
    [saved] = (in_tmp / "out").glob("*_complete.json")
    assert json.loads(json.dumps(cme.__jsonrepr__())) == json.loads(saved.read_text())
    assert json.loads(json.dumps(json_repr_handler([cme, total], simple=True))) == [
        {"energy": cme.energy_total, "latency": cme.latency_total2},
        {"energy": total.energy_total, "latency": total.latency_total2},
    ]
    assert json_repr_handler({"cme": cme})["cme"]["inputs"]["layer"]["loop_dimensions"] == {
        "D0": 128,
        "D1": 128,
        "D2": 128,
    }


# ----- workload.rst ----------------------------------------------------------------------------
def test_workload_page_quantization_attributes(in_tmp):
    from zigzag.api import get_hardware_performance_zigzag

    path = "small.onnx"
    onnx.save(small_model(), path)
    onnx_model = onnx.load(path, load_external_data=False)
    for node in onnx_model.graph.node:
        attr = onnx.helper.make_attribute("weight_size", 4)
        node.attribute.extend([attr])
    onnx.save(onnx_model, path)

    _, _, results = get_hardware_performance_zigzag(
        path, TPU_HARDWARE, TPU_MAPPING, dump_folder="out", loma_show_progress_bar=False
    )
    per_layer = results[0][1]
    assert [cme.layer.name for cme, _ in per_layer] == ["conv1", "conv2"]
    assert all(
        cme.layer.precision["W"] == 4 and cme.layer.precision["I"] == 8 for cme, _ in per_layer
    )


def test_workload_page_external_data_and_shape_inference(in_tmp):
    from zigzag.api import get_hardware_performance_zigzag

    onnx.save(small_model(), "my_model_with_internal_data.onnx")
    model = onnx.load("my_model_with_internal_data.onnx")
    (in_tmp / "path/to/save/the").mkdir(parents=True)
    onnx.save_model(
        model,
        "path/to/save/the/model.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="external_data_filename",
        size_threshold=1024,
        convert_attribute=False,
    )
    assert (in_tmp / "path/to/save/the/external_data_filename").exists()
    external, *_ = get_hardware_performance_zigzag(
        "path/to/save/the/model.onnx",
        TPU_HARDWARE,
        TPU_MAPPING,
        dump_folder="a",
        loma_show_progress_bar=False,
    )

    onnx.save(small_model(infer_shapes=False), "my_model.onnx")
    model = onnx.load("my_model.onnx")
    inferred_model = onnx.shape_inference.infer_shapes(model)
    onnx.save(inferred_model, "my_inferred_model.onnx")
    inferred, *_ = get_hardware_performance_zigzag(
        "my_inferred_model.onnx",
        TPU_HARDWARE,
        TPU_MAPPING,
        dump_folder="b",
        loma_show_progress_bar=False,
    )
    assert inferred == external > 0


# ----- mapping.rst -----------------------------------------------------------------------------
MAPPING_PAGE_ENTRY = """\
- name: example_name_of_layer0
  spatial_mapping:
    D1:
    - C, 32
    D2:
    - K, 32
  temporal_ordering:
    - [OX, 112] # Innermost loop
    - [OY, 112]
    - [FX, 7]
    - [FY, 7]
    - [K, 2] # Outermost loop
  memory_operand_links:
    O: O
    W: I2
    I: I1
- name: default
  spatial_mapping:
    D1:
    - K, 32
    D2:
    - C, 32
  memory_operand_links:
    O: O
    W: I2
    I: I1
"""


def test_mapping_page_entry(in_tmp):
    """The page's entry, with a default entry beside it (both ZigZag and we require one), fixes
    the loop order of the layer it names. As printed, the page puts ``temporal_ordering`` one
    level too far left, which is malformed YAML: that is reported, naming the file."""
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.errors import InputError
    from zigzag.utils import open_yaml

    layers = open_yaml(INPUTS / "workload" / "resnet18.yaml")[:1]
    Path("mapping.yaml").write_text(MAPPING_PAGE_ENTRY)
    _, _, results = get_hardware_performance_zigzag(
        layers, TPU_HARDWARE, "mapping.yaml", dump_folder="out", loma_show_progress_bar=False
    )
    [(cme, _)] = results[0][1]
    assert cme.spatial_mapping_array == {"D1": {"C": 3}, "D2": {"K": 32}}
    loops = [loop for level in cme.temporal_mapping["O"] for loop in level]
    assert [dim for dim, _ in loops] == ["OX", "OY", "FX", "FY", "K"]

    as_printed = MAPPING_PAGE_ENTRY.replace("  temporal_ordering:", "temporal_ordering:")
    Path("printed.yaml").write_text(as_printed)
    with pytest.raises(InputError, match="printed.yaml"):
        get_hardware_performance_zigzag(layers, TPU_HARDWARE, "printed.yaml", dump_folder="out2")


# ----- stages.rst and the stage document's current version (seed 000) --------------------------
@pytest.mark.parametrize("generator", ["LomaStage", "TemporalMappingGeneratorStage"])
def test_stages_page_pipeline(in_tmp, generator):
    from zigzag import stages as zz
    from zigzag.stages import (
        AcceleratorParserStage,
        CompleteSaveStage,
        CostModelStage,
        MainStage,
        MinimalLatencyStage,
        PickleSaveStage,
        SimpleSaveStage,
        SpatialMappingGeneratorStage,
        SumStage,
        VisualizationStage,
        WorkloadParserStage,
        WorkloadStage,
    )

    workload, accelerator, mapping = GEMM
    args = Namespace(
        accelerator=accelerator,
        workload=workload,
        mapping=mapping,
        dump_folder="outputs/run",
        pickle_filename="outputs/run/list_of_cmes.pickle",
        lpf_limit=3,
    )
    nb_spatial_mappings_generated = 3
    workload_parser_stage = WorkloadParserStage
    opt_stage = MinimalLatencyStage
    mainstage = MainStage(
        [
            workload_parser_stage,
            AcceleratorParserStage,
            SimpleSaveStage,
            PickleSaveStage,
            SumStage,
            WorkloadStage,
            VisualizationStage,
            CompleteSaveStage,
            opt_stage,
            SpatialMappingGeneratorStage,
            opt_stage,
            getattr(zz, generator),
            CostModelStage,
        ],
        accelerator=args.accelerator,
        workload=args.workload,
        mapping=args.mapping,
        dump_folder=args.dump_folder,
        pickle_filename=args.pickle_filename,
        loma_lpf_limit=args.lpf_limit,
        loma_show_progress_bar=True,
        nb_mappings_generated=nb_spatial_mappings_generated,
        enable_mix_spatial_mapping_generation=False,
        access_same_data_considered_as_no_access=True,
    )
    cmes = mainstage.run()
    total, per_layer = cmes[0]
    energy, latency, _ = __import__("zigzag.api").api.get_hardware_performance_zigzag(
        *GEMM, lpf_limit=3, dump_folder="api", loma_show_progress_bar=False
    )
    assert (total.energy_total, total.latency_total2) == pytest.approx((energy, latency))
    run = in_tmp / "outputs" / "run"
    assert json.loads((run / "overall_simple.json").read_text()) == total.simple_dict()
    assert len(list(run.glob("*_complete.json"))) == 1 and (run / "list_of_cmes.pickle").exists()


# ----- the older stage document (seed 001) -----------------------------------------------------
def test_older_stage_document_pipeline(in_tmp):
    """The older document's example (its missing ``],`` and ``)`` restored) with its keyword
    names; ``filename_pattern`` saves the list of results passing through SimpleSaveStage."""
    from zigzag.stages import (
        AcceleratorParserStage,
        CostModelStage,
        LomaStage,
        MainStage,
        MinimalLatencyStage,
        ONNXModelParserStage,
        SimpleSaveStage,
        SpatialMappingGeneratorStage,
        WorkloadStage,
    )

    onnx.save(small_model(), "model.onnx")
    args = Namespace(accelerator=TPU_HARDWARE, model="model.onnx", mapping=TPU_MAPPING)
    mainstage = MainStage(
        [
            ONNXModelParserStage,
            AcceleratorParserStage,
            SimpleSaveStage,
            WorkloadStage,
            SpatialMappingGeneratorStage,
            MinimalLatencyStage,
            LomaStage,
            CostModelStage,
        ],
        accelerator_path=args.accelerator,
        onnx_model_path=args.model,
        mapping_path=args.mapping,
        filename_pattern="outputs/{datetime}.json",
        loma_lpf_limit=6,
        loma_show_progress_bar=True,
    )
    results = mainstage.run()
    assert [cme.layer.name for cme, _ in results] == ["conv1", "conv2"]
    [saved] = list((in_tmp / "outputs").glob("*.json"))
    assert json.loads(saved.read_text()) == [cme.simple_dict() for cme, _ in results]
    assert saved.stem[:4].isdigit()


def test_save_stage_without_a_destination_names_both_keywords():
    from zigzag.errors import InputError
    from zigzag.stages import MainStage, SimpleSaveStage

    with pytest.raises(InputError, match="SimpleSaveStage.*dump_folder.*filename_pattern"):
        MainStage([SimpleSaveStage, SimpleSaveStage]).run()
