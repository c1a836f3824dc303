"""The Stage API (zigzag.stages): same numbers as the Python API, and every stage's behaviour."""

from __future__ import annotations

import dataclasses
import json
import pickle
import time
from types import SimpleNamespace

import onnx
import pytest
import yaml

from support import EXPECTED_TOTALS, REPO, TESTS, reference_input
from zigzag.api import get_hardware_performance_zigzag
from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult, sum_results
from zigzag.errors import InputError
from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.data_locality import accelerators_with_data_locality, plan_data_locality
from zigzag.io.loaders import load_inputs, load_workload
from zigzag.cost.json_forms import complete_json
from zigzag.mapping_search.spatial_mapping import convert
from zigzag.mapping_search.loma import temporal_mappings
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings
from zigzag.stages import *  # noqa: F403 - the API under test is the package namespace
from zigzag.stages import LayerCostResult, Stage
from zigzag.workload.workload import Workload

EXPECTED = yaml.safe_load(EXPECTED_TOTALS.read_text())


def ref(kind: str, name: str) -> str:
    return reference_input(kind, name)


def conv(i, name, k, c, oy, fy):
    return {
        "id": i,
        "name": name,
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, k, c, oy, oy, fy, fy],
        "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
        "operand_source": {"I": max(i - 1, 0), "W": i},
    }


#: three small layers in a chain (about a second on tpu_like); one name has a '/'
SMALL = [
    conv(0, "conv/first", 32, 32, 8, 3),
    conv(1, "conv2", 64, 32, 8, 1),
    conv(2, "conv3", 32, 64, 4, 3),
]

SEARCH = [
    MinimalLatencyStage,
    SpatialMappingGeneratorStage,
    MinimalLatencyStage,
    TemporalMappingGeneratorStage,
    CostModelStage,
]


def tpu_kwargs(**more):
    return dict(
        workload=SMALL,
        accelerator=ref("hardware", "tpu_like.yaml"),
        mapping=ref("mapping", "tpu_like.yaml"),
        loma_lpf_limit=6,
        loma_show_progress_bar=False,
        **more,
    )


def gemm_kwargs(hardware="gemm_l1.yaml", **more):
    return dict(
        workload=ref("workload", "gemm_layer.yaml"),
        accelerator=ref("hardware", hardware),
        mapping=ref("mapping", hardware),
        loma_lpf_limit=3 if hardware == "gemm_l1.yaml" else 6,
        loma_show_progress_bar=False,
        **more,
    )


def same_numbers(a: CostResult, b: CostResult) -> bool:
    return a.to_dict() == b.to_dict()


