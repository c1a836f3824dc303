"""ZigZag's public names over our package: module paths, ``zigzag.utils``, the attribute names of
the per-layer result, and the views behind them (one computation behind every figure)."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import pickle

import pytest

from zigzag.api import get_hardware_performance_zigzag
from support import TESTS

DATA = TESTS / "data"
INPUTS = DATA / "reference" / "zigzag"
GEMM = (
    str(INPUTS / "workload" / "gemm_layer.yaml"),
    str(INPUTS / "hardware" / "gemm_l1_l3.yaml"),
    str(INPUTS / "mapping" / "gemm_l1_l3.yaml"),
)

MODULE_NAMES = {
    "zigzag.api": ["get_hardware_performance_zigzag"],
    "zigzag.utils": [
        "open_yaml",
        "pickle_deepcopy",
        "pickle_save",
        "pickle_load",
        "json_repr_handler",
        "hash_sha512",
        "UniqueMessageFilter",
        "DiGraphWrapper",
    ],
    "zigzag.cost_model.cost_model": [
        "CostModelEvaluation",
        "CumulativeCME",
        "CostModelEvaluationABC",
    ],
    "zigzag.cost_model.port_activity": ["PortActivity"],
    "zigzag.visualization": [
        "bar_plot_cost_model_evaluations_breakdown",
        "print_mapping",
        "visualize_memory_hierarchy_graph",
        "visualize_dnn_graph",
    ],
    "zigzag.visualization.results.plot_cme": ["bar_plot_cost_model_evaluations_breakdown"],
    "zigzag.visualization.results.print_mapping": ["print_mapping"],
    "zigzag.visualization.graph.memory_hierarchy": ["visualize_memory_hierarchy_graph"],
    "zigzag.visualization.graph.workload": ["visualize_dnn_graph"],
    "zigzag.stages.main": ["MainStage"],
    "zigzag.stages.stage": ["Stage", "StageCallable", "MainStage"],
    "zigzag.stages.workload_iterator": ["WorkloadStage"],
    "zigzag.stages.run_opt_stages": [
        "RemoveExtraInfoStage",
        "CacheBeforeYieldStage",
        "SkipIfDumpExistsStage",
        "MultiProcessingSpawnStage",
        "MultiProcessingGatherStage",
    ],
    "zigzag.stages.exploit_data_locality_stages": [
        "SearchInterLayerDataLocalityStage",
        "ExploitInterLayerDataLocalityStage",
    ],
    "zigzag.stages.evaluation.cost_model_evaluation": ["CostModelStage"],
    "zigzag.stages.mapping.salsa": ["SalsaStage"],
    "zigzag.stages.mapping.spatial_mapping_conversion": ["SpatialMappingConversionStage"],
    "zigzag.stages.mapping.spatial_mapping_generation": ["SpatialMappingGeneratorStage"],
    "zigzag.stages.mapping.temporal_mapping_generator_stage": ["TemporalMappingGeneratorStage"],
    "zigzag.stages.parser.accelerator_parser": ["AcceleratorParserStage"],
    "zigzag.stages.parser.onnx_model_parser": ["ONNXModelParserStage"],
    "zigzag.stages.parser.workload_parser": ["WorkloadParserStage"],
    "zigzag.stages.results.plot_temporal_mapping": ["PlotTemporalMappingsStage"],
    "zigzag.stages.results.reduce_stages": [
        "MinimalEnergyStage",
        "MinimalLatencyStage",
        "MinimalEDPStage",
        "SumStage",
    ],
    "zigzag.stages.results.save": ["CompleteSaveStage", "SimpleSaveStage", "PickleSaveStage"],
    "zigzag.stages.results.visualization": ["VisualizationStage"],
}

#: every attribute of ZigZag's CostModelEvaluation (zigzag-dse 3.8.5)
CME_NAMES = """
accelerator access_same_data_considered_as_no_access active_mem_level allowed_mem_update_cycle core
cumulative_layer_ids cycles_per_op data_loading_cc_pair_combined_per_op data_loading_cc_per_op
data_loading_half_shared_part data_loading_individual_part data_loading_per_mem_inst data_loading_shared_part
data_offloading_cc_pair_combined data_offloading_cc_per_op data_offloading_cycle data_offloading_per_mem_inst
data_onloading_cycle double_buffer_true effective_mem_utili_individual effective_mem_utili_shared energy_total
ideal_cycle ideal_temporal_cycle latency_total0 latency_total1 latency_total2 layer
loading_bw_during_computation loading_cycles_during_computation
loading_offloading_bandwidth_borrowed_from_computation loading_offloading_cycles_borrowed_from_computation
mac_energy mac_spatial_utilization mac_utilization0 mac_utilization1 mac_utilization2 mapping mapping_int
mem_energy mem_energy_breakdown mem_energy_breakdown_further mem_hierarchy_dict mem_level_list mem_sharing_tuple
mem_size_dict mem_updating_window_union_collect mem_utili_individual mem_utili_shared memory_operand_links
memory_word_access port_activity_collect real_data_trans_cycle spatial_mapping spatial_mapping_dict_int
spatial_mapping_int stall_slack_comb stall_slack_comb_collect temporal_mapping
total_loading_bw_during_computation total_loading_cycles_during_computation
""".split()


@pytest.fixture(scope="module")
def gemm_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gemm")
    _, _, results = get_hardware_performance_zigzag(
        *GEMM, dump_folder=str(folder), loma_show_progress_bar=False
    )
    total, [(cme, _)] = results[0]
    return total, cme, folder


@pytest.mark.parametrize("module", sorted(MODULE_NAMES))
def test_module_paths(module):
    imported = importlib.import_module(module)
    for name in MODULE_NAMES[module]:
        assert getattr(imported, name) is not None, f"{module}.{name}"


def test_faces_are_our_objects():
    from zigzag.cost.layer_result import LayerCostResult
    from zigzag.cost.result import CumulativeResult
    from zigzag.cost_model.cost_model import CostModelEvaluation, CumulativeCME
    from zigzag.stages import CostModelStage, LomaStage, MainStage, TemporalMappingGeneratorStage
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage as face
    from zigzag.stages.main import MainStage as main_face

    assert CostModelEvaluation is LayerCostResult and CumulativeCME is CumulativeResult
    assert (
        face is CostModelStage
        and main_face is MainStage
        and LomaStage is TemporalMappingGeneratorStage
    )


def test_every_zigzag_attribute_is_there(gemm_run):
    _, cme, _ = gemm_run
    assert len(CME_NAMES) == len(set(CME_NAMES)) == 61
    for name in CME_NAMES:
        getattr(cme, name)
    assert cme.core is cme.accelerator and cme.cycles_per_op == 1.0
    assert str(cme) == f"CostModelEvaluation({cme.layer_name}, {cme.accelerator_name})"


def test_views_come_from_one_computation(gemm_run):
    from zigzag.cost.result import CostResult

    _, cme, _ = gemm_run
    detail = cme.cost_detail
    assert detail.result == CostResult(
        **{f.name: getattr(cme, f.name) for f in dataclasses.fields(CostResult)}
    )
    collected = [ss for ports in cme.stall_slack_comb_collect for ss in ports.values()]
    assert cme.stall_slack_comb == max([0, *collected])
    assert cme.mem_utili_shared == {op: list(v) for op, v in cme.mem_utilization_shared.items()}
    assert (
        cme.mapping.mem_level
        == cme.active_mem_level
        == {op: len(v) for op, v in cme.temporal_mapping.items()}
    )
    pairs = cme.data_offloading_cc_pair_combined
    assert sum(pairs) == cme.data_offloading_cycle


def test_results_pickle_with_their_layer_and_without_cached_details(gemm_run):
    _, cme, folder = gemm_run
    _ = cme.stall_slack_comb_collect  # fills the cache
    copy = pickle.loads(pickle.dumps(cme))
    assert "cost_detail" not in copy.__dict__
    assert (
        copy == cme
        and copy.layer.name == cme.layer.name
        and copy.accelerator.name == cme.accelerator_name
    )
    assert copy.stall_slack_comb_collect == cme.stall_slack_comb_collect
    [saved] = pickle.loads((folder / "list_of_cmes.pickle").read_bytes())
    assert saved.mem_level_list[0].memory_instance.name == cme.mem_level_list[0].name


def test_memory_level_views(gemm_run):
    _, cme, _ = gemm_run
    levels = cme.mem_level_list
    assert [level.name for level in levels] == [m.name for m in cme.accelerator.memories]
    level = levels[0]
    assert level.memory_instance is cme.accelerator.memories[0]
    assert (level.read_energy, level.write_energy) == (
        level.memory_instance.r_cost,
        level.memory_instance.w_cost,
    )
    op = level.operands[0]
    assert level.get_max_bandwidth(op, "rd_out_to_low") == level.memory_instance.bandwidth_max(
        op, "tl"
    )
    assert str(level).startswith(f"MemoryLevel(instance={level.name},operands=")
    assert all(
        cme.mem_size_dict[op] == [lv.memory_instance.size for lv in lvs]
        for op, lvs in cme.mem_hierarchy_dict.items()
    )


def test_four_way_and_operand_links(gemm_run):
    from enum import Enum

    from zigzag.hardware.zigzag_views import FourWay, OperandLinks

    class Direction(str, Enum):
        RD_OUT_TO_LOW = "rd_out_to_low"

    values = FourWay({"tl": 3, "wr_in_by_high": 1})
    assert values.get("rd_out_to_low") == values["tl"] == values.get(Direction.RD_OUT_TO_LOW) == 3
    assert (
        values.wr_in_by_high == 1
        and values == {"tl": 3, "fh": 1}
        and values.data["rd_out_to_high"] == 0
    )
    assert (values + values * 2) == {"tl": 9, "fh": 3, "fl": 0, "th": 0}
    links = OperandLinks({"O": "O", "W": "I2", "I": "I1"})
    assert (
        links.mem_to_layer_op("I2") == "W"
        and links.contains_mem_op("I1")
        and not links.contains_mem_op("X")
    )
    _, cme, _ = gemm_run
    assert (
        cme.real_data_trans_cycle["O"][0].get("wr_in_by_low")
        == cme.cost_detail.real_cycles["O"][0]["fl"]
    )
    accesses = cme.memory_word_access["W"][0]
    assert accesses.get("rd_out_to_low") == accesses["tl"] > 0 and isinstance(accesses, FourWay)
    assert (
        cme.mem_energy_breakdown_further["W"][0].rd_out_to_low
        == cme.mem_energy_breakdown_further["W"][0]["tl"]
    )
    assert cme.to_dict()["memory_word_access"]["W"][0] == dict(accesses)


def test_utils(tmp_path, caplog):
    from zigzag.errors import InputError
    from zigzag.utils import (
        UniqueMessageFilter,
        hash_sha512,
        json_repr_handler,
        open_yaml,
        pickle_deepcopy,
        pickle_load,
        pickle_save,
    )

    data = {"a": [1, 2, {"b": (3, 4)}]}
    pickle_save(data, tmp_path / "x.pickle")
    assert pickle_load(tmp_path / "x.pickle") == data
    copy = pickle_deepcopy(data)
    assert copy == data and copy["a"] is not data["a"]
    assert hash_sha512(data) == hash_sha512(pickle_deepcopy(data))
    assert open_yaml(INPUTS / "mapping" / "gemm_l1.yaml")[0]["name"] == "default"
    with pytest.raises(InputError, match="missing.yaml: does not exist"):
        open_yaml(tmp_path / "missing.yaml")
    with pytest.raises(TypeError, match="__jsonrepr__"):
        json_repr_handler(object())
    logger = logging.getLogger("compat-test")
    logger.addFilter(UniqueMessageFilter())
    with caplog.at_level(logging.WARNING, logger="compat-test"):
        for _ in range(3):
            logger.warning("once")
    assert [r.message for r in caplog.records] == ["once"]


def test_graph_helpers_save_figures(gemm_run, tmp_path):
    from zigzag.io.loaders import load_inputs
    from zigzag.visualization import visualize_dnn_graph, visualize_memory_hierarchy_graph

    _, cme, _ = gemm_run
    assert (
        visualize_memory_hierarchy_graph(cme.accelerator, str(tmp_path / "h.png")).stat().st_size
        > 1000
    )
    assert visualize_memory_hierarchy_graph(cme, str(tmp_path / "h2.png")).exists()
    workload, _ = load_inputs(*GEMM)
    assert visualize_dnn_graph(workload, str(tmp_path / "w.png")).stat().st_size > 1000


def test_network_sum_prints_no_mapping_and_plots_are_per_layer(gemm_run, tmp_path, capsys):
    from zigzag.visualization import bar_plot_cost_model_evaluations_breakdown, print_mapping

    total, cme, _ = gemm_run
    print_mapping(total)
    assert capsys.readouterr().out == ""
    print_mapping(cme, offsets=4)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Loop ordering for {cme.layer_name}" and lines[6].startswith("    for ")
    assert bar_plot_cost_model_evaluations_breakdown([total, cme], str(tmp_path / "b.png")).exists()
    with pytest.raises(ValueError, match="no per-layer result"):
        bar_plot_cost_model_evaluations_breakdown([total], str(tmp_path / "c.png"))


def test_main_stage_renames_older_keywords():
    from zigzag.stages.stage import LEGACY_KWARGS, current_kwargs

    assert current_kwargs(
        {
            "accelerator_path": "a.yaml",
            "onnx_model_path": "m.onnx",
            "mapping_path": "p.yaml",
            "loma_lpf_limit": 6,
        }
    ) == {"accelerator": "a.yaml", "workload": "m.onnx", "mapping": "p.yaml", "loma_lpf_limit": 6}
    assert current_kwargs({"workload": "new.yaml", "workload_path": "old.yaml"}) == {
        "workload": "new.yaml"
    }
    assert set(LEGACY_KWARGS.values()) == {"accelerator", "workload", "mapping"}
