"""Stage pipelines search the way the API does: a reduction right above
``[TemporalMappingGeneratorStage, CostModelStage]`` runs the batched temporal search (nothing
between them can see the individual evaluations), and every other pipeline still runs stage by
stage, so a user's stage sees every layer, mapping and evaluation it saw before."""

from __future__ import annotations

import pytest

from support import reference_input
from zigzag.api import get_hardware_performance_zigzag
from zigzag.stages import *  # noqa: F403 - the API under test is the package namespace
from zigzag.stages import Stage


def conv(i: int, k: int, c: int, oy: int, fy: int) -> dict:
    return {
        "id": i,
        "name": f"conv{i}",
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, k, c, oy, oy, fy, fy],
        "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
        "operand_source": {"I": max(i - 1, 0), "W": i},
    }


#: four small layers in a chain, the last one identical to the second (searched once)
WORKLOAD = [
    conv(0, 32, 32, 8, 3),
    conv(1, 64, 32, 8, 1),
    conv(2, 32, 64, 4, 3),
    conv(3, 64, 32, 8, 1),
]
ACCELERATOR = reference_input("hardware", "tpu_like.yaml")
MAPPING = reference_input("mapping", "tpu_like.yaml")


def run_pipeline(inner: list, reduction=MinimalLatencyStage, **kwargs) -> list:
    """The README's search pipeline with ``inner`` below the temporal-mapping reduction."""
    return MainStage(
        [
            WorkloadParserStage,
            AcceleratorParserStage,
            SumStage,
            WorkloadStage,
            MinimalLatencyStage,
            SpatialMappingGeneratorStage,
            reduction,
            *inner,
        ],
        workload=WORKLOAD,
        accelerator=ACCELERATOR,
        mapping=MAPPING,
        loma_lpf_limit=4,
        **kwargs,
    ).run()


@pytest.fixture
def evaluations(monkeypatch) -> list:
    """Every CostModelStage evaluation run, as (layer name, energy)."""
    seen = []
    original = CostModelStage.run

    def counted(stage):
        for result, extra in original(stage):
            seen.append((stage.layer.name, result.energy_total))
            yield result, extra

    monkeypatch.setattr(CostModelStage, "run", counted)
    return seen


class RecordEvaluations(Stage):
    """A user's pass-through stage recording the energy of every result it sees."""

    def __init__(self, list_of_callables, *, record, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.record = record

    def run(self):
        for result, extra in self.substage().run():
            self.record.append(result.energy_total)
            yield result, extra


class MyCostModelStage(CostModelStage):
    """A user's subclass of the cost-model stage."""


def per_layer(cmes) -> list[tuple[str, float, float]]:
    _, layers = cmes[0]
    return [(result.layer_name, result.energy_total, result.latency_total2) for result, _ in layers]


def test_documented_pipeline_searches_like_the_api_without_a_stage_per_evaluation(evaluations):
    cmes = run_pipeline([TemporalMappingGeneratorStage, CostModelStage])
    assert (
        evaluations == []
    )  # the batched search ran instead of one CostModelStage per temporal mapping
    _, _, api = get_hardware_performance_zigzag(
        WORKLOAD, ACCELERATOR, MAPPING, opt="latency", lpf_limit=4
    )
    assert per_layer(cmes) == per_layer(api)
    total, layers = cmes[0]
    _, api_layers = api[0]
    for (ours, _), (theirs, _) in zip(layers, api_layers):
        assert ours.to_dict() == theirs.to_dict()


@pytest.mark.parametrize("reduction", [MinimalEnergyStage, MinimalEDPStage])
def test_fast_path_equals_the_stage_by_stage_search(reduction, monkeypatch):
    fast = run_pipeline([TemporalMappingGeneratorStage, CostModelStage], reduction)
    monkeypatch.setenv("ZIGZAG_EVAL", "scalar")
    slow = run_pipeline([TemporalMappingGeneratorStage, CostModelStage], reduction)
    assert [r.to_dict() for r, _ in fast[0][1]] == [r.to_dict() for r, _ in slow[0][1]]


def test_a_user_stage_under_the_reduction_sees_every_evaluation(evaluations):
    record = []
    cmes = run_pipeline(
        [RecordEvaluations, TemporalMappingGeneratorStage, CostModelStage], record=record
    )
    assert len(record) == len(evaluations) > 100
    assert per_layer(cmes) == per_layer(
        run_pipeline([TemporalMappingGeneratorStage, CostModelStage])
    )


def test_a_subclassed_cost_model_stage_and_keep_others_run_stage_by_stage(evaluations):
    run_pipeline([TemporalMappingGeneratorStage, MyCostModelStage])
    assert len(evaluations) > 100
    count = len(evaluations)
    cmes = MainStage(
        [
            WorkloadParserStage,
            AcceleratorParserStage,
            WorkloadStage,
            SpatialMappingGeneratorStage,
            MinimalLatencyStage,
            TemporalMappingGeneratorStage,
            CostModelStage,
        ],
        workload=WORKLOAD,
        accelerator=ACCELERATOR,
        mapping=MAPPING,
        loma_lpf_limit=4,
        reduce_minimal_keep_others=True,
    ).run()
    assert len(evaluations) == 2 * count  # both runs evaluate every temporal mapping
    for _, (_layer, (_spatial_mapping, per_temporal_mapping)) in cmes:
        assert len(per_temporal_mapping) > 1  # every temporal mapping's result, as before