# ----- helper stages (module level, so they can be pickled) --------------------------------------
class Emit(Stage):
    """Leaf yielding ``(item, index)`` for every element of the kwarg ``items``."""

    def __init__(self, list_of_callables, *, items, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.items = items

    def is_leaf(self):
        return True

    def run(self):
        for index, item in enumerate(self.items):
            log = self.kwargs.get("log")
            if log is not None:
                log.append(("produced", index))
            yield item, index


class Capture(Stage):
    """Leaf yielding ``(its kwargs, None)``."""

    def is_leaf(self):
        return True

    def run(self):
        yield dict(self.kwargs), None


class Fail(Stage):
    def is_leaf(self):
        return True

    def run(self):
        raise RuntimeError("failing on purpose")
        yield


class SlowFirstLayer(Stage):
    """Pass-through that delays the first layer, so that it finishes last in a pool."""

    def __init__(self, list_of_callables, *, layer, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.layer = layer

    def run(self):
        if self.layer.id == 0:
            time.sleep(1.0)
        yield from self.substage(layer=self.layer).run()


class AcceleratorSpy(Stage):
    """Pass-through recording (layer id, accelerator) in the kwarg ``seen``."""

    def __init__(self, list_of_callables, *, accelerator, layer, seen, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator, self.layer, self.seen = accelerator, layer, seen

    def run(self):
        self.seen.append((self.layer.id, self.accelerator))
        yield from self.substage(accelerator=self.accelerator, layer=self.layer).run()


def fake(energy, latency, name="x"):
    return SimpleNamespace(energy_total=energy, latency_total2=latency, name=name)


# ===================================================================================================
# The documented chain against the Python API
# ===================================================================================================
DOCUMENTED_CHAIN = [
    WorkloadParserStage,
    AcceleratorParserStage,
    SimpleSaveStage,
    PickleSaveStage,
    SumStage,
    WorkloadStage,
    VisualizationStage,
    CompleteSaveStage,
    MinimalLatencyStage,
    SpatialMappingGeneratorStage,
    MinimalLatencyStage,
    TemporalMappingGeneratorStage,
    CostModelStage,
]


def expected_case(workload, accelerator):
    for case in EXPECTED:
        if case["workload"] == workload and case["accelerator"] == accelerator:
            return case
    raise AssertionError(f"no case {workload} on {accelerator} in {EXPECTED_TOTALS}")


@pytest.mark.parametrize("hardware", ["gemm_l1.yaml", "gemm_l1_l3.yaml"])
def test_documented_chain_matches_api_on_gemm(hardware, tmp_path):
    kwargs = gemm_kwargs(hardware)
    cmes = MainStage(
        DOCUMENTED_CHAIN,
        **kwargs,
        dump_folder=str(tmp_path / "stages"),
        pickle_filename=None,
        nb_mappings_generated=3,
        enable_mix_spatial_mapping_generation=False,
        access_same_data_considered_as_no_access=True,
    ).run()
    energy, latency, api_cmes = get_hardware_performance_zigzag(
        kwargs["workload"],
        kwargs["accelerator"],
        kwargs["mapping"],
        lpf_limit=kwargs["loma_lpf_limit"],
        dump_folder=tmp_path / "api",
        loma_show_progress_bar=False,
    )
    [(total, per_layer)] = cmes
    assert (total.energy_total, total.latency_total2) == (energy, latency)
    case = expected_case("gemm_layer.yaml", hardware)
    assert total.energy_total == pytest.approx(case["energy_pJ"], rel=1e-9)
    assert total.latency_total2 == case["latency_cycles"]
    [(api_layer_result, (api_layer, _))] = api_cmes[0][1]
    [(layer_result, (layer, extra))] = per_layer
    assert layer.name == api_layer.name and extra == []
    assert same_numbers(layer_result, api_layer_result)
    # the files the API writes under the same names, with the same content
    for name in ("Layer0_complete.json", "overall_simple.json"):
        assert json.loads((tmp_path / "stages" / name).read_text()) == json.loads(
            (tmp_path / "api" / name).read_text()
        )
    assert (tmp_path / "stages" / "loop_ordering.txt").exists()
    assert (tmp_path / "stages" / "mem_hierarchy.png").exists()


@pytest.mark.slow
def test_documented_chain_matches_api_on_resnet18(tmp_path):
    kwargs = dict(
        workload=ref("workload", "resnet18.yaml"),
        accelerator=ref("hardware", "tpu_like.yaml"),
        mapping=ref("mapping", "tpu_like.yaml"),
    )
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        SimpleSaveStage,
        SumStage,
        WorkloadStage,
        *SEARCH,
    ]
    [(total, per_layer)] = MainStage(
        chain,
        **kwargs,
        dump_folder=str(tmp_path),
        loma_lpf_limit=6,
        loma_show_progress_bar=False,
        nb_mappings_generated=3,
    ).run()
    energy, latency, api_cmes = get_hardware_performance_zigzag(
        **kwargs, dump_folder=tmp_path / "api", loma_show_progress_bar=False
    )
    assert (total.energy_total, total.latency_total2) == (energy, latency)
    case = expected_case("resnet18.yaml", "tpu_like.yaml")
    assert total.energy_total == pytest.approx(case["energy_pJ"], rel=1e-9)
    assert total.latency_total2 == case["latency_cycles"]
    api_per_layer = api_cmes[0][1]
    assert [layer.id for _, (layer, _) in per_layer] == [
        layer.id for _, (layer, _) in api_per_layer
    ]
    assert all(same_numbers(a, b) for (a, _), (b, _) in zip(per_layer, api_per_layer))
    assert json.loads((tmp_path / "overall_simple.json").read_text()) == {
        "energy": energy,
        "latency": latency,
    }


# ===================================================================================================
# Stage protocol
# ===================================================================================================
def test_main_stage_returns_the_list_and_iter_is_run():
    pairs = MainStage([Emit], items=["a", "b"]).run()
    assert pairs == [("a", 0), ("b", 1)]
    assert list(iter(Emit([], items=["c"]))) == [("c", 0)]
    assert isinstance(Emit, StageCallable)


def test_leaf_and_non_leaf_list_checks():
    with pytest.raises(ValueError, match="Leaf runnable received a non empty list_of_callables"):
        Emit([Capture], items=[])
    for empty in ([], (), set(), None):
        with pytest.raises(ValueError, match="List of callables empty on a non leaf runnable"):
            SumStage(empty)


@pytest.mark.parametrize(
    "chain, kwargs, stage, kwarg",
    [
        ([WorkloadStage, Capture], {"workload": Workload([])}, "WorkloadStage", "accelerator"),
        ([AcceleratorParserStage, Capture], {}, "AcceleratorParserStage", "accelerator"),
        ([WorkloadParserStage, Capture], {"workload": SMALL}, "WorkloadParserStage", "mapping"),
        (
            [CostModelStage],
            {"accelerator": None, "layer": None, "spatial_mapping": {}, "spatial_mapping_int": {}},
            "CostModelStage",
            "temporal_mapping",
        ),
        ([SimpleSaveStage, Capture], {}, "SimpleSaveStage", "dump_folder"),
        ([PickleSaveStage, Capture], {}, "PickleSaveStage", "pickle_filename"),
        ([SkipIfDumpExistsStage, Capture], {}, "SkipIfDumpExistsStage", "dump_filename_pattern"),
        (
            [GeneralParameterIteratorStage, Capture],
            {},
            "GeneralParameterIteratorStage",
            "general_parameter_iterations",
        ),
    ],
)
def test_missing_kwarg_is_reported_at_construction(chain, kwargs, stage, kwarg):
    with pytest.raises(InputError) as info:
        MainStage(chain, **kwargs).run()
    message = str(info.value)
    assert stage in message and f"'{kwarg}'" in message


def test_missing_kwarg_names_the_stage_that_provides_it():
    with pytest.raises(
        InputError,
        match=r"SpatialMappingGeneratorStage: needs the keyword argument 'layer' "
        r"\(provided by WorkloadStage",
    ):
        SpatialMappingGeneratorStage([Capture], accelerator=None)
    with pytest.raises(
        InputError,
        match=r"^AcceleratorParserStage: needs the keyword argument 'accelerator' "
        r"\(give it to MainStage\)$",
    ):
        AcceleratorParserStage([Capture])


# ===================================================================================================
# Parsers and iterators
# ===================================================================================================
def test_parsers_replace_paths_by_model_objects():
    [(kwargs, _)] = MainStage(
        [WorkloadParserStage, AcceleratorParserStage, Capture], **tpu_kwargs()
    ).run()
    assert isinstance(kwargs["workload"], Workload) and isinstance(
        kwargs["accelerator"], Accelerator
    )
    assert [layer.name for layer in kwargs["workload"].layers] == ["conv/first", "conv2", "conv3"]
    assert "mapping" not in kwargs  # consumed, as in ZigZag
    # already-built objects pass through
    workload, accelerator = kwargs["workload"], kwargs["accelerator"]
    [(again, _)] = MainStage(
        [WorkloadParserStage, AcceleratorParserStage, Capture],
        workload=workload,
        mapping=None,
        accelerator=accelerator,
    ).run()
    assert again["workload"] is workload and again["accelerator"] is accelerator


def test_onnx_parser_stage():
    model = ref("workload", "resnet18.onnx")
    mapping = ref("mapping", "tpu_like.yaml")
    [(kwargs, _)] = MainStage(
        [ONNXModelParserStage, Capture], workload=model, mapping=mapping
    ).run()
    assert isinstance(kwargs["onnx_model"], onnx.ModelProto)
    expected = load_workload(model, mapping)
    assert [layer.name for layer in kwargs["workload"].layers] == [
        layer.name for layer in expected.layers
    ]


def test_workload_stage_runs_each_layer_in_processing_order():
    workload, accelerator = load_inputs(
        SMALL, ref("hardware", "tpu_like.yaml"), ref("mapping", "tpu_like.yaml")
    )
    pairs = MainStage(
        [WorkloadStage, Capture], workload=workload, accelerator=accelerator, other=1
    ).run()
    assert [layer.id for _, (layer, _) in pairs] == [layer.id for layer in workload.layers]
    for kwargs, (layer, extra) in pairs:
        assert (
            kwargs["layer"] is layer
            and kwargs["accelerator"] is accelerator
            and kwargs["other"] == 1
        )
        assert "workload" not in kwargs and extra is None


def test_general_parameter_iterator_visits_the_grid_and_prefixes_extra_info():
    pairs = MainStage(
        [GeneralParameterIteratorStage, Capture],
        general_parameter_iterations={"a": [1, 2], ("b", "c"): [(3, 4), (5, 6)]},
        fixed="f",
    ).run()
    settings = [extra[0] for _, extra in pairs]
    assert settings == [
        (("a", 1), ("b", 3), ("c", 4)),
        (("a", 1), ("b", 5), ("c", 6)),
        (("a", 2), ("b", 3), ("c", 4)),
        (("a", 2), ("b", 5), ("c", 6)),
    ]
    for kwargs, (setting, inner) in pairs:
        assert (
            {k: kwargs[k] for k in "abc"} == dict(setting)
            and kwargs["fixed"] == "f"
            and inner is None
        )
        assert "general_parameter_iterations" not in kwargs


def test_general_parameter_iterator_with_a_real_search():
    search = [SumStage, WorkloadStage, *SEARCH]
    kwargs = gemm_kwargs("gemm_l1_l3.yaml")
    pairs = MainStage(
        [WorkloadParserStage, AcceleratorParserStage, GeneralParameterIteratorStage, *search],
        **kwargs,
        general_parameter_iterations={"temporal_mapping_type": ["uneven", "even"]},
    ).run()
    assert [extra[0] for _, extra in pairs] == [
        (("temporal_mapping_type", "uneven"),),
        (("temporal_mapping_type", "even"),),
    ]
    for total, ((setting,), _) in pairs:
        [(alone, _)] = MainStage(
            [WorkloadParserStage, AcceleratorParserStage, *search],
            **kwargs,
            temporal_mapping_type=setting[1],
        ).run()
        assert total == alone


# ===================================================================================================
# Mapping stages and the cost model
# ===================================================================================================
@pytest.fixture(scope="module")
def tpu_layer():
    workload, accelerator = load_inputs(
        [conv(0, "L", 32, 32, 8, 3)],
        ref("hardware", "tpu_like.yaml"),
        str(TESTS / "data" / "mappings" / "default_no_sm_tpu.yaml"),
    )
    return workload.layers[0], accelerator


def test_spatial_mapping_generator_yields_each_mapping_converted(tpu_layer):
    layer, accelerator = tpu_layer
    pairs = MainStage(
        [SpatialMappingGeneratorStage, Capture],
        layer=layer,
        accelerator=accelerator,
        nb_mappings_generated=2,
    ).run()
    expected = generate_spatial_mappings(layer, accelerator, nb_mappings=2)
    assert len(expected) == 2 and [extra[0] for _, extra in pairs] == expected
    for kwargs, (mapping, inner) in pairs:
        fractional, integer = convert(mapping, layer, accelerator)
        assert kwargs["spatial_mapping"] == fractional and kwargs["spatial_mapping_int"] == integer
        assert (
            kwargs["spatial_mapping_array"] == mapping
            and kwargs["layer"] is layer
            and inner is None
        )


def test_spatial_mapping_conversion_alone_uses_the_fixed_mapping(tmp_path):
    kwargs = gemm_kwargs("gemm_l1.yaml")
    chain = [WorkloadParserStage, AcceleratorParserStage, SumStage, WorkloadStage]
    generated = MainStage(chain + SEARCH, **kwargs).run()
    converted = MainStage(
        chain
        + [
            SpatialMappingConversionStage,
            MinimalLatencyStage,
            TemporalMappingGeneratorStage,
            CostModelStage,
        ],
        **kwargs,
    ).run()
    assert generated[0][0].energy_total == converted[0][0].energy_total == pytest.approx(511349.76)


def test_spatial_mapping_conversion_needs_a_fixed_mapping(tpu_layer):
    layer, accelerator = tpu_layer
    with pytest.raises(InputError, match="SpatialMappingConversionStage.*fixes no spatial mapping"):
        SpatialMappingConversionStage([Capture], layer=layer, accelerator=accelerator)


def test_temporal_mapping_generator_yields_every_loma_mapping(tpu_layer):
    layer, accelerator = tpu_layer
    [mapping] = generate_spatial_mappings(layer, accelerator, nb_mappings=1)
    fractional, integer = convert(mapping, layer, accelerator)
    expected = list(temporal_mappings(layer, accelerator, fractional, lpf_limit=4))
    common = dict(
        layer=layer,
        accelerator=accelerator,
        spatial_mapping=fractional,
        spatial_mapping_int=integer,
        loma_lpf_limit=4,
    )
    pairs = MainStage(
        [TemporalMappingGeneratorStage, CostModelStage], **common, temporal_mapping_type="uneven"
    ).run()
    assert [extra[0] for _, extra in pairs] == expected
    assert all(extra[1] is None for _, extra in pairs)
    for result, (tm, _) in pairs[:3]:
        assert same_numbers(result, evaluate(layer, accelerator, fractional, integer, tm))
    even = MainStage([LomaStage, Capture], **common, temporal_mapping_type="even").run()
    assert [extra[0] for _, extra in even] == list(
        temporal_mappings(layer, accelerator, fractional, lpf_limit=4, even=True)
    )
    assert LomaStage is TemporalMappingGeneratorStage
    with pytest.raises(InputError, match="temporal_mapping_type 'odd'"):
        TemporalMappingGeneratorStage([Capture], **common, temporal_mapping_type="odd")


def test_temporal_ordering_conversion_turns_the_user_ordering_into_one_mapping():
    # gemm_l1's mapping entry gives the ordering D1 *, D2 *, D0 * ("*" = the whole dim)
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        SumStage,
        WorkloadStage,
        SpatialMappingConversionStage,
    ]
    [(total, [(_, (_, (tm, _)))])] = MainStage(
        [
            *chain[:4],
            SpatialMappingConversionStage,
            TemporalOrderingConversionStage,
            CostModelStage,
        ],
        **gemm_kwargs("gemm_l1.yaml"),
    ).run()
    assert total.energy_total == pytest.approx(511349.76) and total.latency_total2 == 8191
    explicit = MainStage(
        [*chain, TemporalOrderingConversionStage, CostModelStage],
        **gemm_kwargs("gemm_l1.yaml"),
        temporal_ordering=[("D1", 16), ("D2", "all"), ("D0", "all")],
    ).run()
    assert explicit[0][0].energy_total == total.energy_total
    with pytest.raises(InputError, match="does not cover"):
        MainStage(
            [*chain, TemporalOrderingConversionStage, CostModelStage],
            **gemm_kwargs("gemm_l1.yaml"),
            temporal_ordering=[("D1", 16)],
        ).run()


def test_salsa_stage_matches_the_search_building_block():
    kwargs = gemm_kwargs("gemm_l1_l3.yaml", salsa_iteration_number=30, salsa_seed=3)
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        WorkloadStage,
        SpatialMappingGeneratorStage,
        SalsaStage,
        CostModelStage,
    ]
    [(result, (layer, (mapping, (tm, inner))))] = MainStage(chain, **kwargs).run()
    workload, accelerator = load_inputs(
        kwargs["workload"], kwargs["accelerator"], kwargs["mapping"]
    )
    options = SearchOptions(
        temporal_mapping_search_engine="salsa", salsa_iteration_number=30, salsa_seed=3
    )
    expected = evaluate_network(workload, accelerator, options)
    # the child runs once, with SALSA's best temporal mapping
    assert inner is None and same_numbers(result, expected.layers[0][1])


