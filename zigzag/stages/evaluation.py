"""The leaf stage: evaluate one (spatial, temporal) mapping with the cost model."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from zigzag.cost.model import evaluate
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.stages.stage import Stage
from zigzag.workload.layer import Layer


@dataclass(frozen=True)
class LayerCostResult(CostResult):
    """A :class:`CostResult` that also holds the ``layer`` and the ``accelerator`` it was evaluated
    on, as ZigZag's stages expect (``cme.layer``, ``cme.accelerator``). Neither takes part in
    equality or in :meth:`to_dict`."""

    layer: Layer | None = field(default=None, compare=False, repr=False)
    accelerator: Accelerator | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, result: CostResult, layer: Layer, accelerator: Accelerator) -> "LayerCostResult":
        values = {f.name: getattr(result, f.name) for f in dataclasses.fields(CostResult)}
        return cls(**values, layer=layer, accelerator=accelerator)

    def to_dict(self) -> dict:
        data = super().to_dict()
        del data["layer"], data["accelerator"]
        return data


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
        )
        yield LayerCostResult.of(result, self.layer, self.accelerator), None
