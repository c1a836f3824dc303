"""The leaf stage: evaluate one (spatial, temporal) mapping with the cost model."""

from __future__ import annotations

from zigzag.cost.layer_result import LayerCostResult
from zigzag.cost.model import evaluate
from zigzag.stages.stage import Stage


class CostModelStage(Stage):
    """Evaluates the mapping given by its kwargs; yields ``(LayerCostResult, None)``.

    ``spatial_mapping_array`` (optional) is only recorded in the result.
    """

    def __init__(
        self,
        list_of_callables,
        *,
        accelerator,
        layer,
        spatial_mapping,
        spatial_mapping_int,
        temporal_mapping,
        access_same_data_considered_as_no_access=True,
        spatial_mapping_array=None,
        latency_model="zigzag",
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator
        self.layer = layer
        self.spatial_mapping = spatial_mapping
        self.spatial_mapping_int = spatial_mapping_int
        self.temporal_mapping = temporal_mapping
        self.access_same_data_considered_as_no_access = access_same_data_considered_as_no_access
        self.spatial_mapping_array = spatial_mapping_array
        # WorkloadStage resolves auto for its workload; unresolved, auto is ZigZag's model
        self.latency_model = "zigzag" if latency_model == "auto" else latency_model

    def is_leaf(self) -> bool:
        return True

    def run(self):
        result = evaluate(
            self.layer,
            self.accelerator,
            self.spatial_mapping,
            self.spatial_mapping_int,
            self.temporal_mapping,
            access_same_data_considered_as_no_access=self.access_same_data_considered_as_no_access,
            spatial_mapping_array=self.spatial_mapping_array,
            latency_model=self.latency_model,
        )
        flag = self.access_same_data_considered_as_no_access
        yield (
            LayerCostResult.of(
                result,
                self.layer,
                self.accelerator,
                access_same_data_considered_as_no_access=flag,
                latency_model=self.latency_model,
            ),
            None,
        )