def test_cost_model_stage_is_the_leaf_and_attaches_layer_and_accelerator(tpu_layer):
    layer, accelerator = tpu_layer
    [mapping] = generate_spatial_mappings(layer, accelerator, nb_mappings=1)
    fractional, integer = convert(mapping, layer, accelerator)
    tm = next(temporal_mappings(layer, accelerator, fractional, lpf_limit=4))
    stage = CostModelStage(
        [],
        layer=layer,
        accelerator=accelerator,
        spatial_mapping=fractional,
        spatial_mapping_int=integer,
        temporal_mapping=tm,
        spatial_mapping_array=mapping,
    )
    assert stage.is_leaf()
    [(result, extra)] = list(stage)
    assert extra is None and isinstance(result, LayerCostResult) and isinstance(result, CostResult)
    assert result.layer is layer and result.accelerator is accelerator
    assert same_numbers(
        result, evaluate(layer, accelerator, fractional, integer, tm, spatial_mapping_array=mapping)
    )
    assert (
        "layer" not in result.to_dict()
        and CostResult.from_dict(result.to_dict()).to_dict() == result.to_dict()
    )
    assert pickle.loads(pickle.dumps(result)).layer.name == layer.name


# ===================================================================================================
# Reductions
# ===================================================================================================
TIES = [
    fake(5, 10, "a"),
    fake(4, 10, "b"),
    fake(4, 10, "c"),
    fake(3, 11, "d"),
    fake(6, 9, "e"),
    fake(3, 12, "f"),
]


@pytest.mark.parametrize(
    "stage, winner",
    [(MinimalLatencyStage, "e"), (MinimalEnergyStage, "d"), (MinimalEDPStage, "d")],
)
def test_reductions_pick_the_first_best(stage, winner):
    [(best, others)] = MainStage([stage, Emit], items=TIES).run()
    assert best.name == winner and others == []
    # ties: the first one received is kept
    [(best, _)] = MainStage(
        [stage, Emit], items=[fake(4, 10, "first"), fake(4, 10, "second")]
    ).run()
    assert best.name == "first"


def test_reduction_keeps_others_on_request_and_yields_nothing_for_nothing():
    [(best, others)] = MainStage(
        [MinimalEnergyStage, Emit], items=TIES, reduce_minimal_keep_others=True
    ).run()
    assert best.name == "d" and others == [(item, i) for i, item in enumerate(TIES)]
    assert MainStage([MinimalLatencyStage, Emit], items=[]).run() == []
    # EDP ties on the product: 4 x 10 == 5 x 8 -> the first stays
    [(best, _)] = MainStage(
        [MinimalEDPStage, Emit], items=[fake(4, 10, "p"), fake(5, 8, "q")]
    ).run()
    assert best.name == "p"


@pytest.fixture(scope="module")
def small_results():
    """Per-layer best results of SMALL on tpu_like through the Stage API, and the API's run."""
    [(total, per_layer)] = MainStage(
        [WorkloadParserStage, AcceleratorParserStage, SumStage, WorkloadStage, *SEARCH],
        **tpu_kwargs(),
    ).run()
    return total, per_layer


def test_sum_stage_adds_everything_in_order(small_results):
    total, per_layer = small_results
    results = [r for r, _ in per_layer]
    [(summed, received)] = MainStage([SumStage, Emit], items=results).run()
    assert received == [(r, i) for i, r in enumerate(results)]
    assert summed == sum_results(results)
    assert summed.energy_total == sum(r.energy_total for r in results) == total.energy_total
    assert summed.layer_ids == (0, 1, 2)
    network = evaluate_network(
        *load_inputs(SMALL, ref("hardware", "tpu_like.yaml"), ref("mapping", "tpu_like.yaml"))
    )
    assert total == network.total


def test_listify_stage():
    assert MainStage([ListifyStage, Emit], items=["a", "b"]).run() == [([("a", 0), ("b", 1)], None)]


# ===================================================================================================
# Saving
# ===================================================================================================
def test_complete_and_simple_save_write_per_layer_and_overall_files(small_results, tmp_path):
    total, per_layer = small_results
    results = [r for r, _ in per_layer]
    MainStage(
        [SimpleSaveStage, SumStage, CompleteSaveStage, SimpleSaveStage, Emit],
        items=results,
        dump_folder=str(tmp_path),
    ).run()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        [
            "conv_first_complete.json",
            "conv2_complete.json",
            "conv3_complete.json",
            "conv_first_simple.json",
            "conv2_simple.json",
            "conv3_simple.json",
            "overall_simple.json",
        ]
    )
    first = results[0]
    assert json.loads((tmp_path / "conv_first_complete.json").read_text()) == json.loads(
        json.dumps(complete_json(first, first.layer, first.accelerator))
    )
    assert json.loads((tmp_path / "overall_simple.json").read_text()) == {
        "energy": total.energy_total,
        "latency": total.latency_total2,
    }
    assert json.loads((tmp_path / "conv2_simple.json").read_text()) == results[1].simple_dict()
    MainStage([CompleteSaveStage, SumStage, Emit], items=results, dump_folder=str(tmp_path)).run()
    overall = json.loads((tmp_path / "overall_complete.json").read_text())
    assert overall["outputs"]["energy"]["energy_total"] == total.energy_total
    assert overall["inputs"]["layer"] == [0, 1, 2]


def test_save_stages_reject_other_objects(tmp_path):
    with pytest.raises(NotImplementedError):
        MainStage([SimpleSaveStage, Emit], items=["not a result"], dump_folder=str(tmp_path)).run()


def test_pickle_save_stage_writes_the_last_extra_info_list(small_results, tmp_path):
    _, per_layer = small_results
    results = [r for r, _ in per_layer]
    pairs = MainStage(
        [PickleSaveStage, SumStage, Emit], items=results, dump_folder=str(tmp_path)
    ).run()
    assert len(pairs) == 1  # passed through
    saved = pickle.loads((tmp_path / "list_of_cmes.pickle").read_bytes())
    assert [r.to_dict() for r in saved] == [r.to_dict() for r in results]
    custom = tmp_path / "sub" / "mine.pickle"
    MainStage([PickleSaveStage, SumStage, Emit], items=results, pickle_filename=str(custom)).run()
    assert len(pickle.loads(custom.read_bytes())) == 3


def test_dump_stage_pickles_all_pairs_to_the_formatted_name(tmp_path):
    pattern = str(tmp_path / "dump_{tag}.pickle")
    pairs = MainStage(
        [DumpStage, Emit], items=["a", "b"], tag="t1", dump_filename_pattern=pattern
    ).run()
    assert pickle.loads((tmp_path / "dump_t1.pickle").read_bytes()) == pairs == [("a", 0), ("b", 1)]


# ===================================================================================================
# Run-optimisation stages
# ===================================================================================================
def test_skip_if_dump_exists(tmp_path, capsys):
    pattern = str(tmp_path / "{tag}.pickle")
    chain = [SkipIfDumpExistsStage, DumpStage, Emit]
    assert MainStage(chain, items=["a"], tag="x", dump_filename_pattern=pattern).run() == [("a", 0)]
    assert (tmp_path / "x.pickle").exists()
    assert MainStage(chain, items=["a"], tag="x", dump_filename_pattern=pattern).run() == []
    assert f"Dump {tmp_path / 'x.pickle'} already existed. Skip!" in capsys.readouterr().out
    assert MainStage(chain, items=["a"], tag="y", dump_filename_pattern=pattern).run() == [("a", 0)]
    # ZigZag's newer spelling: the pattern in dump_folder
    (tmp_path / "z.json").write_text("{}")
    assert (
        MainStage(
            [SkipIfDumpExistsStage, Emit],
            items=["a"],
            tag="z",
            dump_folder=str(tmp_path / "{tag}.json"),
        ).run()
        == []
    )


def test_remove_extra_info_stage():
    assert MainStage([RemoveExtraInfoStage, Emit], items=["a", "b"]).run() == [
        ("a", None),
        ("b", None),
    ]


def test_cache_before_yield_runs_the_child_to_completion_first():
    def consume(chain):
        log = []
        for _, index in chain[0](chain[1:], items="ab", log=log).run():
            log.append(("consumed", index))
        return log

    assert consume([RemoveExtraInfoStage, Emit]) == [
        ("produced", 0),
        ("consumed", None),
        ("produced", 1),
        ("consumed", None),
    ]
    assert consume([CacheBeforeYieldStage, Emit]) == [
        ("produced", 0),
        ("produced", 1),
        ("consumed", 0),
        ("consumed", 1),
    ]


def test_multiprocessing_gives_the_serial_results_in_submission_order(small_results):
    total, per_layer = small_results
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        SumStage,
        MultiProcessingGatherStage,
        WorkloadStage,
        SlowFirstLayer,
        MultiProcessingSpawnStage,
        *SEARCH,
    ]
    [(parallel_total, parallel)] = MainStage(
        chain, **tpu_kwargs(), nb_multiprocessing_threads=3
    ).run()
    assert [r.layer_id for r, _ in parallel] == [0, 1, 2]  # layer 0 finished last
    assert all(same_numbers(a, b) for (a, _), (b, _) in zip(parallel, per_layer))
    assert parallel_total == total


def test_multiprocessing_reraises_a_worker_error():
    chain = [
        MultiProcessingGatherStage,
        GeneralParameterIteratorStage,
        MultiProcessingSpawnStage,
        Fail,
    ]
    with pytest.raises(RuntimeError, match="failing on purpose"):
        MainStage(
            chain, general_parameter_iterations={"x": [1, 2]}, nb_multiprocessing_threads=2
        ).run()


# ===================================================================================================
# Inter-layer data locality
# ===================================================================================================
def test_data_locality_stages_trim_the_hierarchy_like_the_api(tmp_path):
    seen = []
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        SumStage,
        SearchInterLayerDataLocalityStage,
        WorkloadStage,
        ExploitInterLayerDataLocalityStage,
        AcceleratorSpy,
        *SEARCH,
    ]
    [(total, per_layer)] = MainStage(chain, **tpu_kwargs(), seen=seen).run()
    kwargs = tpu_kwargs()
    energy, latency, api_cmes = get_hardware_performance_zigzag(
        kwargs["workload"],
        kwargs["accelerator"],
        kwargs["mapping"],
        exploit_data_locality=True,
        dump_folder=tmp_path,
        loma_show_progress_bar=False,
    )
    assert (total.energy_total, total.latency_total2) == (energy, latency)
    workload, accelerator = load_inputs(SMALL, kwargs["accelerator"], kwargs["mapping"])
    expected = accelerators_with_data_locality(workload, accelerator)
    assert len(seen) == 3
    for layer_id, trimmed in seen:
        assert trimmed.name == "tpu_like-removing-nouse-mem"
        assert [(m.name, m.operands) for m in trimmed.memories] == [
            (m.name, m.operands) for m in expected[layer_id].memories
        ]
    assert ("dram", ("I2",)) in [
        (m.name, m.operands) for m in seen[0][1].memories
    ]  # I1 and O stay on chip
    assert all(r.accelerator.name == "tpu_like-removing-nouse-mem" for r, _ in per_layer)
    assert SearchUnusedMemoryStage is SearchInterLayerDataLocalityStage
    assert RemoveUnusedMemoryStage is ExploitInterLayerDataLocalityStage


def test_search_data_locality_stage_passes_the_plan():
    workload, accelerator = load_inputs(
        SMALL, ref("hardware", "tpu_like.yaml"), ref("mapping", "tpu_like.yaml")
    )
    [(kwargs, _)] = MainStage(
        [SearchInterLayerDataLocalityStage, Capture], workload=workload, accelerator=accelerator
    ).run()
    plan = plan_data_locality(workload, accelerator)
    assert (
        kwargs["mem_update_list"] == plan.io_levels
        and kwargs["mem_update_weight"] == plan.weight_level
    )
    assert kwargs["workload"] is workload and kwargs["accelerator"] is accelerator
    [(top, _)] = MainStage(
        [SearchInterLayerDataLocalityStage, Capture],
        workload=workload,
        accelerator=accelerator,
        workload_data_always_from_top_mem=True,
    ).run()
    dram = 3
    assert top["mem_update_list"][0]["I1"] == dram and top["mem_update_list"][2]["O"] == dram
    assert top["mem_update_list"][1] == plan.io_levels[1]


# ===================================================================================================
# Plots
# ===================================================================================================
def test_plot_temporal_mappings_stage_saves_one_plot_per_layer(tmp_path):
    pattern = str(tmp_path / "tm_{layer}.png")
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        WorkloadStage,
        SpatialMappingGeneratorStage,
        PlotTemporalMappingsStage,
        TemporalMappingGeneratorStage,
        CostModelStage,
    ]
    pairs = MainStage(chain, **gemm_kwargs("gemm_l1_l3.yaml"), plot_filename_pattern=pattern).run()
    assert len(pairs) > 1  # every temporal mapping passes through
    assert (tmp_path / "tm_Layer0.png").stat().st_size > 0


def test_visualization_stage_writes_the_loop_nest_and_the_hierarchy(small_results, tmp_path):
    _, per_layer = small_results
    results = [r for r, _ in per_layer]
    MainStage([VisualizationStage, Emit], items=results, dump_folder=str(tmp_path)).run()
    text = (tmp_path / "loop_ordering.txt").read_text()
    assert [line for line in text.splitlines() if line.startswith("Loop ordering for")] == [
        "Loop ordering for conv/first",
        "Loop ordering for conv2",
        "Loop ordering for conv3",
    ]
    assert "parfor K in [0, 32):" in text and "  for OX in [0, " in text
    assert (tmp_path / "mem_hierarchy.png").stat().st_size > 0


# ===================================================================================================
# The examples of the tutorial docs/tutorials/custom-stage.md, as written there
# ===================================================================================================
class MemorySizeSweepStage(Stage):
    """Runs the rest of the pipeline once per size of `sweep_memory` (sizes in bits, access
    costs scaled with the square root of the size) and yields the lowest-energy result as
    `(result, (size, extra_info))`."""

    def __init__(self, list_of_callables, *, accelerator, sweep_memory, sweep_sizes, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator
        self.sweep_memory = sweep_memory
        self.sweep_sizes = sweep_sizes

    def resized(self, size):
        """A copy of the accelerator with `sweep_memory` resized to `size` bits."""
        memories = []
        for memory in self.accelerator.memories:
            if memory.name == self.sweep_memory:
                scale = (size / memory.size) ** 0.5
                memory = dataclasses.replace(
                    memory, size=size, r_cost=memory.r_cost * scale, w_cost=memory.w_cost * scale
                )
            memories.append(memory)
        name = f"{self.accelerator.name}-{self.sweep_memory}-{size}"
        return dataclasses.replace(self.accelerator, name=name, memories=tuple(memories))

    def run(self):
        best = None
        for size in self.sweep_sizes:
            child = self.list_of_callables[0](
                self.list_of_callables[1:], accelerator=self.resized(size), **self.kwargs
            )
            for result, extra_info in child.run():
                if best is None or result.energy_total < best[0].energy_total:
                    best = (result, (size, extra_info))
        if best is not None:  # a reduction yields after its loop
            yield best


class RecordStage(Stage):
    """Appends `(layer name, energy, latency)` of every result passing up to `record`."""

    def __init__(self, list_of_callables, *, record, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.record = record

    def run(self):
        for result, extra_info in self.substage().run():
            self.record.append((result.layer_name, result.energy_total, result.latency_total2))
            yield result, extra_info


def test_tutorial_examples_are_the_ones_tested_here():
    docs = (REPO / "docs" / "tutorials" / "custom-stage.md").read_text()
    import inspect

    for cls in (MemorySizeSweepStage, RecordStage):
        assert inspect.getsource(cls).strip() in docs


def test_custom_memory_size_sweep_stage():
    sizes = [2**13 * 8, 2**16 * 8, 2**21 * 8]
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        MemorySizeSweepStage,
        SumStage,
        WorkloadStage,
        MinimalEnergyStage,
        SpatialMappingGeneratorStage,
        MinimalEnergyStage,
        TemporalMappingGeneratorStage,
        CostModelStage,
    ]
    [(total, (size, per_layer))] = MainStage(
        chain, **tpu_kwargs(), sweep_memory="sram_2MB", sweep_sizes=sizes
    ).run()
    # the same sweep with the building blocks
    workload, accelerator = load_inputs(
        SMALL, ref("hardware", "tpu_like.yaml"), ref("mapping", "tpu_like.yaml")
    )
    energies = []
    for s in sizes:
        resized = MemorySizeSweepStage(
            [Capture], accelerator=accelerator, sweep_memory="sram_2MB", sweep_sizes=[]
        )
        network = evaluate_network(workload, resized.resized(s), SearchOptions(opt="energy"))
        energies.append(network.energy)
    assert len(set(energies)) == 3  # the sweep matters
    assert total.energy_total == min(energies) and size == sizes[energies.index(min(energies))]
    assert all(r.accelerator.name == f"tpu_like-sram_2MB-{size}" for r, _ in per_layer)
    with pytest.raises(
        InputError, match="MemorySizeSweepStage: needs the keyword argument 'sweep_sizes'"
    ):
        MainStage(chain, **tpu_kwargs(), sweep_memory="sram_2MB").run()


def test_custom_record_stage(small_results):
    _, per_layer = small_results
    record = []
    chain = [
        WorkloadParserStage,
        AcceleratorParserStage,
        SumStage,
        WorkloadStage,
        RecordStage,
        *SEARCH,
    ]
    MainStage(chain, **tpu_kwargs(), record=record).run()
    assert record == [(r.layer_name, r.energy_total, r.latency_total2) for r, _ in per_layer]
